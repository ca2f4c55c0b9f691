"""Fine-tunes, evaluates and exports ALBERT on a GLUE task; the original's flags and defaults,
plus the TF2 runtime flags shared with run_pretraining.py."""

from albert_tf import cli

cli.quiet_tensorflow()

from absl import flags  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "The GLUE root (each task reads its own sub-directory).")
flags.DEFINE_string("albert_config_file", None, "The ALBERT config json file (model architecture).")
flags.DEFINE_string("task_name", None, "The task: cola, mnli, mismnli, mrpc, rte, sst-2, sts-b, "
                    "qqp, qnli, wnli, or ax (the diagnostic set, predicted with an MNLI model).")
flags.DEFINE_string("vocab_file", None, "The vocabulary file (WordPiece models, or checked "
                    "against the SentencePiece model).")
flags.DEFINE_string("spm_model_file", None, "The SentencePiece model file.")
flags.DEFINE_string("output_dir", None, "Where checkpoints and results are written.")
flags.DEFINE_string("cached_dir", None, "Where cached feature TFRecords go (default: output_dir).")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint: an original TF1 checkpoint "
                    "(pretrained or fine-tuned) or one written by this package.")
flags.DEFINE_string("albert_hub_module_handle", None, "TF-Hub module (TF1 format, not "
                    "supported: use its variables as --init_checkpoint).")
flags.DEFINE_bool("do_lower_case", True, "Whether to lower-case the input text.")
flags.DEFINE_integer("max_seq_length", 512, "Maximum total input length in pieces; longer "
                     "inputs are truncated, shorter ones padded.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to evaluate checkpoints on the dev set.")
flags.DEFINE_bool("do_predict", False, "Whether to predict the test set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate.")
flags.DEFINE_integer("train_step", 1000, "Total number of training steps.")
flags.DEFINE_integer("warmup_step", 0, "Number of warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save a checkpoint.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "How many checkpoints to keep (0 keeps all, "
                     "which is what the original did whatever this flag said).")
flags.DEFINE_string("optimizer", "adamw", "Optimizer: adamw or lamb.")
flags.DEFINE_string("export_dir", None, "Where a SavedModel of the best checkpoint is written "
                    "(in a numeric version sub-directory).")
flags.DEFINE_float("threshold_to_export", float("nan"), "A decision threshold served as the "
                   "extra output `threshold` (not set: NaN).")
flags.DEFINE_integer("shuffle_buffer", 100, "Training shuffle buffer in records (the "
                     "original's 100; raise it for files sorted by label or source).")
flags.DEFINE_integer("seed", None, "Seed for weight initialisation, dropout and shuffling.")

cli.define_tpu_flags(__name__)
cli.define_runtime_flags(__name__)


def main(_):
    from albert_tf.tasks.glue.task import GlueRunConfig, run_glue

    run_glue(cli.config_from_flags(GlueRunConfig))


if __name__ == "__main__":
    cli.run(main, required=["data_dir", "task_name", "spm_model_file", "output_dir"])
