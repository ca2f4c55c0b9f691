"""Exports a pretrained ALBERT (original TF1 checkpoint or ours) as SavedModels for TF Serving.

  python export_saved_model.py --albert_config_file=albert_config.json \
      --init_checkpoint=model.ckpt-best --spm_model_file=30k-clean.model --export_dir=exports

writes exports/encoder/<version> (TF-Hub encoder signatures; `mlm`/`sop`/`tokens` when the
checkpoint has pretraining heads) and exports/preprocessing/<version> (raw text in).
"""

import json

from absl import app, flags

from albert_tf.config import AlbertConfig
from albert_tf.export.pipeline import export_pretrained

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
    config = AlbertConfig.from_json_file(FLAGS.albert_config_file)
    result = export_pretrained(config, FLAGS.init_checkpoint, FLAGS.export_dir, FLAGS.spm_model_file,
                               FLAGS.max_seq_length, FLAGS.do_lower_case, FLAGS.version,
                               FLAGS.verify, FLAGS.init_from_group0)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    flags.mark_flags_as_required(["albert_config_file", "init_checkpoint", "export_dir"])
    app.run(main)
