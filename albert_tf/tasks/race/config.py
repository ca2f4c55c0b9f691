"""run_race.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.run_config import STEP_FLAG_NAMES, ScheduleConfig, TextTaskConfig


@dataclasses.dataclass
class RaceRunConfig(TextTaskConfig):
    """The original `run_race.py` flags (same names and defaults)."""

    FLAG_NAMES = STEP_FLAG_NAMES

    data_dir: str | None = None
    train_file: str | None = None
    eval_file: str | None = None
    predict_file: str | None = None
    dropout_prob: float = 0.1
    max_qa_length: int = 128
    high_only: bool = False
    middle_only: bool = False
    do_train: bool = True
    do_eval: bool = True
    schedule: ScheduleConfig = dataclasses.field(default_factory=lambda: ScheduleConfig(
        learning_rate=1e-5, num_train_steps=12000, num_warmup_steps=1000,
        save_checkpoints_steps=100, keep_checkpoint_max=0))
