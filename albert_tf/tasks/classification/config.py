"""run_classifier.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.run_config import ScheduleConfig, TextTaskConfig


# --task_name values that read your own files rather than a GLUE task (albert_tf.tasks.custom).
CUSTOM_FORMATS = ("csv", "tsv", "jsonl")


class GlueRunError(UsageError):
    """Flags that cannot work together, or a missing input the run needs."""


@dataclasses.dataclass
class GlueRunConfig(TextTaskConfig):
    """The original `run_classifier.py` flags (same names and defaults)."""

    FLAG_NAMES = {"num_train_steps": "train_step", "num_warmup_steps": "warmup_step"}

    data_dir: str | None = None
    task_name: str | None = None
    cached_dir: str | None = None
    albert_hub_module_handle: str | None = None
    threshold_to_export: float = float("nan")
    tflite: str = ""  # kinds of TFLite file written beside the export (export/tflite.py)
    shuffle_buffer: int = 100
    seed: int | None = None
    # --task_name=csv|tsv|jsonl: your own data (albert_tf.tasks.custom)
    train_file: str | None = None
    dev_file: str | None = None
    test_file: str | None = None
    text_a_column: str = "text"
    text_b_column: str | None = None
    label_column: str = "label"
    id_column: str | None = None
    label_list: str | None = None
    task_type: str = "classification"
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)
