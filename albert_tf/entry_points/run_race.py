"""Fine-tunes and evaluates ALBERT on RACE (4-way multiple choice), flags as the original."""

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN, finish, run_gist, start
from albert_tf.errors import UsageError
from albert_tf.tasks.race.config import RaceRunConfig

FLAGS = """
    data_dir albert_config_file task_name vocab_file train_file eval_file predict_file
    spm_model_file output_dir init_checkpoint albert_hub_module_handle do_lower_case dropout_prob
    max_seq_length max_qa_length num_keep_checkpoint high_only middle_only do_train do_eval
    do_predict train_batch_size eval_batch_size predict_batch_size learning_rate train_step
    warmup_step save_checkpoints_steps"""


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.tasks.race.task import run_race

    if flags.FLAGS.albert_hub_module_handle:
        raise UsageError("--albert_hub_module_handle is not supported; use --init_checkpoint")
    if flags.FLAGS.task_name.lower() != "race":
        raise UsageError(f"--task_name: task not found: {flags.FLAGS.task_name}")
    config = cli.config_from_flags(RaceRunConfig)
    result = run_race(config)
    for key, value in sorted(result.items()):
        logging.info("%s = %s", key, value)
    finish(result, run_gist(config.output_dir, {}), flags.FLAGS.json)


def run(argv=None):
    """`albert-run-race` / `python run_race.py`."""
    cli.define_flags(MAIN, FLAGS + " json", RaceRunConfig,
                     defaults={"task_name": "race", "num_keep_checkpoint": 5, "json": False},
                     runtime=True)
    start(__doc__, main, ["data_dir", "output_dir"], argv)
