"""Where a classifier's examples come from: a GLUE task folder, your own CSV/TSV/JSONL files, or
texts held in memory (the `TextClassifier` API). `ClassificationTask` runs the same way on each;
a source says what differs:

* its train/dev/test `InputExample`s (`examples`), the label names (`labels`; `[None]` when
  regressing) and whether examples are text pairs (`is_pair`);
* whether its features are cached in a keyed file (`source_file`: the file the cache is keyed
  on) or built in memory (None);
* its metrics, the metric that picks `model.ckpt-best`, and its own prediction files.

A source holds the run config it is made for (the task fills the config's tokenizer files from
`--init_checkpoint` in place before reading a single example). The task calls `validate` (flags
the source needs, checked before the common ones), then `open`, then reads.

GLUE keeps the original's metrics and result files. Your own data (files or memory) share one set
of conventions: labels are the given list (`--label_list`), else the sorted set of the training
labels, else `labels.json` of an earlier training run; the metrics are eval_accuracy,
eval_macro_f1 and eval_loss (eval_pearson, eval_spearman, eval_mse when regressing;
`multi_label_metrics` for label sets).
"""

from __future__ import annotations

import abc
import os

import tensorflow as tf

from albert_tf import labels as L
from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.run_config import SPLIT_FLAGS
from albert_tf.tasks.classification import files as D
from albert_tf.tasks.classification import metrics as M
from albert_tf.tasks.classification import results
from albert_tf.tasks.classification.multi_label_metrics import BEST_METRIC, multi_label_metrics
from albert_tf.tasks.classification.config import (TASK_TYPES, ClassifierRunConfig,
                                                   ClassifierRunError)
from albert_tf.tasks.classification.examples import InputExample, process_text
from albert_tf.tasks.classification.processors import get_processor

SPLITS = ("train", "dev", "test")


class ExampleSource(abc.ABC):
    """The examples, labels and conventions of one classification task (see the module doc)."""

    #: the run config flags this source cannot run without.
    required_flags: tuple = ("output_dir",)
    #: the labels the --init_checkpoint's classifier names (HF id2label, its labels.json), set
    #: by the task from its `RunInputs`: what a run that does not train serves by default.
    model_labels: list | None = None

    def __init__(self, config: ClassifierRunConfig):
        self.config = config

    def validate(self) -> None:
        """Raises ClassifierRunError for flags this source cannot work with."""

    def open(self) -> None:
        """Called once the flags are checked, before anything is read."""

    def process_text(self, text) -> str:
        return process_text(text, bool(self.config.spm_model_file), self.config.do_lower_case)

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The task's key: names the cached feature files and keys the cache."""

    @property
    @abc.abstractmethod
    def labels(self) -> list:
        """Label names in id order; [None] when regressing."""

    @property
    def regression(self) -> bool:
        return self.labels == [None]

    @property
    def multi_label(self) -> bool:
        """Whether an example has a set of labels (a sigmoid per label)."""
        return False

    @property
    @abc.abstractmethod
    def is_pair(self) -> bool:
        """Whether examples are (text_a, text_b) pairs (the export's serve_text inputs)."""

    @property
    @abc.abstractmethod
    def best_metric(self) -> str:
        """The key whose strict improvement makes a checkpoint the best."""

    @abc.abstractmethod
    def examples(self, split: str) -> list[InputExample]:
        """The examples of `split` (train, dev or test; a test example's label is a filler)."""

    def source_file(self, split: str) -> str | None:
        """The file `split` is read from, which its cached features are keyed on; None: the
        features are built in memory (nothing is written)."""
        return None

    def cache_key(self, split: str) -> dict:
        """What the features of `split` depend on besides the file, the tokenizer and the
        sequence length."""
        return {}

    @abc.abstractmethod
    def metrics(self, out: dict) -> dict:
        """The dev-set result dict from `ClassificationTask.predict_logits`' output."""

    @abc.abstractmethod
    def write_predictions(self, guids, probabilities, predictions) -> dict:
        """The source's own prediction files in output_dir; returns {name: path}."""


class GlueSource(ExampleSource):
    """A GLUE task folder: `--data_dir` and `--task_name` (the original's processors)."""

    required_flags = ("data_dir", "task_name", "output_dir")

    def open(self) -> None:
        cfg = self.config
        self.processor = get_processor(cfg.task_name, use_spm=bool(cfg.spm_model_file),
                                       do_lower_case=cfg.do_lower_case)

    @property
    def name(self) -> str:
        return self.processor.name

    @property
    def labels(self) -> list:
        return self.processor.get_labels()

    @property
    def regression(self) -> bool:
        return self.processor.task.is_regression

    @property
    def is_pair(self) -> bool:
        return self.processor.task.is_pair

    @property
    def best_metric(self) -> str:
        return M.selection_metric(self.name)

    def source_file(self, split: str) -> str:
        return self.processor.split_path(self.config.data_dir, split)

    def examples(self, split: str) -> list[InputExample]:
        return self.processor.get_examples(self.config.data_dir, split)

    def metrics(self, out: dict) -> dict:
        return M.glue_metrics(self.name, out["logits"], out["label_ids"], out["is_real_example"])

    def write_predictions(self, guids, probabilities, predictions) -> dict:
        """The original's test_results.tsv and submit_results.tsv, and the leaderboard's file."""
        return results.write_predictions(self.config.output_dir, self.name, guids,
                                         probabilities, predictions, self.labels)


class OwnDataSource(ExampleSource):
    """Your own examples, from files or memory: the conventions they share (module doc)."""

    def __init__(self, config: ClassifierRunConfig, task_type: str = "classification",
                 label_list=None):
        super().__init__(config)
        self.task_type = task_type
        self.label_list = L.parse(label_list)
        self._labels = None
        self._examples = {}

    @property
    def regression(self) -> bool:
        return self.task_type == "regression"

    @property
    def multi_label(self) -> bool:
        return self.task_type == "multi_label"

    @property
    def best_metric(self) -> str:
        if self.multi_label:
            return BEST_METRIC
        return "eval_pearson" if self.regression else "eval_accuracy"

    @property
    def labels(self) -> list:
        if self._labels is None:
            self._labels = [None] if self.regression else self._resolve_labels()
        return self._labels

    @abc.abstractmethod
    def has_split(self, split: str) -> bool:
        """Whether this source was given `split`."""

    @abc.abstractmethod
    def read(self, split: str) -> list[InputExample]:
        """The examples of `split` as given (a test split's labels, when there, are read)."""

    def train_name(self) -> str:
        """How the training examples are named in messages."""
        return "the training examples"

    def _pairs(self, examples) -> list:
        """(label, where) of every label of `examples` (multi-label: of every name of each)."""
        if self.multi_label:
            return [(name, e.source) for e in examples for name in e.label or ()]
        return [(e.label, e.source) for e in examples if e.label is not None]

    def _derive(self, given) -> list[str]:
        """The labels of the training examples (`labels.derive`); multi-label: at least 1."""
        return L.derive(self._pairs(self.examples("train")), self.train_name(), given,
                        error=D.CustomDataError, minimum=1 if self.multi_label else 2,
                        words=L.LABEL_SETS if self.multi_label else L.CLASSES)

    def _resolve_labels(self) -> list[str]:
        cfg = self.config
        recorded = L.LabelFile.read(cfg.output_dir).names
        if cfg.do_train:
            return self._derive(self.label_list)
        if self.label_list:
            return self.label_list
        if recorded is not None:
            return recorded
        if self.model_labels:
            return list(self.model_labels)
        if self.has_split("train"):
            return self._derive(None)
        raise UsageError(f"no labels: {cfg.output_dir} has no labels.json (written by a "
                         "training run); pass --label_list or --train_file")

    def examples(self, split: str) -> list[InputExample]:
        if split not in self._examples:
            examples = self.read(split)
            if split != "train" and not self.regression:
                L.check_known(self._pairs(examples), self.labels, bool(self.label_list),
                              error=D.CustomDataError)
            if split == "test":  # features need a label id; the test split's are not used
                fill = 0.0 if self.regression else () if self.multi_label else self.labels[0]
                for example in examples:
                    example.label = fill
            self._examples[split] = examples
        return self._examples[split]

    def metrics(self, out: dict) -> dict:
        if self.multi_label:
            return multi_label_metrics(out["logits"], out["predictions"], out["label_ids"],
                                       out["is_real_example"], self.labels)
        return M.custom_metrics(out["logits"], out["label_ids"], out["is_real_example"],
                                len(self.labels), self.regression)

    def write_predictions(self, guids, probabilities, predictions) -> dict:
        path = os.path.join(self.config.output_dir, "test_results.tsv")
        write_text_atomically(path, results.format_test_results(probabilities))
        return {"test_results": path}


class FileSource(OwnDataSource):
    """Your own CSV/TSV/JSONL files (`--task_name=csv|tsv|jsonl`, `config.files`)."""

    required_flags = ("task_name", "output_dir")

    def __init__(self, config: ClassifierRunConfig):
        files = config.files
        super().__init__(config, files.task_type, files.label_list)
        self.files = files

    @property
    def name(self) -> str:
        return self.config.task_name.lower()

    @property
    def is_pair(self) -> bool:
        return bool(self.files.text_b_column)

    def validate(self) -> None:
        cfg, files = self.config, self.files
        if files.task_type not in TASK_TYPES:
            raise ClassifierRunError(f"--task_type must be one of {', '.join(TASK_TYPES)}, got "
                                     f"{files.task_type!r}")
        if files.multi_label and not files.label_separator:
            raise ClassifierRunError("--label_separator must not be empty with "
                                     "--task_type=multi_label")
        if files.task_type == "regression" and files.label_list:
            raise ClassifierRunError("--label_list is for --task_type=classification; a "
                                     "regression target is a number")
        for split, wanted in zip(SPLITS, (cfg.do_train, cfg.do_eval, cfg.do_predict)):
            if wanted and not files.split_file(split):
                raise ClassifierRunError(f"--do_{'eval' if split == 'dev' else split} needs "
                                         f"--{SPLIT_FLAGS[split]}")
        for name in ("text_a_column", "label_column"):
            if not getattr(files, name):
                raise ClassifierRunError(f"--{name} is required")
        if files.quotechar and (len(files.quotechar) != 1 or files.quotechar in "\t,\n\r"
                                or self.name == "jsonl"):
            raise ClassifierRunError(f"--quotechar={files.quotechar!r}: one character that is "
                                     "not the delimiter, for --task_name=csv or tsv")

    def open(self) -> None:
        files = self.files
        self.reader = D.CustomReader(self.name, D.Columns(
            files.text_a_column, files.text_b_column or None, files.label_column,
            files.id_column or None), self.regression, self.process_text, self.multi_label,
            files.label_separator, files.quotechar or None)

    def has_split(self, split: str) -> bool:
        return bool(self.files.split_file(split))

    def train_name(self) -> str:
        return self.files.train_file

    def source_file(self, split: str) -> str:
        return self.files.split_file(split)

    def read(self, split: str) -> list[InputExample]:
        path = self.source_file(split)
        if not tf.io.gfile.exists(path):
            raise UsageError(f"--{SPLIT_FLAGS[split]}={path}: no such file")
        return self.reader.read(path, split, with_labels=split != "test")

    def cache_key(self, split: str) -> dict:
        files = self.files
        return {"labels": self.labels, "task_type": files.task_type,
                "label_separator": files.label_separator if self.multi_label else None,
                "columns": [files.text_a_column, files.text_b_column, files.label_column,
                            files.id_column], "quotechar": files.quotechar or None}


class MemorySource(OwnDataSource):
    """Texts (or (a, b) pairs) and labels held in Python lists: `splits` maps train/dev/test to
    (texts, labels or None). Their features are built in memory; nothing is written."""

    def __init__(self, config: ClassifierRunConfig, splits: dict, pair: bool,
                 task_type: str = "classification", label_list=None):
        super().__init__(config, task_type, label_list)
        unknown = set(splits) - set(SPLITS)
        if unknown:
            raise ValueError(f"unknown splits {sorted(unknown)}; expected {SPLITS}")
        self.splits = splits
        self.pair = bool(pair)

    def replace(self, splits: dict, pair: bool) -> None:
        """Other examples for the same labels (each call of a Python API kept in memory)."""
        self.splits, self.pair, self._examples = splits, bool(pair), {}

    @property
    def name(self) -> str:
        return "memory"

    @property
    def is_pair(self) -> bool:
        return self.pair

    def has_split(self, split: str) -> bool:
        return split in self.splits

    def read(self, split: str) -> list[InputExample]:
        if split not in self.splits:
            raise UsageError(f"no {split} examples were given")
        texts, labels = self.splits[split]
        examples = []
        for i, text in enumerate(texts):
            a, b = text if self.pair else (text, None)
            label = None if labels is None else labels[i]
            if label is not None and self.regression:
                label = float(label)
            elif label is not None and self.multi_label:
                label = tuple(label)
            examples.append(InputExample(
                str(i + 1), self.process_text(a), None if b is None else self.process_text(b),
                label, f"{split}[{i}]"))
        return examples


def source_for(config: ClassifierRunConfig) -> ExampleSource:
    """The source `--task_name` names: your own files for csv|tsv|jsonl, else a GLUE task."""
    return FileSource(config) if config.reads_files else GlueSource(config)
