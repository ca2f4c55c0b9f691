"""Your own data: `run_classifier.py --task_name=csv|tsv|jsonl` with `--train_file`,
`--dev_file`, `--test_file` and the columns named by flags (see `data` and `task`)."""
