"""Pretrains ALBERT (masked LM + sentence order) on the original's TFRecords; same flags as
the original's run_pretraining.py, plus the TF2 runtime flags."""

from albert_tf import cli

cli.quiet_tensorflow()

from absl import flags  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("albert_config_file", None, "The ALBERT config json file (model architecture).")
flags.DEFINE_string("input_file", None, "Input TFRecord files (comma-separated globs).")
flags.DEFINE_string("output_dir", None, "Where checkpoints, albert_config.json, logs and eval "
                    "results are written.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint: an original TF1 checkpoint "
                    "(usually a pretrained ALBERT) or one written by this package.")
flags.DEFINE_integer("max_seq_length", 512, "Maximum total input length; must match the data.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum masked LM predictions per "
                     "sequence; must match the data.")
flags.DEFINE_bool("do_train", True, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the input files.")
flags.DEFINE_integer("train_batch_size", 4096, "Global batch size for training.")
flags.DEFINE_integer("eval_batch_size", 64, "Batch size for eval.")
flags.DEFINE_enum("optimizer", "lamb", ["adamw", "lamb"], "The optimizer for training.")
flags.DEFINE_float("learning_rate", 0.00176, "The initial learning rate.")
flags.DEFINE_float("poly_power", 1.0, "The power of the polynomial decay.")
flags.DEFINE_integer("num_train_steps", 125000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 3125, "Number of warmup steps.")
flags.DEFINE_integer("start_warmup_step", 0, "The starting step of warmup.")
flags.DEFINE_integer("save_checkpoints_steps", 5000, "How often to save a checkpoint.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "How many checkpoints to keep.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval batches.")
flags.DEFINE_bool("init_from_group0", False, "Initialise every group from group_0 of "
                  "--init_checkpoint.")
flags.DEFINE_integer("masked_lm_budget", 0, "The original's unimplemented on-the-fly masking; "
                     "must stay 0.")

cli.define_tpu_flags(__name__)
cli.define_runtime_flags(__name__)


def main(_):
    from albert_tf.tasks.pretraining.task import PretrainingRunConfig, run_pretraining

    run_pretraining(cli.config_from_flags(PretrainingRunConfig))


if __name__ == "__main__":
    cli.run(main, required=["albert_config_file", "input_file", "output_dir"])
