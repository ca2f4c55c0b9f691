"""Fine-tunes and evaluates ALBERT on RACE (4-way multiple choice), flags as the original."""

from albert_tf import cli

cli.quiet_tensorflow()

from absl import flags, logging  # noqa: E402

flags.DEFINE_string("data_dir", None, "Folder holding RACE/{train,dev,test}/{middle,high}.")
flags.DEFINE_string("albert_config_file", None, "The config json file of the ALBERT model.")
flags.DEFINE_string("task_name", "race", "The name of the task to train.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file (unused with SentencePiece).")
flags.DEFINE_string("train_file", None, "Training TFRecord cache (written if absent).")
flags.DEFINE_string("eval_file", None, "Evaluation TFRecord cache (written if absent).")
flags.DEFINE_string("predict_file", None, "Test TFRecord cache (written if absent).")
flags.DEFINE_string("spm_model_file", None, "The SentencePiece model file.")
flags.DEFINE_string("output_dir", None, "Where checkpoints and results go.")
flags.DEFINE_string("init_checkpoint", None, "Initial (TF1-named) checkpoint.")
flags.DEFINE_string("albert_hub_module_handle", None, "TF-Hub module (not supported).")
flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text.")
flags.DEFINE_float("dropout_prob", 0.1, "Dropout on the pooled output.")
flags.DEFINE_integer("max_seq_length", 512, "Maximum total input length in pieces.")
flags.DEFINE_integer("max_qa_length", 128, "Maximum question+option length in pieces.")
flags.DEFINE_integer("num_keep_checkpoint", 5, "Checkpoints to keep (unused, as the original).")
flags.DEFINE_bool("high_only", False, "Only the high-school level.")
flags.DEFINE_bool("middle_only", False, "Only the middle-school level.")
flags.DEFINE_bool("do_train", True, "Whether to run training.")
flags.DEFINE_bool("do_eval", True, "Whether to evaluate on the dev set.")
flags.DEFINE_bool("do_predict", False, "Whether to evaluate the best checkpoint on test.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_integer("eval_batch_size", 8, "Evaluation batch size.")
flags.DEFINE_integer("predict_batch_size", 8, "Prediction batch size.")
flags.DEFINE_float("learning_rate", 1e-5, "Initial learning rate for AdamW.")
flags.DEFINE_integer("train_step", 12000, "Number of training steps.")
flags.DEFINE_integer("warmup_step", 1000, "Number of warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 100, "Steps between checkpoints.")

FLAGS = flags.FLAGS

cli.define_tpu_flags(__name__)
cli.define_runtime_flags(__name__)


def main(_):
    from albert_tf.errors import UsageError
    from albert_tf.tasks.race.task import RaceRunConfig, run_race

    if FLAGS.albert_hub_module_handle:
        raise UsageError("--albert_hub_module_handle is not supported; use --init_checkpoint")
    if FLAGS.task_name.lower() != "race":
        raise UsageError(f"--task_name: task not found: {FLAGS.task_name}")
    for key, value in sorted(run_race(cli.config_from_flags(RaceRunConfig)).items()):
        logging.info("%s = %s", key, value)


if __name__ == "__main__":
    cli.run(main, required=["data_dir", "albert_config_file", "spm_model_file", "output_dir"])
