"""export_saved_model.py's export of a multiple-choice (RACE) head: `multiple_choice/<v>`.

`serve_text(passage, question, options)` → the choice (`choice`, `letter`) and the softmax over
the options (`probabilities`), with the features run_race.py builds (`tasks.race.serving`), and
`serving_default` over their ids [B, options, S]. The head scores each (passage, option) row on
its own, so its TFLite file (`multiple_choice.<kind>.tflite`) is that row scorer: ids
[rows, S] → `score` [rows]; a caller packs each question's options as rows and takes the
softmax over them.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.models import AlbertClassifier
from albert_tf.serving import reference
from albert_tf.serving.head_export import HeadExport, numpy_outputs
from albert_tf.tasks.race.serving import RaceServing

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


def export_head(cls, inputs) -> HeadExport:
    """`AlbertMultipleChoice.SERVING`: the loaded head's multiple-choice export (the module)."""
    choices = inputs.load(cls(inputs.config))
    scorer = scorer_of(choices, inputs.config)
    length = inputs.max_seq_length
    serving = RaceServing(scorer, length, getattr(inputs, "max_qa_length", 128),
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
