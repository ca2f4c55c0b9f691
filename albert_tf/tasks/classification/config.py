"""run_classifier.py's run config (TensorFlow-free: the script checks its flags before TF starts).

One config for every example source: the GLUE flags at the top level, and `files`, the flags of
your own files (`--task_name=csv|tsv|jsonl`), grouped; every field keeps its flat flag name
(`--train_file`, `--text_a_column`, ...), which `dataclass_from_flat` fills the group from.
"""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.run_config import (ClassifierTaskConfig, ScheduleConfig, SplitFiles,
                                  check_distillation, check_doc_stride)


# --task_name values that read your own files rather than a GLUE task (`sources.FileSource`).
CUSTOM_FORMATS = ("csv", "tsv", "jsonl")
# "single_label" is another name of "classification" (one class per example).
TASK_TYPES = ("classification", "single_label", "multi_label", "regression")
LONG_DOCUMENT = ("first", "windows")  # --long_document: the first window, or all of them
WINDOW_POOLING = ("mean", "max")
# The flag naming each split's file of your own data.


class ClassifierRunError(UsageError):
    """Flags that cannot work together, or a missing input the run needs."""


@dataclasses.dataclass
class FilesConfig(SplitFiles):
    """Your own files: where each split is, which column holds what, and the labels."""

    text_a_column: str = "text"
    text_b_column: str | None = None
    label_column: str = "label"
    id_column: str | None = None
    label_list: str | None = None  # comma-separated names in id order (or a list)
    task_type: str = "classification"
    label_separator: str = ","  # multi_label: between the names of one label cell
    quotechar: str | None = None  # CSV-style quoting (TSV: off unless given; CSV: '"')

    def __post_init__(self):
        if self.task_type == "single_label":
            self.task_type = "classification"

    @property
    def multi_label(self) -> bool:
        return self.task_type == "multi_label"



@dataclasses.dataclass
class ClassifierRunConfig(ClassifierTaskConfig):
    """The original `run_classifier.py` flags (same names and defaults), and `files`; the
    fields it shares with run_ner.py are `ClassifierTaskConfig`'s."""

    data_dir: str | None = None
    task_name: str | None = None
    albert_hub_module_handle: str | None = None
    threshold_to_export: float = float("nan")
    threshold: float = 0.5  # multi_label: a label is chosen when its probability >= it
    long_document: str = "first"
    window_pooling: str = "mean"
    files: FilesConfig = dataclasses.field(default_factory=FilesConfig)
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)

    def __post_init__(self):
        super().__post_init__()
        check_windows(self.long_document, self.window_pooling, self.doc_stride,
                      self.max_seq_length)
        if not 0.0 < float(self.threshold) < 1.0:
            raise ClassifierRunError(f"--threshold must be between 0 and 1 (exclusive), got "
                                     f"{self.threshold}")
        self._refuse_unused_flags()
        self._check_distillation()

    def _check_distillation(self) -> None:
        """--distill_from (`run_config.check_distillation`): a single-label classifier of one
        window per text."""
        check_distillation(self, ClassifierRunError)
        if self.distill_from and (self.files.multi_label or self.files.task_type == "regression"
                                  or self.long_document == "windows"):
            raise ClassifierRunError("--distill_from distils a single-label classifier of one "
                                     "window per text (not --task_type=multi_label or "
                                     "regression, nor --long_document=windows)")

    def _refuse_unused_flags(self) -> None:
        """A flag given on the command line that this kind of run would ignore without a word
        is an error naming it (`TextClassifier` checks its arguments in `ApiSettings`)."""
        given = self.flags_given or ()
        unused = []
        if not self.files.multi_label:
            unused += [(f"--{name}", "--task_type=multi_label",
                        f"--task_type={self.files.task_type}")
                       for name in ("threshold", "label_separator") if name in given]
        if self.long_document != "windows":
            unused += [(f"--{name}", "--long_document=windows",
                        f"--long_document={self.long_document}")
                       for name in ("window_pooling", "doc_stride") if name in given]
        for flag, needs, has in unused[:1]:
            raise ClassifierRunError(f"{flag} is used only with {needs} and this run has {has}: "
                                     f"leave it out, or pass {needs}")

    @property
    def reads_files(self) -> bool:
        """Whether `--task_name` names a file format (your own data) rather than a GLUE task."""
        return (self.task_name or "").lower() in CUSTOM_FORMATS


def check_windows(long_document: str, window_pooling: str, doc_stride,
                  max_seq_length: int, prefix: str = "--") -> None:
    """The long-document settings, each named by its flag (`prefix` "": an argument name)."""
    if long_document not in LONG_DOCUMENT:
        raise ClassifierRunError(f"{prefix}long_document must be first or windows, got "
                                 f"{long_document!r}")
    if window_pooling not in WINDOW_POOLING:
        raise ClassifierRunError(f"{prefix}window_pooling must be mean or max, got "
                                 f"{window_pooling!r}")
    check_doc_stride(doc_stride, max_seq_length, prefix, ClassifierRunError)


GlueRunConfig = ClassifierRunConfig  # the name run_classifier.py and older callers use
