"""The demo's pretraining step, profiled: each variant (XLA, bf16, model shape, batch) timed in
ONE process, round-robin, so a shared machine's load hits every variant alike; each line gives
the step's time, its FLOPs, GFLOP/s and its time relative to the first variant.

    python bench/demo_step.py [--steps 10] [--rounds 3] [--variants base,jit,...]

The step is run_pretraining.py's own (`albert_tf.training.TrainStep`, LAMB, MLM + SOP) on random
ids of the demo's shapes (albert_tf.demo.stages.DemoOptions). FLOPs per token: the peers'
convention (bench/pretrain_throughput.py) plus the MLM head's E×V matmul per prediction.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorflow as tf  # noqa: E402

from albert_tf import AlbertPretrainer  # noqa: E402
from albert_tf.demo.stages import DemoOptions, model_config  # noqa: E402
from albert_tf.optimization import create_optimizer  # noqa: E402
from albert_tf.tasks.pretraining.objective import pretraining_objective  # noqa: E402
from albert_tf.training import Runtime, RuntimeConfig, TrainStep  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pretrain_throughput import features, flops_per_token  # noqa: E402

FULL = DemoOptions(max_seq_length=64, num_hidden_layers=6)
# name: (DemoOptions overrides, batch, jit, precision)
VARIANTS = {
    "full": ({}, 64, False, "none"),
    "full_jit": ({}, 64, True, "none"),
    "full_bf16": ({}, 64, False, "bf16"),
    "full_jit_bf16": ({}, 64, True, "bf16"),
    "l4": ({"num_hidden_layers": 4}, 64, False, "none"),
    "l4_jit": ({"num_hidden_layers": 4}, 64, True, "none"),
    "l4_s48_jit": ({"num_hidden_layers": 4, "max_seq_length": 48}, 64, True, "none"),
    "l4_b32_jit": ({"num_hidden_layers": 4}, 32, True, "none"),
}


def step_flops(options: DemoOptions, batch: int) -> float:
    config = model_config(options, options.vocab_size)
    seq = options.max_seq_length
    encoder = flops_per_token(config, seq) * batch * seq
    head = 6 * config.embedding_size * options.vocab_size * batch * options.max_predictions_per_seq
    return encoder + head


def build(name):
    overrides, batch, jit, precision = VARIANTS[name]
    options = dataclasses.replace(FULL, **overrides)
    config = model_config(options, options.vocab_size)
    runtime = Runtime(RuntimeConfig(mixed_precision=precision, jit_compile=jit))
    with runtime.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(2e-3, 1000, 10, "lamb")
        optimizer.build(model.trainable_variables)
    step = TrainStep(runtime, model, optimizer, pretraining_objective())
    data = {k: tf.constant(v) for k, v in features(
        batch, options.max_seq_length, options.max_predictions_per_seq, options.vocab_size).items()}
    iterator = iter(runtime.strategy.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.from_tensors(data).repeat()))
    float(step(iterator)[0])  # trace + compile, not timed
    return (lambda: step(iterator)[0]), step_flops(options, batch), batch


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default="full,full_jit,full_bf16,full_jit_bf16,l4_jit")
    args = parser.parse_args(argv)
    names = args.variants.split(",")
    built = {name: build(name) for name in names}
    times = {name: [] for name in names}
    for _ in range(args.rounds):
        for name in names:
            fn = built[name][0]
            start = time.perf_counter()
            for _ in range(args.steps):
                value = fn()
            float(value)
            times[name].append((time.perf_counter() - start) / args.steps)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    base = min(times[names[0]])
    for name in names:
        _, flops, batch = built[name]
        best = min(times[name])
        print(f"{name:<16} batch={batch:<3} step_s={best:.3f} (rounds "
              f"{' '.join(f'{t:.3f}' for t in times[name])}) gflop={flops / 1e9:.1f} "
              f"gflops={flops / best / 1e9:.1f} vs_first={best / base:.2f}")
    print(f"load_avg={load} cpus={os.cpu_count()}")


if __name__ == "__main__":
    main()
