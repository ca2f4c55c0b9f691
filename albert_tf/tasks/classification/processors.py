"""GLUE task readers: the original's processors for every task (plus `ax`), with checked rows.

Each task is described as data (file names, columns, labels) rather than one class per task.
Files are read as the original reads them: tab-separated, quotes are ordinary characters, and
every text field and label goes through `preprocess_text` when SentencePiece is used. Files
and rows that do not fit (non-UTF-8 bytes, a header with too few columns for the task, only a
header, wrong column count, empty text, unknown label, non-numeric STS-B score) raise
`GlueDataError` naming the file and line, except QQP train/dev rows with missing columns,
which the original skips; those are skipped and counted. An empty text in a test split (the
leaderboard needs a prediction for every row) or in the large crowd-sourced sets (QQP, MNLI,
whose released files hold a few such rows) is kept, as the original keeps it, with a warning.
"""

from __future__ import annotations

import dataclasses
import os

import tensorflow as tf
from absl import logging

from albert_tf import io_utils
from albert_tf.errors import InputError
from albert_tf.tasks.classification.examples import InputExample, process_text


class GlueDataError(InputError):
    """A GLUE file that is missing or has a row the task cannot read."""


@dataclasses.dataclass(frozen=True)
class SplitFormat:
    """Where one split's fields live. `guid=None` means "<set>-<line index>" as the original
    numbers train/dev rows (the index counts the header line); `label=None` means the fixed
    `test_label`; `columns=None` means "as many as the header"."""

    file: str
    header: bool = True
    guid: int | None = 0
    text_a: int = 1
    text_b: int | None = 2
    label: int | None = -1
    columns: int | None = None

    def columns_read(self) -> dict:
        """Field name → column index, for the fields read from the file (−1: the last)."""
        names = ("guid", "text_a", "text_b", "label")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def min_columns(self) -> int:
        """The fewest columns a row can have for every field to be read, each from its own
        column (a label in the last column comes after the other fields)."""
        read = self.columns_read()
        last = max([i for i in read.values() if i >= 0], default=-1)
        return last + 1 + (1 if read.get("label") == -1 else 0)


@dataclasses.dataclass(frozen=True)
class TaskFormat:
    name: str                  # the original's task key
    directory: str             # sub-directory of the GLUE root
    labels: tuple              # label strings in index order; (None,) for regression
    splits: dict               # "train" / "dev" / "test" → SplitFormat
    test_label: object = "0"
    skip_short_rows: bool = False  # QQP: the original drops rows with missing columns
    allow_empty_text: bool = False  # the released files hold a few rows with an empty text

    @property
    def is_regression(self) -> bool:
        return self.labels == (None,)

    @property
    def is_pair(self) -> bool:
        return any(s.text_b is not None for s in self.splits.values())


_NLI = ("contradiction", "entailment", "neutral")
_BINARY = ("0", "1")
_ENTAIL = ("entailment", "not_entailment")


def _mnli_splits(dev, test):
    mnli = dict(guid=0, text_a=8, text_b=9, label=-1)
    return {"train": SplitFormat("train.tsv", **mnli), "dev": SplitFormat(dev, **mnli),
            "test": SplitFormat(test, **dict(mnli, label=None))}


def _standard(label_col=-1):
    return {"train": SplitFormat("train.tsv", label=label_col),
            "dev": SplitFormat("dev.tsv", label=label_col),
            "test": SplitFormat("test.tsv", label=None)}


TASKS: dict[str, TaskFormat] = {
    "cola": TaskFormat("cola", "CoLA", _BINARY, {
        "train": SplitFormat("train.tsv", header=False, guid=None, text_a=3, text_b=None, label=1, columns=4),
        "dev": SplitFormat("dev.tsv", header=False, guid=None, text_a=3, text_b=None, label=1, columns=4),
        "test": SplitFormat("test.tsv", guid=0, text_a=1, text_b=None, label=None)}),
    "mnli": TaskFormat("mnli", "MNLI", _NLI, _mnli_splits("dev_matched.tsv", "test_matched.tsv"),
                       test_label="contradiction", allow_empty_text=True),
    "mismnli": TaskFormat("mismnli", "MNLI", _NLI,
                          _mnli_splits("dev_mismatched.tsv", "test_mismatched.tsv"),
                          test_label="contradiction", allow_empty_text=True),
    "mrpc": TaskFormat("mrpc", "MRPC", _BINARY, {
        "train": SplitFormat("train.tsv", guid=None, text_a=3, text_b=4, label=0),
        "dev": SplitFormat("dev.tsv", guid=None, text_a=3, text_b=4, label=0),
        "test": SplitFormat("test.tsv", guid=0, text_a=3, text_b=4, label=None)}),
    "rte": TaskFormat("rte", "RTE", _ENTAIL, _standard(), test_label="entailment"),
    "sst-2": TaskFormat("sst-2", "SST-2", _BINARY, {
        "train": SplitFormat("train.tsv", guid=None, text_a=0, text_b=None, label=1),
        "dev": SplitFormat("dev.tsv", guid=None, text_a=0, text_b=None, label=1),
        "test": SplitFormat("test.tsv", guid=0, text_a=1, text_b=None, label=None)}),
    "sts-b": TaskFormat("sts-b", "STS-B", (None,), {
        "train": SplitFormat("train.tsv", text_a=7, text_b=8),
        "dev": SplitFormat("dev.tsv", text_a=7, text_b=8),
        "test": SplitFormat("test.tsv", text_a=7, text_b=8, label=None)}, test_label=0.0),
    "qqp": TaskFormat("qqp", "QQP", _BINARY, {
        "train": SplitFormat("train.tsv", text_a=3, text_b=4, label=5),
        "dev": SplitFormat("dev.tsv", text_a=3, text_b=4, label=5),
        "test": SplitFormat("test.tsv", text_a=1, text_b=2, label=None)}, skip_short_rows=True,
        allow_empty_text=True),
    "qnli": TaskFormat("qnli", "QNLI", _ENTAIL, _standard(), test_label="entailment"),
    "wnli": TaskFormat("wnli", "WNLI", _BINARY, _standard()),
    # The diagnostic set: test only, predicted with an MNLI model (unregistered in the original).
    "ax": TaskFormat("ax", "diagnostic", _NLI, {
        "test": SplitFormat("diagnostic.tsv", guid=0, text_a=1, text_b=2, label=None)},
        test_label="contradiction"),
}

# The file names the GLUE leaderboard expects for each task's test predictions.
LEADERBOARD_NAMES = {"cola": "CoLA", "mnli": "MNLI-m", "mismnli": "MNLI-mm", "mrpc": "MRPC",
                     "rte": "RTE", "sst-2": "SST-2", "sts-b": "STS-B", "qqp": "QQP",
                     "qnli": "QNLI", "wnli": "WNLI", "ax": "AX"}

def read_tsv(path: str) -> list[tuple[int, list[str]]]:
    """(1-based line number, fields) per line; no quote processing, as the original."""
    if not tf.io.gfile.exists(path):
        raise GlueDataError(f"GLUE file not found: {path}")
    data = io_utils.read_bytes(path)  # a pipe too (tf.io.gfile reads it as empty)
    if data.startswith(b"\xef\xbb\xbf"):  # MRPC files carry a UTF-8 byte-order mark
        data = data[3:]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    rows = []
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise GlueDataError(f"{path}:{number}: not valid UTF-8 ({error})") from None
        rows.append((number, text.rstrip("\r").split("\t")))
    return rows


class GlueProcessor:
    """Reads one task's splits into `InputExample`s (the original's DataProcessor interface)."""

    def __init__(self, task: TaskFormat, use_spm: bool = True, do_lower_case: bool = True):
        self.task = task
        self.use_spm = use_spm
        self.do_lower_case = do_lower_case
        self.skipped_rows = 0

    @property
    def name(self) -> str:
        return self.task.name

    def process_text(self, text: str) -> str:
        return process_text(text, self.use_spm, self.do_lower_case)

    def get_labels(self) -> list:
        return list(self.task.labels)

    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "train")

    def get_dev_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "dev")

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "test")

    def split_path(self, data_dir: str, split: str) -> str:
        if split not in self.task.splits:
            raise GlueDataError(f"task {self.name!r} has no {split} split "
                                f"(it has {', '.join(self.task.splits)})")
        return os.path.join(data_dir, self.task.directory, self.task.splits[split].file)

    def get_examples(self, data_dir: str, split: str) -> list[InputExample]:
        path = self.split_path(data_dir, split)
        fmt = self.task.splits[split]
        rows = read_tsv(path)
        width = fmt.columns
        if not rows:
            raise GlueDataError(f"{path}: empty file (expected "
                                f"{'a header line and ' if fmt.header else ''}examples)")
        if fmt.header:
            width = width or len(rows[0][1])
            self._check_header(path, fmt, rows[0][1])
            rows = rows[1:]
            if not rows:
                raise GlueDataError(f"{path}:1: only a header line; no {split} examples follow")
        examples, skipped = [], 0
        for number, fields in rows:
            where = f"{path}:{number}"
            if len(fields) != width:
                if self.task.skip_short_rows and split != "test" and len(fields) < width:
                    skipped += 1
                    continue
                raise GlueDataError(f"{where}: expected {width} tab-separated columns, got "
                                    f"{len(fields)}")
            example = self._example(fmt, split, number - 1, fields, where)
            empty = [name for name in ("text_a", "text_b") if getattr(example, name) == ""]
            if empty:
                message = (f"{where}: empty {' and '.join(empty)} (column "
                           f"{', '.join(str(getattr(fmt, n)) for n in empty)})")
                if split != "test" and not self.task.allow_empty_text:
                    raise GlueDataError(message)
                logging.warning("%s; kept, as the original keeps it", message)
            examples.append(example)
        self.skipped_rows = skipped
        if skipped:
            logging.warning("%s: skipped %d rows with missing columns (as the original does)",
                            path, skipped)
        if not examples:
            raise GlueDataError(f"{path}: no {split} examples (all {skipped} rows skipped)")
        return examples

    def _check_header(self, path, fmt: SplitFormat, header: list) -> None:
        """A header with fewer columns than the task reads is another task's (or split's) file."""
        if len(header) < fmt.min_columns():
            read = ", ".join(f"{name} from column {'last' if i == -1 else i}"
                             for name, i in fmt.columns_read().items())
            raise GlueDataError(
                f"{path}:1: header has {len(header)} columns ({' | '.join(header)}) but task "
                f"{self.name} reads {read} (at least {fmt.min_columns()} columns); is this "
                f"the {self.task.directory} {fmt.file} file?")

    def _example(self, fmt: SplitFormat, split, index, fields, where) -> InputExample:
        guid = f"{split}-{index}" if fmt.guid is None else self.process_text(fields[fmt.guid])
        text_a = self.process_text(fields[fmt.text_a])
        text_b = self.process_text(fields[fmt.text_b]) if fmt.text_b is not None else None
        if fmt.label is None:
            label = self.task.test_label
        elif self.task.is_regression:
            raw = fields[fmt.label]
            try:
                label = float(raw)
            except ValueError:
                raise GlueDataError(f"{where}: score {raw!r} is not a number") from None
        else:
            label = self.process_text(fields[fmt.label])
            if label not in self.task.labels:
                raise GlueDataError(f"{where}: unknown label {label!r}; task {self.name} "
                                    f"has labels {list(self.task.labels)}")
        return InputExample(guid, text_a, text_b, label, where)


def task_names() -> list[str]:
    return sorted(TASKS)


def get_processor(task_name: str, use_spm: bool = True, do_lower_case: bool = True) -> GlueProcessor:
    key = task_name.lower()
    if key not in TASKS:
        raise GlueDataError(f"unknown task {task_name!r}; known tasks: {', '.join(task_names())}")
    return GlueProcessor(TASKS[key], use_spm=use_spm, do_lower_case=do_lower_case)

