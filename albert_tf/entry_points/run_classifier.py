"""Fine-tunes, evaluates, predicts and exports ALBERT on a GLUE task: the original
`run_classifier.py`'s flags and defaults, plus the TF2 runtime flags shared by every script.
`--task_name=csv|tsv|jsonl` reads your own files instead (`--train_file`, `--dev_file`,
`--test_file` and the column flags; no `--data_dir`)."""

import sys

from absl import flags

from albert_tf import cli
from albert_tf.entry_points import MAIN, finish, run_gist, start
from albert_tf.tasks.classification.config import CUSTOM_FORMATS, GlueRunConfig

FLAGS = """
    data_dir albert_config_file task_name vocab_file spm_model_file output_dir cached_dir
    init_checkpoint albert_hub_module_handle do_lower_case max_seq_length do_train do_eval
    do_predict train_batch_size eval_batch_size predict_batch_size learning_rate train_step
    warmup_step save_checkpoints_steps keep_checkpoint_max optimizer export_dir tflite
    onnx openvino threshold_to_export shuffle_buffer seed
    train_file dev_file test_file text_a_column text_b_column label_column id_column label_list
    task_type label_separator threshold long_document doc_stride window_pooling quotechar
    num_hidden_layers distill_from distill_temperature distill_alpha lora_rank lora_word_rank"""


def required_flags(argv) -> list:
    """--data_dir is required for GLUE tasks, not for your own files (--task_name=csv|...)."""
    names = []
    for i, arg in enumerate(argv):
        if arg.startswith("--task_name="):
            names.append(arg.split("=", 1)[1])
        elif arg == "--task_name" and i + 1 < len(argv):
            names.append(argv[i + 1])
    custom = bool(names) and names[-1].lower() in CUSTOM_FORMATS
    return ([] if custom else ["data_dir"]) + ["task_name", "output_dir"]


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.tasks.classification.task import run_glue

    config = cli.config_from_flags(GlueRunConfig)
    summary = run_glue(config)
    finish(summary, run_gist(config.output_dir, summary), flags.FLAGS.json)


def run(argv=None):
    """`albert-run-classifier` / `python run_classifier.py`."""
    argv = sys.argv if argv is None else argv
    cli.define_flags(MAIN, FLAGS + " json", GlueRunConfig, defaults={"json": False}, runtime=True)
    start(__doc__, main, required_flags(argv), argv)
