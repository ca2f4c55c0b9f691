"""Fine-tunes, evaluates, predicts and exports ALBERT on a GLUE task: the original
`run_classifier.py`'s flags and defaults, plus the TF2 runtime flags shared by every script."""

from albert_tf import cli
from albert_tf.tasks.glue.task import GlueRunConfig, run_glue

cli.define_flags(__name__, """
    data_dir albert_config_file task_name vocab_file spm_model_file output_dir cached_dir
    init_checkpoint albert_hub_module_handle do_lower_case max_seq_length do_train do_eval
    do_predict train_batch_size eval_batch_size predict_batch_size learning_rate train_step
    warmup_step save_checkpoints_steps keep_checkpoint_max optimizer export_dir
    threshold_to_export shuffle_buffer seed""", GlueRunConfig, runtime=True)


def main(_):
    run_glue(cli.config_from_flags(GlueRunConfig))


if __name__ == "__main__":
    cli.run(main, required=["data_dir", "task_name", "spm_model_file", "output_dir"])
