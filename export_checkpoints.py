"""Exports a checkpoint written by run_pretraining.py as an original-style TF1 checkpoint
(`bert/*`, `cls/*`, `global_step`; no optimizer slots)."""

from albert_tf import cli

cli.quiet_tensorflow()

import os  # noqa: E402

from absl import flags, logging  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("albert_directory", None, "A run_pretraining output_dir (it holds "
                    "albert_config.json and the checkpoints).")
flags.DEFINE_string("checkpoint_name", None, "Checkpoint prefix inside albert_directory, e.g. "
                    "model.ckpt-best; unset or 'latest' uses the latest checkpoint.")
flags.DEFINE_bool("do_lower_case", True, "Accepted for compatibility; unused.")
flags.DEFINE_string("export_path", None, "Prefix of the TF1 checkpoint to write.")


def _checked_flags():
    """(albert_directory, export_path) as absolute paths, refusing what cannot work."""
    from albert_tf.errors import UsageError
    from albert_tf.export.saved_model import resolve_path

    for name in ("albert_directory", "export_path"):
        if not FLAGS[name].value.strip():
            raise UsageError(f"--{name} must not be empty")
    directory = resolve_path(FLAGS.albert_directory)
    config_file = os.path.join(directory, "albert_config.json")
    if "://" not in directory and not os.path.isfile(config_file):
        raise UsageError(f"--albert_directory={FLAGS.albert_directory}: no albert_config.json "
                         "there (it must be a run_pretraining output_dir)")
    return directory, resolve_path(FLAGS.export_path)


def main(_):
    from albert_tf.checkpoint import CheckpointError
    from albert_tf.config import AlbertConfig
    from albert_tf.export.pipeline import restore_mismatch
    from albert_tf.models import AlbertPretrainer
    from albert_tf.training.checkpoints import export_tf1_checkpoint, resolve_checkpoint

    directory, export_path = _checked_flags()
    name = FLAGS.checkpoint_name
    prefix = resolve_checkpoint(directory if name in (None, "", "latest")
                                else os.path.join(directory, name))
    try:
        path = export_tf1_checkpoint(directory, export_path, prefix)
    except ValueError as error:
        if isinstance(error, CheckpointError):
            raise
        if "already has TF1 names" in str(error):
            raise CheckpointError(str(error)) from None
        model = AlbertPretrainer(AlbertConfig.from_json_file(os.path.join(directory, "albert_config.json")))
        mismatch = restore_mismatch(error, model, prefix)
        if mismatch is None:
            raise
        raise mismatch from None
    logging.info("exported %s", path)


if __name__ == "__main__":
    cli.run(main, required=["albert_directory", "export_path"])
