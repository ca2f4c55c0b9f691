"""run_race.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.run_config import STEP_FLAG_NAMES, ScheduleConfig, TextTaskConfig, check_at_least


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

    def __post_init__(self):
        super().__post_init__()
        # Each choice is [CLS] passage [SEP] question+option [SEP]: the question and option keep
        # their last --max_qa_length pieces, which must leave the 3 special tokens room (else
        # the records come out longer than --max_seq_length and the run fails much later).
        check_at_least(self, "max_qa_length", 1)
        room = int(self.max_seq_length) - 3
        given = self.flags_given
        if int(self.max_qa_length) <= room:
            return
        if given is not None and not {"max_seq_length", "max_qa_length"} & set(given):
            self.max_qa_length = room  # neither given: the length is the model's, shorter
            return
        whence = (" (the model's max_position_embeddings: no --max_seq_length was given)"
                  if given is not None and "max_seq_length" not in given else "")
        raise UsageError(
            f"--max_qa_length={self.max_qa_length} does not fit in "
            f"--max_seq_length={self.max_seq_length}{whence}: a choice holds [CLS], the passage, "
            f"[SEP], the question and option (up to --max_qa_length pieces) and [SEP], so "
            f"--max_qa_length must be at most --max_seq_length - 3 ({room}); pass "
            f"--max_qa_length={room} or less, or a larger --max_seq_length")
