"""Exports a checkpoint written by run_pretraining.py as an original-style TF1 checkpoint
(`bert/*`, `cls/*`, `global_step`; no optimizer slots)."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from absl import app, flags, logging  # noqa: E402

from albert_tf.training.checkpoints import export_tf1_checkpoint  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("albert_directory", None, "A run_pretraining output_dir (it holds "
                    "albert_config.json and the checkpoints).")
flags.DEFINE_string("checkpoint_name", None, "Checkpoint prefix inside albert_directory, e.g. "
                    "model.ckpt-best; unset or 'latest' uses the latest checkpoint.")
flags.DEFINE_bool("do_lower_case", True, "Accepted for compatibility; unused.")
flags.DEFINE_string("export_path", None, "Prefix of the TF1 checkpoint to write.")


def main(_):
    path = export_tf1_checkpoint(FLAGS.albert_directory, FLAGS.export_path, FLAGS.checkpoint_name)
    logging.info("exported %s", path)


if __name__ == "__main__":
    flags.mark_flags_as_required(["albert_directory", "export_path"])
    app.run(main)
