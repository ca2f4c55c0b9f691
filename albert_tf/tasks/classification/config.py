"""run_classifier.py's run config (TensorFlow-free: the script checks its flags before TF starts).

One config for every example source: the GLUE flags at the top level, and `files`, the flags of
your own files (`--task_name=csv|tsv|jsonl`), grouped; every field keeps its flat flag name
(`--train_file`, `--text_a_column`, ...), which `dataclass_from_flat` fills the group from.
"""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.run_config import ScheduleConfig, TextTaskConfig


# --task_name values that read your own files rather than a GLUE task (`sources.FileSource`).
CUSTOM_FORMATS = ("csv", "tsv", "jsonl")
TASK_TYPES = ("classification", "regression")
# The flag naming each split's file of your own data.
SPLIT_FLAGS = {"train": "train_file", "dev": "dev_file", "test": "test_file"}


class ClassifierRunError(UsageError):
    """Flags that cannot work together, or a missing input the run needs."""


@dataclasses.dataclass
class FilesConfig:
    """Your own files: where each split is, which column holds what, and the labels."""

    train_file: str | None = None
    dev_file: str | None = None
    test_file: str | None = None
    text_a_column: str = "text"
    text_b_column: str | None = None
    label_column: str = "label"
    id_column: str | None = None
    label_list: str | None = None  # comma-separated names in id order (or a list)
    task_type: str = "classification"
    quotechar: str | None = None  # CSV-style quoting (TSV: off unless given; CSV: '"')

    def split_file(self, split: str) -> str | None:
        return getattr(self, SPLIT_FLAGS[split])


@dataclasses.dataclass
class ClassifierRunConfig(TextTaskConfig):
    """The original `run_classifier.py` flags (same names and defaults), and `files`."""

    FLAG_NAMES = {"num_train_steps": "train_step", "num_warmup_steps": "warmup_step"}

    data_dir: str | None = None
    task_name: str | None = None
    cached_dir: str | None = None
    albert_hub_module_handle: str | None = None
    threshold_to_export: float = float("nan")
    tflite: str = ""  # kinds of TFLite file written beside the export (export/tflite.py)
    shuffle_buffer: int = 100
    seed: int | None = None
    files: FilesConfig = dataclasses.field(default_factory=FilesConfig)
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)

    @property
    def reads_files(self) -> bool:
        """Whether `--task_name` names a file format (your own data) rather than a GLUE task."""
        return (self.task_name or "").lower() in CUSTOM_FORMATS


GlueRunConfig = ClassifierRunConfig  # the name run_classifier.py and older callers use
