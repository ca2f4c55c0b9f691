"""Will a training step fit? An estimate of the memory one step needs, from the batch, the
sequence length and the model, against what this machine has; checked before the first step,
so a batch that cannot fit is one error naming the flags instead of a process the kernel kills.

The estimate: the weights, their gradients and two optimizer slots (LAMB and AdamW keep two),
float32, and two more weight-sized tensors for the clipped gradients and the optimizer's update
(what a step of ALBERT-xxlarge, whose weights dominate it, measured above its weights and slots);
plus the activations the backward pass keeps for one micro-batch (the batch split by
`--gradient_accumulation_steps`), about s·b·h·(34 + 5·a·s/h) values per layer (the usual
transformer account: Korthikanti et al. 2022), twice that in bytes for float32, and the masked-LM
/ classifier logits. With `--recompute` the backward pass keeps only each layer's input
(s·b·h values) and recomputes one layer's activations at a time. ALBERT's own term: every pass
of a shared block yields a gradient the size of the block's weights. Without recomputation
TensorFlow holds them until it sums them, L − 1 more weight-sized gradients for L passes; with
it they are summed pass by pass (`layers/encoder.py`): a running sum per block, plus the
recomputed pass's own gradient and the copy of its weights the recomputation reads; and as
`--recompute` also updates one variable at a time, after the backward pass has freed its
tensors, its step needs the larger of the backward pass (weights, slots, the kept inputs, the
running sums) and the update (weights, slots, gradients, the clipped gradients and twice the
largest variable for one variable's temporaries). And
TensorFlow's own: the traced step's graph and kernels, about 200 MB plus 7 MB a pass (11
recomputed), measured on a model whose weights and activations are small. The estimate is
0.89-1.20 of the measured peak of base, large and xxlarge steps (docs/distributed.md). Only the
host's memory is checked (a CPU run); an accelerator's own memory is the framework's to report.
"""

from __future__ import annotations

import os

from albert_tf.errors import UsageError
from albert_tf.param_counts import encoder_params

GB = 1024 ** 3
MB = 1024 ** 2


class StepMemoryError(UsageError):
    """A training step that cannot fit in this machine's memory."""


def step_bytes(config, batch_size: int, seq_length: int, accumulation: int = 1,
               predictions: int = 20, bf16: bool = False, recompute: bool = False) -> int:
    """Bytes one training step needs (see the module docstring)."""
    params = encoder_params(config) + config.vocab_size + config.embedding_size * 2
    state = params * 4 * (4 + (1 if accumulation > 1 else 0))  # weights, grads, 2 slots, sum
    update = params * 4 * 2  # the clipped gradients and the optimizer's update's temporaries
    micro = max(1, -(-int(batch_size) // max(1, int(accumulation))))
    s, h, a = int(seq_length), config.hidden_size, config.num_attention_heads
    value_bytes = 2 if bf16 else 4
    per_layer = s * micro * h * (34 + 5 * a * s / h) * value_bytes / 2  # the count is for 2-byte values
    logits = micro * max(predictions, 1) * config.vocab_size * 4 * 3
    embeddings = micro * s * (config.embedding_size + h) * 4 * 4
    block = (4 * h * h + 9 * h + 2 * h * config.intermediate_size + config.intermediate_size)
    blocks = len(set(config.group_map())) * config.inner_group_num  # distinct blocks
    passes = config.num_hidden_layers * config.inner_group_num
    if recompute:  # each layer's input kept, one layer's activations at a time
        activations = config.num_hidden_layers * s * micro * h * value_bytes + per_layer
        held = (blocks + 2) * block * 4  # running sums, one pass's gradient and weights' copy
        graph = 200 * MB + passes * 11 * MB
        # The updates run one variable at a time (`optimization.serial_updates`) once the
        # backward pass is over and its tensors are freed: the step's peak is the larger phase.
        weights_and_slots = params * 4 * 3
        largest = max(config.hidden_size * config.intermediate_size,
                      config.vocab_size * config.embedding_size)
        backward = weights_and_slots + activations + held + logits + embeddings
        updating = weights_and_slots + params * 4 * 2 + largest * 4 * 2  # grads, clipped
        return int(max(backward, updating) + graph)
    else:  # each pass's gradient of a shared block held until they are summed
        activations = config.num_hidden_layers * per_layer
        held = max(0, passes - blocks) * block * 4
        graph = 200 * MB + passes * 7 * MB
    return int(state + update + activations + held + graph + logits + embeddings)


def available_bytes() -> int | None:
    """What this process may still use: MemAvailable, or less under a cgroup limit; None when
    neither can be read (not Linux)."""
    found = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
                found.append(int(limit) - int(f.read().strip()))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def check_step_fits(config, batch_size: int, seq_length: int, accumulation: int = 1,
                    predictions: int = 20, bf16: bool = False, available=None,
                    recompute: bool = False) -> int:
    """Raises `StepMemoryError` when the estimate exceeds the memory available; returns the
    estimate. ALBERT_TF_SKIP_MEMORY_CHECK=1 skips the refusal (the estimate can be wrong)."""
    needed = step_bytes(config, batch_size, seq_length, accumulation, predictions, bf16,
                        recompute)
    available = available_bytes() if available is None else available
    if available is None or os.environ.get("ALBERT_TF_SKIP_MEMORY_CHECK", "") not in ("", "0"):
        return needed
    if needed > available:
        micro = -(-int(batch_size) // max(1, int(accumulation)))
        raise StepMemoryError(
            f"a training step needs about {needed / GB:.1f} GB (--train_batch_size={batch_size} "
            f"in micro-batches of {micro} with --gradient_accumulation_steps={accumulation}, "
            f"length {seq_length}, hidden {config.hidden_size} x {config.num_hidden_layers} "
            f"layers) but this machine has {available / GB:.1f} GB available: lower "
            "--train_batch_size or raise --gradient_accumulation_steps (or set "
            "ALBERT_TF_SKIP_MEMORY_CHECK=1 if the estimate is wrong)")
    return needed
