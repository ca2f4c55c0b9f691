"""Pretrains ALBERT (masked LM + sentence order) on the original's TFRecords; same flags as
the original's run_pretraining.py, plus the TF2 runtime flags."""

from albert_tf import cli
from albert_tf.tasks.pretraining.task import PretrainingRunConfig, run_pretraining

cli.define_flags(__name__, """
    albert_config_file input_file output_dir init_checkpoint max_seq_length
    max_predictions_per_seq do_train do_eval train_batch_size eval_batch_size optimizer
    learning_rate poly_power num_train_steps num_warmup_steps start_warmup_step
    save_checkpoints_steps keep_checkpoint_max max_eval_steps init_from_group0
    masked_lm_budget sentence_order_loss_weight""", PretrainingRunConfig, runtime=True)


def main(_):
    run_pretraining(cli.config_from_flags(PretrainingRunConfig))


if __name__ == "__main__":
    cli.run(main, required=["input_file", "output_dir"])
