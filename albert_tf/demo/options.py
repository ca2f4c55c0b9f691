"""The demo's settings: `DemoOptions` (the fast default), `full_options()` (`--full`, the longer
run of before), the schedules, and the pretraining precision (bf16 where the CPU has it)."""

from __future__ import annotations

import dataclasses
import os

from albert_tf.run_config import ScheduleConfig

# CPU flags of native bfloat16 matmuls (Intel AMX, AVX-512 BF16): there, pretraining in bf16
# takes about 0.4x the float32 step (docs/benchmarks.md); elsewhere bf16 is emulated and slower.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")
# The default (fast) run: 2 passes of the shared block at LAMB 1e-2. Six passes at 2e-3 stay on
# the unigram plateau (masked-LM accuracy about 0.08) for 300 steps and answer one sentence
# order to every pair; two leave it within 250 steps and learn an order that holds on held-out
# documents (docs/benchmarks.md). `full_options()` keeps the longer run of before.
FAST_PRETRAIN_STEPS, FAST_PRETRAIN_LR, FAST_LAYERS = 1750, 1e-2, 2
# Fine-tuning at 2e-4 for 200 steps collapsed to the majority class (dev 0.513) from one of
# three bf16 pretrainings (their results vary run to run); 1e-4 for 300 steps never did.
FAST_FINETUNE_STEPS, FAST_FINETUNE_LR = 300, 1e-4


def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bfloat16 natively (Linux's /proc/cpuinfo flags; False
    where there is no such file)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines()
                  if line.startswith("flags")), [])
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def default_precision() -> str:
    """The demo's pretraining precision: bf16 where the CPU has it natively, else float32."""
    return "bf16" if cpu_has_bf16() else "none"


def demo_schedule(steps: int, batch_size: int, learning_rate: float,
                  optimizer: str = "adamw") -> ScheduleConfig:
    """`steps` steps of `batch_size`, a tenth of them warm-up, one checkpoint at the end."""
    return ScheduleConfig(train_batch_size=batch_size, eval_batch_size=64, predict_batch_size=64,
                          learning_rate=learning_rate, optimizer=optimizer, num_train_steps=steps,
                          num_warmup_steps=steps // 10, save_checkpoints_steps=steps,
                          # every 5 %: the console's first progress line (ETA) comes sooner
                          log_every_steps=max(1, steps // 20))


def with_steps(schedule: ScheduleConfig, steps: int) -> ScheduleConfig:
    """`schedule` stretched to `steps` (its warm-up and checkpoint follow)."""
    return demo_schedule(steps, schedule.train_batch_size, schedule.learning_rate,
                         schedule.optimizer)


@dataclasses.dataclass
class DemoOptions:
    output_dir: str = "albert_demo"
    input_file: str | None = None     # the user's text; default: Python's own documentation
    vocab_size: int = 3000
    max_seq_length: int = 64
    max_predictions_per_seq: int = 10
    # 10, not 4: the default text is small (0.63 MB); at 4 the 1750 steps saw each training
    # pair 12 times (training SOP 0.97 against 0.88 at 10; held-out 0.52-0.54 either way)
    dupe_factor: int = 10
    heldout_fraction: float = 0.1
    hidden_size: int = 128
    embedding_size: int = 64
    num_hidden_layers: int = FAST_LAYERS
    num_attention_heads: int = 4
    intermediate_size: int = 512
    pretrain: ScheduleConfig = dataclasses.field(
        default_factory=lambda: demo_schedule(FAST_PRETRAIN_STEPS, 64, FAST_PRETRAIN_LR, "lamb"))
    finetune: ScheduleConfig = dataclasses.field(
        default_factory=lambda: demo_schedule(FAST_FINETUNE_STEPS, 32, FAST_FINETUNE_LR))
    # pretraining's mixed precision ("none" or "bf16"); fine-tuning and exports stay float32
    pretrain_precision: str = dataclasses.field(default_factory=default_precision)
    max_task_examples: int = 4000
    num_workers: int = 0
    seed: int = 12345

    def path(self, *parts) -> str:
        return os.path.join(self.output_dir, *parts)


def full_options(**values) -> DemoOptions:
    """`--full`: the demo as it ran before the fast default (800 float32 pretraining steps of a
    6-pass model, 300 fine-tuning steps), about 2x longer for much the same results."""
    return DemoOptions(**{"num_hidden_layers": 6, "pretrain_precision": "none",
                          "pretrain": demo_schedule(800, 64, 2e-3, "lamb"),
                          "finetune": demo_schedule(300, 32, 1e-4), **values})
