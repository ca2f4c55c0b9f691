"""export_saved_model.py's export of a multiple-choice (RACE) head: a pair scorer.

The head scores each (context, choice) pair on its own and the task takes a softmax over a
question's choices, so one pair's score is the whole model: it is served as a one-output
classifier (`classification.export`) over the same encoder and weights, `serve_pair(text_a,
text_b)` → `score`; a caller scores each choice and takes the highest.
"""

from __future__ import annotations

from albert_tf.models import AlbertClassifier
from albert_tf.serving.head_export import HeadExport
from albert_tf.tasks.classification.export import classifier_export


def export_head(cls, inputs) -> HeadExport:
    """`AlbertMultipleChoice.SERVING`: the loaded head as a pair scorer (see the module)."""
    choices = inputs.load(cls(inputs.config))
    scorer = AlbertClassifier(inputs.config, 1, encoder=choices.encoder,
                              name="multiple_choice_scorer")
    scorer.output_weights.assign(choices.output_weights)
    scorer.output_bias.assign(choices.output_bias)
    export = classifier_export(scorer, inputs, "multiple_choice")
    # The head has no TFLite form of its own (no TFLITE_OUTPUTS).
    export.tflite_model, export.tflite_args = None, {}
    return export
