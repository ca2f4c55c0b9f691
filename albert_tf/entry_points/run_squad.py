"""Fine-tunes and evaluates ALBERT on SQuAD v1.1, or v2.0 with `--version_2_with_negative`.

Flags are those of the original `run_squad_v1.py` and `run_squad_v2.py` (same names and
defaults), so their README command lines run unchanged against this one script.
"""

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN, finish, run_gist, start
from albert_tf.errors import UsageError
from albert_tf.tasks.squad.config import SquadRunConfig

FLAGS = """
    albert_config_file vocab_file spm_model_file output_dir train_file predict_file
    train_feature_file predict_feature_file predict_feature_left_file init_checkpoint
    albert_hub_module_handle do_lower_case max_seq_length doc_stride max_query_length do_train
    do_predict train_batch_size predict_batch_size learning_rate num_train_epochs
    warmup_proportion save_checkpoints_steps n_best_size max_answer_length use_einsum export_dir tflite
    onnx openvino
    version_2_with_negative start_n_top end_n_top dropout_prob num_hidden_layers lora_rank
    lora_word_rank"""


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.tasks.squad.task import run_squad

    if flags.FLAGS.albert_hub_module_handle:
        raise UsageError("--albert_hub_module_handle (TF1 hub modules) is not supported; "
                         "use --init_checkpoint")
    config = cli.config_from_flags(SquadRunConfig)
    result = run_squad(config)
    for key, value in result.items():
        logging.info("%s = %s", key, value)
    finish(result, run_gist(config.output_dir, {}), flags.FLAGS.json)


def run(argv=None):
    """`albert-run-squad` / `python run_squad.py`."""
    cli.define_flags(MAIN, FLAGS + " json", SquadRunConfig,
                     defaults={"use_einsum": True, "json": False}, runtime=True)
    start(__doc__, main, ["output_dir"], argv)
