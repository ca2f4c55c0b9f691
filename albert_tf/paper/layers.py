"""Figure 1 of the ALBERT paper for any checkpoint:

    python -m albert_tf.paper.layers --init_checkpoint=PATH --input_file=TEXT [--output_dir=DIR]

Per layer, the mean L2 distance and cosine similarity between the layer's input and output
embeddings (`smoothness` says exactly how). The checkpoint may be any weight source (a TF1
checkpoint or release folder, a run's output_dir, a Hugging Face or keras-hub folder);
`--input_file` is text (one sentence a line, packed into windows; the tokenizer comes from the
flags or the source) or pretraining TFRecords. Writes `layer_smoothness.json` and
`layer_smoothness.png` (the PNG needs matplotlib: `pip install -e ".[paper]"`; without it the
JSON is written and the PNG skipped with a notice).
"""

from __future__ import annotations

import json
import os

from absl import flags

from albert_tf import cli
from albert_tf.io_utils import write_text_atomically
from albert_tf.paper import plots

JSON_NAME = "layer_smoothness.json"
PNG_NAME = "layer_smoothness.png"
FLAGS = flags.FLAGS


def define_flags() -> None:
    cli.define_flags(__name__, """init_checkpoint albert_config_file input_file spm_model_file
        vocab_file do_lower_case output_dir max_seq_length max_predictions_per_seq""",
                     defaults={"output_dir": "layer_smoothness", "max_seq_length": 128,
                               "do_lower_case": True, "max_predictions_per_seq": 20})
    flags.DEFINE_integer("max_examples", 256, "Sequences measured (the first ones of the input).")
    flags.DEFINE_integer("batch_size", 32, "Sequences per forward pass.")


def write_result(output_dir: str, result: dict, label: str, printer=print) -> dict:
    """Writes the JSON, and the PNG when matplotlib is there; returns what was written."""
    os.makedirs(output_dir, exist_ok=True)
    json_path = os.path.join(output_dir, JSON_NAME)
    png = plots.figure1({label: result}, os.path.join(output_dir, PNG_NAME), printer)
    write_text_atomically(json_path, json.dumps(
        {"model": label, **result, "figures": [png] if png else []}, indent=1) + "\n")
    return {"json": json_path, "png": png}


def main(argv) -> None:
    from albert_tf.paper import transitions  # TensorFlow: keeps --help and flag errors fast

    del argv
    encoder, tokenizer_files = transitions.load_encoder(
        FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file, FLAGS.vocab_file)
    length = min(FLAGS.max_seq_length, encoder.config.max_position_embeddings)
    batches = transitions.input_batches(
        FLAGS.input_file, length, FLAGS.max_examples, FLAGS.batch_size, tokenizer_files,
        FLAGS.do_lower_case, FLAGS.max_predictions_per_seq)
    result = transitions.measure(encoder, batches)
    written = write_result(FLAGS.output_dir, result, FLAGS.init_checkpoint)
    print(f"wrote {written['json']}" + (f" and {written['png']}" if written["png"] else ""))


if __name__ == "__main__":
    define_flags()
    cli.run(main, required=["init_checkpoint", "input_file"])
