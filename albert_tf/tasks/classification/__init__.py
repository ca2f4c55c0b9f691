"""Text classification: one task (`task.ClassificationTask`) on pluggable example sources
(`sources`): a GLUE task folder (`processors`), your own CSV/TSV/JSONL files (`files`), or texts
held in memory (the Python API, `text_classifier.TextClassifier`, also `albert_tf.tasks`'s). Then
example → feature conversion with a keyed cache (`features`), metrics, result files, the export.
`config` holds the run config without TensorFlow; nothing here is imported by this package file.

`run_classifier.py` takes the original's flags, so the per-task recipes of the original
`run_glue.sh` run unchanged (two calls per task: `--do_train --nodo_eval --nodo_predict`, then
`--nodo_train --do_eval --do_predict`; both with `--do_lower_case --max_seq_length=512
--optimizer=adamw --data_dir=$GLUE_DIR --spm_model_file=30k-clean.model
--output_dir=$OUT/<TASK>` and, instead of the TF-Hub module, `--albert_config_file` plus
`--init_checkpoint` of a released model):

    task    warmup_step  learning_rate  train_step  save_checkpoints_steps  train_batch_size
    SST-2   1256         1e-5           20935       100                     32
    MNLI    1000         3e-5           10000       100                     128
    CoLA    320          1e-5           5336        100                     16
    QNLI    1986         1e-5           33112       200                     32
    QQP     1000         5e-5           14000       100                     128
    RTE     200          3e-5           800         100                     32
    STS-B   214          2e-5           3598        100                     16
    MRPC    200          2e-5           800         100                     32

The run_glue.sh recipe keeps every checkpoint for the later evaluation call; pass
`--keep_checkpoint_max=0` to do the same (the default 5 keeps the last five). `ax` (the
diagnostic set) is predicted with an MNLI model: `--task_name=ax --do_predict
--init_checkpoint=<mnli output_dir>/model.ckpt-best`.
"""
