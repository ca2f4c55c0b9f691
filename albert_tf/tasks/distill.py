"""`--distill_from=<teacher folder>` on run_classifier.py (and `TextClassifier.fit(distill_from=)`)
and run_ner.py (each tagged word's first piece distilled): the student (this run's model, from
--init_checkpoint, by default the teacher's own weights, run with --num_hidden_layers passes)
learns from the teacher's soft labels and the true labels at once (`training.distillation`).
The teacher is loaded next to the student, frozen, and run in the same train step: its logits
are never written anywhere. It must be a trained model of the same head, labels (in the same
order) and vocabulary: the student's folder then holds the teacher's labels and is
self-contained like any other run's.
"""

from __future__ import annotations

import dataclasses
import filecmp

import tensorflow as tf
from absl import logging

from albert_tf.errors import UsageError
from albert_tf.models import AlbertClassifier, AlbertTokenClassifier
from albert_tf.training.distillation import distillation_loss, soft_label_loss
from albert_tf.weights.loading import load
from albert_tf.weights.run_inputs import resolve_inputs


class DistillationError(UsageError):
    """A teacher that cannot teach this student (the message names --distill_from)."""


def _tokenizer(inputs) -> str | None:
    return inputs.spm_model_file or inputs.vocab_file


MODELS = {"classifier": AlbertClassifier, "token_classifier": AlbertTokenClassifier}


def check_teacher(task, labels, head: str = "classifier"):
    """The `RunInputs` of the teacher of `task` (a classification or NER task with
    `--distill_from`; `labels`: the run's, in id order), checked before anything is written:
    each way it cannot teach this student is one error naming --distill_from."""
    cfg = task.config
    flag = f"--distill_from={cfg.distill_from}"
    try:
        teacher = resolve_inputs(init_checkpoint=cfg.distill_from, head=head)
    except UsageError as error:
        raise DistillationError(f"{flag}: {error}") from None
    if teacher.source is None or head not in teacher.heads:
        word = head.replace("_", " ")
        raise DistillationError(f"{flag} holds no trained {word} head (heads: "
                                f"{', '.join(teacher.heads) or 'none'}): the teacher is a "
                                f"fine-tuned {word}'s folder")
    names, where = teacher.model_labels()
    mine = list(labels)
    if names is None or [n.casefold() for n in names] != [n.casefold() for n in mine]:
        raise DistillationError(f"{flag} has the labels {names} ({where or 'not named'}) but this "
                                f"run's are {mine}: a student learns its teacher's labels, in "
                                "the teacher's order")
    theirs, ours = _tokenizer(teacher), cfg.spm_model_file or cfg.vocab_file
    same = theirs is not None and ours is not None and filecmp.cmp(theirs, ours, shallow=False)
    if not same or teacher.albert_config.vocab_size != task.albert_config.vocab_size:
        raise DistillationError(
            f"{flag}'s vocabulary ({theirs}, vocab_size {teacher.albert_config.vocab_size}) "
            f"differs from this run's ({ours}, vocab_size {task.albert_config.vocab_size}): "
            "the teacher must read the same ids")
    return teacher


def load_teacher(teacher):
    """The teacher's model (`check_teacher`'s inputs), weights loaded, frozen."""
    model = MODELS[teacher.head](teacher.albert_config, len(teacher.model_labels()[0]))
    logging.info("teacher: %s", load(model, teacher.source, require_head=True))
    model.trainable = False
    return model


def distilled(objective, teacher, temperature: float, alpha: float):
    """`objective` whose loss is the distillation loss: the teacher runs on the same features
    in the step; the task's own loss (the true labels') is the hard term, its metrics kept."""
    hard_loss_fn = objective.loss_fn

    def loss_fn(outputs, features):
        hard, metrics = hard_loss_fn(outputs, features)
        teacher_logits = teacher(features, training=False)["logits"]
        return distillation_loss(outputs["logits"], teacher_logits, hard, temperature,
                                 alpha), metrics

    def tagged_loss_fn(outputs, features, sums):
        """Per tagged word (label_ids >= 0), as the task's own loss: this batch's share of the
        mean over the global batch's tagged words."""
        hard, metrics = hard_loss_fn(outputs, features, sums)
        teacher_logits = teacher(features, training=False)["logits"]
        tagged = tf.cast(tf.greater_equal(features["label_ids"], 0), tf.float32)
        soft = tf.reduce_sum(soft_label_loss(outputs["logits"], teacher_logits, temperature)
                             * tagged) / (sums["tags"] + 1e-5)
        return float(alpha) * soft + (1.0 - float(alpha)) * hard, metrics

    return dataclasses.replace(
        objective, loss_fn=tagged_loss_fn if objective.loss_takes_totals else loss_fn)
