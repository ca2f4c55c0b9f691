"""Exports a checkpoint written by run_pretraining.py as an original-style TF1 checkpoint
(`bert/*`, `cls/*`, `global_step`; no optimizer slots)."""

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN, start


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.serving.saved_model import resolve_path
    from albert_tf.weights.our_checkpoints import export_tf1_checkpoint

    values = flags.FLAGS
    path = export_tf1_checkpoint(values.albert_directory, resolve_path(values.export_path),
                                 values.checkpoint_name)
    logging.info("exported %s", path)


def run(argv=None):
    """`albert-export-checkpoints` / `python export_checkpoints.py`."""
    cli.define_flags(MAIN, "albert_directory checkpoint_name do_lower_case export_path",
                     defaults={"do_lower_case": True})
    start(__doc__, main, ["albert_directory", "export_path"], argv)
