"""export_saved_model.py's export of a multiple-choice (RACE) head: `multiple_choice/<v>`.

`serve_text(passage, question, options)` → the choice (`choice`, `letter`) and the softmax over
the options (`probabilities`), with the features run_race.py builds (`tasks.race.serving`), and
`serving_default` over their ids [B, options, S]. The head scores each (passage, option) row on
its own, so its TFLite file (`multiple_choice.<kind>.tflite`) is that row scorer: ids
[rows, S] → `score` [rows]; a caller packs each question's options as rows and takes the
softmax over them.

The lengths are run_race.py's: `--max_seq_length` / `--max_qa_length` when given, else what its
run recorded in the folder (`model_folder.LENGTHS_FILE`; the length reaches here through the
source), else the export's default length and 128 pieces, at most that length less 3.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_tf.models import AlbertClassifier
from albert_tf.serving import reference
from albert_tf.serving.head_export import HeadExport, numpy_outputs
from albert_tf.tasks.race.serving import RaceServing
from albert_tf.weights.model_folder import read_lengths

NAME = "multiple_choice"
# What the verification sends serve_text: a cloze question, a ragged row (3 options of 4).
SAMPLE = (["The fox ran to the river. It drank and slept under a tree.", "ALBERT shares layers."],
          ["The fox slept under a  _  .", "What does ALBERT share?"],
          [["tree", "river", "house", "car"], ["its layers", "nothing", "weights", ""]])


def scorer_of(model, config) -> AlbertClassifier:
    """A one-output classifier over the same encoder and head weights: one (passage, option)
    row's score, what the head computes for each row before its softmax."""
    scorer = AlbertClassifier(config, 1, encoder=model.encoder, name="multiple_choice_scorer")
    scorer.output_weights.assign(model.output_weights)
    scorer.output_bias.assign(model.output_bias)
    return scorer


def tflite_score(scorer):
    """The TFLite file's call: ids [rows, S] → {"score": [rows]}."""
    def call(input_word_ids, input_mask, input_type_ids):
        logits = scorer({"input_ids": input_word_ids, "input_mask": input_mask,
                         "segment_ids": input_type_ids}, training=False)["logits"]
        return {"score": tf.reshape(logits, [-1])}
    return call


def qa_length(inputs) -> int:
    """The question+option pieces: the one given, else the folder's record, else 128; a length
    not given is cut to fit `inputs.max_seq_length` ([CLS], [SEP], [SEP] beside it)."""
    if inputs.max_qa_length is not None:
        return int(inputs.max_qa_length)
    source = inputs.source
    prefix = source.checkpoint_prefix or os.fspath(source.path)
    folder = os.fspath(source.path) if os.path.isdir(os.fspath(source.path)) else \
        os.path.dirname(prefix)
    recorded = read_lengths(folder).get("max_qa_length", 128)
    return max(1, min(int(recorded), int(inputs.max_seq_length) - 3))


def export_head(cls, inputs) -> HeadExport:
    """`AlbertMultipleChoice.SERVING`: the loaded head's multiple-choice export (the module)."""
    choices = inputs.load(cls(inputs.config))
    scorer = scorer_of(choices, inputs.config)
    length = inputs.max_seq_length
    serving = RaceServing(scorer, length, qa_length(inputs),
                          inputs.spm_model_file, inputs.do_lower_case, inputs.vocab_file,
                          inputs.albert_text_rules)
    root, signatures = serving.module()

    def check():  # (inputs, the Keras model's outputs) for the fresh-process comparison
        ids, mask, types_, _ = reference.sample_inputs(inputs.config, batch=8, length=length)
        ids_call = {"input_ids": ids.reshape(2, 4, -1), "input_mask": mask.reshape(2, 4, -1),
                    "segment_ids": types_.reshape(2, 4, -1)}
        logits = choices({k: tf.constant(v) for k, v in ids_call.items()})["logits"]
        calls = {"serving_default": ids_call}
        expected = {"serving_default": {
            "logits": logits.numpy(), "probabilities": tf.nn.softmax(logits).numpy(),
            "choice": np.argmax(logits.numpy(), -1).astype(np.int32)}}
        if "serve_text" in signatures:
            text = {"passage": np.array(SAMPLE[0]), "question": np.array(SAMPLE[1]),
                    "options": np.array(SAMPLE[2])}
            calls["serve_text"] = text
            expected["serve_text"] = numpy_outputs(serving.serve_text(
                *(tf.constant(text[k]) for k in ("passage", "question", "options"))))
        return calls, expected

    return HeadExport(NAME, root, signatures, check, scorer,
                      {"name": NAME, "outputs": ("score",), "call": tflite_score(scorer)})
