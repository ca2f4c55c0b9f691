"""Exports a pretrained ALBERT (original TF1 checkpoint or ours) as SavedModels for TF Serving.

  python export_saved_model.py --albert_config_file=albert_config.json \
      --init_checkpoint=model.ckpt-best --spm_model_file=30k-clean.model --export_dir=exports

writes exports/encoder/<version> (TF-Hub encoder signatures; `mlm`/`sop`/`tokens` when the
checkpoint has pretraining heads) and exports/preprocessing/<version> (raw text in). Each is
checked in a fresh process before its version folder appears. A WordPiece model (the Chinese
ALBERTs) takes `--vocab_file=vocab_chinese.txt` instead of `--spm_model_file`.
`--tflite=float32,float16,dynamic_int8` (any subset) also writes exports/tflite/encoder.<kind>.tflite
(TFLite builtin ops only; inputs int32 [1, max_seq_length], resizable batch) with the tokenizer
file and encoder.json beside them.
"""

import json

from absl import flags, logging

from albert_tf import cli

cli.define_flags(__name__, """
    albert_config_file init_checkpoint spm_model_file vocab_file export_dir max_seq_length do_lower_case
    version verify init_from_group0 tflite""",
                 defaults={"max_seq_length": 128, "do_lower_case": True, "verify": True,
                           "init_from_group0": False})
FLAGS = flags.FLAGS


def main(argv):
    del argv
    from albert_tf.config import AlbertConfig
    from albert_tf.errors import UsageError
    from albert_tf.export.pipeline import export_pretrained
    from albert_tf.export.saved_model import resolve_path

    if not FLAGS["verbosity"].present:  # TensorFlow's own INFO lines while saving
        logging.set_verbosity(logging.WARNING)
    for name in ("albert_config_file", "init_checkpoint", "export_dir"):
        if not FLAGS[name].value.strip():
            raise UsageError(f"--{name} must not be empty")
    config = AlbertConfig.from_json_file(resolve_path(FLAGS.albert_config_file))
    result = export_pretrained(config, resolve_path(FLAGS.init_checkpoint),
                               resolve_path(FLAGS.export_dir), resolve_path(FLAGS.spm_model_file),
                               FLAGS.max_seq_length, FLAGS.do_lower_case, FLAGS.version,
                               FLAGS.verify, FLAGS.init_from_group0,
                               vocab_file=resolve_path(FLAGS.vocab_file or None),
                               tflite=FLAGS.tflite)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    cli.run(main, required=["albert_config_file", "init_checkpoint", "export_dir"])
