"""Exports what a weight source holds as SavedModels for TF Serving and TF Hub.

  python export_saved_model.py --init_checkpoint=<HF folder | keras-hub preset | TF-Hub module |
      TF1 checkpoint | output_dir> --export_dir=exports

writes exports/encoder/<version> (TF-Hub encoder signatures; `mlm`/`sop` when the source has
pretraining heads), exports/preprocessing/<version> (raw text in), and one export per head the
source holds: exports/classifier/<version> (run_classifier's `serving_default` + `serve_text`),
exports/squad/<version> (run_squad's span model), exports/token_classifier/<version>
(run_ner's, `serve_text` giving tags per word) or exports/multiple_choice/<version> (a RACE
head: `serve_text(passage, question, options)` gives the choice and its probabilities, with
run_race's features: the lengths its run recorded in the folder, unless --max_seq_length or
--max_qa_length is given). A head it cannot export is an error, not left out. `--albert_config_file` and `--spm_model_file`
may be left out when the source holds them. Each export is checked in a fresh process before
its version folder appears. A WordPiece model (the Chinese ALBERTs) takes
`--vocab_file=vocab_chinese.txt` instead of `--spm_model_file`.
`--tflite=float32,float16,dynamic_int8` (any subset) also writes exports/tflite/<name>.<kind>.tflite
for the encoder and each head exported (TFLite builtin ops only; inputs int32 [1, max_seq_length],
resizable batch), with the tokenizer file and <name>.json beside them.
`--onnx=float32,dynamic_int8` and `--openvino=float32,dynamic_int8` also write
exports/<name>/onnx/<version>/<name>.<kind>.onnx and exports/<name>/openvino/<version>/
<name>.<kind>.xml/.bin (the same ids-in function as the TFLite files; shared weights stored
once; pip install albert-tf[onnx] / albert-tf[openvino]), with <name>.json beside them.
`--serving_xla` XLA-compiles the encoder's id signatures with the weights as constants (faster
on CPU, twice the size; TF Serving then needs --xla_cpu_compilation_enabled=true).
Without tensorflow-text the raw-text parts are left out (one notice), and an explicit
`--spm_model_file`/`--vocab_file` is refused (pip install tensorflow-text).
"""

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN, export_gist, finish, start
from albert_tf.errors import UsageError

FLAGS = """
    albert_config_file init_checkpoint spm_model_file vocab_file export_dir max_seq_length
    do_lower_case version verify init_from_group0 tflite onnx openvino serving_xla num_hidden_layers
    max_qa_length"""


def main(argv):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.source_export import export_source

    del argv
    values = flags.FLAGS
    if not values["verbosity"].present:  # TensorFlow's own INFO lines while saving
        logging.set_verbosity(logging.WARNING)
    for name in ("init_checkpoint", "export_dir"):
        if not values[name].value.strip():
            raise UsageError(f"--{name} must not be empty")
    result = export_source(values.init_checkpoint, values.export_dir,
                           values.albert_config_file or None, values.spm_model_file or None,
                           values.vocab_file or None, values.max_seq_length,
                           values.do_lower_case, values.version, values.verify,
                           values.init_from_group0, tflite=values.tflite,
                           onnx=values.onnx, openvino=values.openvino,
                           serving_xla=values.serving_xla,
                           num_hidden_layers=values.num_hidden_layers,
                           max_qa_length=values.max_qa_length
                           if values["max_qa_length"].present else None)
    finish(result, export_gist(result, values.export_dir), values.json)


def run(argv=None):
    """`albert-export-saved-model` / `python export_saved_model.py`."""
    cli.define_flags(MAIN, FLAGS + " json",
                     defaults={"max_seq_length": None, "do_lower_case": None, "verify": True,
                               "init_from_group0": False, "serving_xla": False,
                               "max_qa_length": 128, "json": False})
    values = flags.FLAGS
    values["max_seq_length"].help += (" Default: a keras-hub preset's preprocessor length, "
                                      "else 512 or the model's max_position_embeddings if "
                                      "smaller.")
    values["do_lower_case"].help += " Default: the source's tokenizer setting, else true."
    start(__doc__, main, ["init_checkpoint", "export_dir"], argv)
