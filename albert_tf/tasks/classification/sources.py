"""Fine-tuning on your own CSV/TSV/JSONL files: a `GlueTask` whose examples, labels, metrics
and prediction files come from the flags rather than a GLUE task table.

Everything else is GlueTask's: the original's features, the keyed cache, training, the best
checkpoint, the export. Labels are `--label_list`, else the sorted set of the training labels;
they are written to `<output_dir>/labels.json` before training and read back from it by a later
prediction or export run, so ids and names always agree.
"""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks.custom import data as D
from albert_tf.tasks.glue import metrics as M
from albert_tf.tasks.glue import results as glue_results
from albert_tf.tasks.glue.task import GlueRunError, GlueTask

SPLIT_FLAGS = {"train": "train_file", "dev": "dev_file", "test": "test_file"}


class CustomTask(GlueTask):
    required_flags = ("task_name", "output_dir")

    def setup_data(self):
        cfg = self.config
        self.name = cfg.task_name.lower()
        self.regression = cfg.task_type == "regression"
        self.is_pair = bool(cfg.text_b_column)
        self.best_metric = "eval_pearson" if self.regression else "eval_accuracy"
        self.label_list = D.parse_label_list(cfg.label_list)
        self.processor = None
        def process(text):  # as GLUE's processors: SentencePiece models get preprocess_text
            if cfg.spm_model_file:
                return tokenization.preprocess_text(text, lower=cfg.do_lower_case)
            return tokenization.convert_to_unicode(text)
        self.reader = D.CustomReader(self.name, D.Columns(
            cfg.text_a_column, cfg.text_b_column or None, cfg.label_column, cfg.id_column or None),
            self.regression, process)
        self._examples = {}
        self._labels = None

    def validate(self):
        cfg = self.config
        if cfg.task_type not in D.TASK_TYPES:
            raise GlueRunError(f"--task_type must be classification or regression, got "
                               f"{cfg.task_type!r}")
        if cfg.task_type == "regression" and cfg.label_list:
            raise GlueRunError("--label_list is for --task_type=classification; a regression "
                               "target is a number")
        for split, wanted in (("train", cfg.do_train), ("dev", cfg.do_eval),
                              ("test", cfg.do_predict)):
            if wanted and not getattr(cfg, SPLIT_FLAGS[split]):
                raise GlueRunError(f"--do_{'eval' if split == 'dev' else split} needs "
                                   f"--{SPLIT_FLAGS[split]}")
        for name in ("text_a_column", "label_column"):
            if not getattr(cfg, name):
                raise GlueRunError(f"--{name} is required")
        super().validate()

    # ---------------------------------------------------------------- labels
    @property
    def labels(self) -> list:
        """Label names in id order ([None] when regressing, as GLUE's STS-B)."""
        if self._labels is None:
            self._labels = [None] if self.regression else self._resolve_labels()
        return self._labels

    def _resolve_labels(self) -> list[str]:
        cfg = self.config
        recorded = glue_results.read_labels(cfg.output_dir)
        if cfg.do_train:
            return D.resolve_labels(self.read_split("train"), cfg.train_file, self.label_list)
        if self.label_list:
            return self.label_list
        if recorded is not None:
            return recorded
        if cfg.train_file:
            return D.resolve_labels(self.read_split("train"), cfg.train_file, None)
        raise UsageError(f"no labels: {cfg.output_dir} has no labels.json (written by a "
                         "training run); pass --label_list or --train_file")

    # ---------------------------------------------------------------- data
    def source_file(self, split: str) -> str:
        return getattr(self.config, SPLIT_FLAGS[split])

    def read_split(self, split: str) -> list:
        if split not in self._examples:
            if not tf.io.gfile.exists(self.source_file(split)):
                raise UsageError(f"--{SPLIT_FLAGS[split]}={self.source_file(split)}: no such file")
            examples = self.reader.read(self.source_file(split), split,
                                        with_labels=split != "test")
            if split != "train" and not self.regression:
                D.check_labels(examples, self.labels, from_flag=bool(self.label_list))
            if split == "test":  # features need a label id; the test file's are not used
                fill = 0.0 if self.regression else self.labels[0]
                for example in examples:
                    example.label = fill
            self._examples[split] = examples
        return self._examples[split]

    def cache_key(self, split: str) -> dict:
        cfg = self.config
        return {**super().cache_key(split), "labels": self.labels, "task_type": cfg.task_type,
                "columns": [cfg.text_a_column, cfg.text_b_column, cfg.label_column,
                            cfg.id_column]}

    # ---------------------------------------------------------------- eval / predict
    def metrics(self, out: dict) -> dict:
        return M.custom_metrics(out["logits"], out["label_ids"], out["is_real_example"],
                                len(self.labels), self.regression)

    def write_predictions(self, guids, probabilities, predictions) -> dict:
        path = os.path.join(self.config.output_dir, "test_results.tsv")
        write_text_atomically(path, glue_results.format_test_results(probabilities))
        return {"test_results": path}
