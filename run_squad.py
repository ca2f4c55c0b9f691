"""Fine-tunes and evaluates ALBERT on SQuAD v1.1, or v2.0 with `--version_2_with_negative`.

Flags are those of the original `run_squad_v1.py` and `run_squad_v2.py` (same names and
defaults), so their README command lines run unchanged against this one script.
"""

from albert_tf import cli

cli.quiet_tensorflow()

from absl import flags, logging  # noqa: E402

flags.DEFINE_string("albert_config_file", None, "The config json file of the ALBERT model.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file (unused with SentencePiece).")
flags.DEFINE_string("spm_model_file", None, "The SentencePiece model file.")
flags.DEFINE_string("output_dir", None, "Where checkpoints, predictions and results go.")
flags.DEFINE_string("train_file", None, "SQuAD json for training.")
flags.DEFINE_string("predict_file", None, "SQuAD json for predictions.")
flags.DEFINE_string("train_feature_file", None, "Training feature TFRecord (written if absent).")
flags.DEFINE_string("predict_feature_file", None, "Prediction feature TFRecord.")
flags.DEFINE_string("predict_feature_left_file", None,
                    "Prediction feature metadata (JSON lines here; a pickle in the original).")
flags.DEFINE_string("init_checkpoint", None, "Initial (TF1-named) checkpoint.")
flags.DEFINE_string("albert_hub_module_handle", None, "TF-Hub module (not supported).")
flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text.")
flags.DEFINE_integer("max_seq_length", 384, "Maximum total input length in pieces.")
flags.DEFINE_integer("doc_stride", 128, "Stride between document windows.")
flags.DEFINE_integer("max_query_length", 64, "Maximum question length in pieces.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_predict", False, "Whether to run prediction and evaluation.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_integer("predict_batch_size", 8, "Prediction batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Initial learning rate for AdamW.")
flags.DEFINE_float("num_train_epochs", 3.0, "Number of training epochs.")
flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training for linear warmup.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Steps between checkpoints.")
flags.DEFINE_integer("n_best_size", 20, "Number of n-best predictions per question.")
flags.DEFINE_integer("max_answer_length", 30, "Maximum answer length in pieces.")
flags.DEFINE_bool("use_einsum", True, "Einsum projections (always on here; kept for the CLI).")
flags.DEFINE_string("export_dir", None, "Where to export SavedModels for serving.")
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD v2.0: answerability head and null "
                  "answers (the original's run_squad_v2.py).")
flags.DEFINE_integer("start_n_top", 5, "v2: beam size for start positions.")
flags.DEFINE_integer("end_n_top", 5, "v2: beam size for end positions per start.")
flags.DEFINE_float("dropout_prob", 0.1, "v2: dropout in the answerability head.")

FLAGS = flags.FLAGS

cli.define_tpu_flags(__name__)
cli.define_runtime_flags(__name__)


def main(_):
    from albert_tf.errors import UsageError
    from albert_tf.tasks.squad.task import SquadRunConfig, run_squad

    if FLAGS.albert_hub_module_handle:
        raise UsageError("--albert_hub_module_handle (TF1 hub modules) is not supported; "
                         "use --init_checkpoint")
    for key, value in run_squad(cli.config_from_flags(SquadRunConfig)).items():
        logging.info("%s = %s", key, value)


if __name__ == "__main__":
    cli.run(main, required=["albert_config_file", "spm_model_file", "output_dir"])
