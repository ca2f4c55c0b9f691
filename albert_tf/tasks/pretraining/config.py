"""run_pretraining.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.run_config import RunConfig, ScheduleConfig, check_at_least


@dataclasses.dataclass
class PretrainingRunConfig(RunConfig):
    """The original `run_pretraining.py` flags (same names and defaults)."""

    input_file: str | None = None
    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    do_train: bool = True
    max_eval_steps: int = 100
    init_from_group0: bool = False
    masked_lm_budget: int = 0
    shuffle_seed: int | None = None
    # Ours: the weight of the sentence-order (or NSP) loss in the total; 0 trains MLM alone.
    sentence_order_loss_weight: float = 1.0
    schedule: ScheduleConfig = dataclasses.field(default_factory=lambda: ScheduleConfig(
        train_batch_size=4096, eval_batch_size=64, optimizer="lamb", learning_rate=0.00176,
        num_train_steps=125000, num_warmup_steps=3125, save_checkpoints_steps=5000))

    def __post_init__(self):
        # The records' shapes: [CLS] A [SEP] B [SEP], and at least one masked position.
        check_at_least(self, "max_seq_length", 5)
        check_at_least(self, "max_predictions_per_seq", 1)
        # 0 (or less) evaluated nothing and wrote an empty eval_results.txt.
        check_at_least(self, "max_eval_steps", 1)
