"""Exports a pretrained ALBERT (original TF1 checkpoint or ours) as SavedModels for TF Serving.

  python export_saved_model.py --albert_config_file=albert_config.json \
      --init_checkpoint=model.ckpt-best --spm_model_file=30k-clean.model --export_dir=exports

writes exports/encoder/<version> (TF-Hub encoder signatures; `mlm`/`sop`/`tokens` when the
checkpoint has pretraining heads) and exports/preprocessing/<version> (raw text in). Each is
checked in a fresh process before its version folder appears.
"""

from albert_tf import cli

cli.quiet_tensorflow()

import json  # noqa: E402

from absl import flags, logging  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("albert_config_file", None, "The model's albert_config.json.")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint prefix or folder (TF1 names or ours).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model; adds the preprocessing export.")
flags.DEFINE_string("export_dir", None, "Base folder; models go to <export_dir>/<name>/<version>.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length the preprocessing export packs to.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case text before SentencePiece (uncased models).")
flags.DEFINE_integer("version", None, "Version folder name; default: one past the highest.")
flags.DEFINE_bool("verify", True, "Reload each export in a fresh process and compare outputs.")
flags.DEFINE_bool("init_from_group0", False, "Fill missing groups from group_0 of the checkpoint.")


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
                               FLAGS.verify, FLAGS.init_from_group0)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    cli.run(main, required=["albert_config_file", "init_checkpoint", "export_dir"])
