"""Pretrains ALBERT (masked LM + sentence order) on the original's TFRecords; same flags as
the original's run_pretraining.py, plus the TF2 runtime flags."""

from albert_tf import cli
from albert_tf.entry_points import MAIN, start
from albert_tf.tasks.pretraining.config import PretrainingRunConfig

FLAGS = """
    albert_config_file input_file output_dir init_checkpoint max_seq_length
    max_predictions_per_seq do_train do_eval train_batch_size eval_batch_size optimizer
    learning_rate poly_power num_train_steps num_warmup_steps start_warmup_step
    save_checkpoints_steps keep_checkpoint_max max_eval_steps init_from_group0
    masked_lm_budget sentence_order_loss_weight"""


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.tasks.pretraining.task import run_pretraining

    run_pretraining(cli.config_from_flags(PretrainingRunConfig))


def run(argv=None):
    """`albert-run-pretraining` / `python run_pretraining.py`."""
    cli.define_flags(MAIN, FLAGS, PretrainingRunConfig, runtime=True)
    start(__doc__, main, ["input_file", "output_dir"], argv)
