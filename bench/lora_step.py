"""A classifier's training step on the demo's model, full fine-tuning against `--lora_rank`
(docs/compression.md): each variant timed in ONE process, round-robin, so a shared machine's
load hits both alike; each line gives the step's best time over the rounds and its time
relative to full fine-tuning.

    python bench/lora_step.py [--steps 20] [--rounds 3] [--batch 32] [--seq 64]

The step is the scripts' own (`albert_tf.training.TrainStep`, AdamW) on random ids of the
demo's shapes (albert_tf.demo.stages.DemoOptions: 6 passes, H=128, E=64, V=3,000), a 2-class
head; `lora8` is `models.lora.enable_lora(model, 8)` (query and value at rank 8, the word
table's rank-1 adapter).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_tf.demo.stages import DemoOptions, model_config  # noqa: E402
from albert_tf.models import AlbertClassifier, per_example_loss  # noqa: E402
from albert_tf.models.lora import enable_lora, parameter_counts  # noqa: E402
from albert_tf.optimization import create_optimizer  # noqa: E402
from albert_tf.training import Runtime, RuntimeConfig, TrainStep  # noqa: E402
from albert_tf.training.steps import Objective  # noqa: E402

RANKS = {"full": 0, "lora8": 8}


def _loss(outputs, features):
    return tf.reduce_mean(per_example_loss(outputs["logits"], features["label_ids"], False,
                                           False)), {}


def build(name, batch, seq):
    options = DemoOptions(max_seq_length=seq, num_hidden_layers=6)
    config = model_config(options, options.vocab_size)
    runtime = Runtime(RuntimeConfig())
    with runtime.scope():
        model = AlbertClassifier(config, 2)
        if RANKS[name]:
            enable_lora(model, RANKS[name])
        optimizer = create_optimizer(1e-4, 1000, 10, "adamw")
        optimizer.build(model.trainable_variables)
    step = TrainStep(runtime, model, optimizer, Objective(_loss))
    rng = np.random.default_rng(0)
    data = {"input_ids": tf.constant(rng.integers(5, options.vocab_size, (batch, seq)), tf.int32),
            "input_mask": tf.ones((batch, seq), tf.int32),
            "segment_ids": tf.zeros((batch, seq), tf.int32),
            "label_ids": tf.constant(rng.integers(0, 2, (batch,)), tf.int32)}
    iterator = iter(runtime.strategy.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.from_tensors(data).repeat()))
    float(step(iterator)[0])  # trace, not timed
    return (lambda: step(iterator)[0]), parameter_counts(model)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=64)
    args = parser.parse_args(argv)
    built = {name: build(name, args.batch, args.seq) for name in RANKS}
    times = {name: [] for name in RANKS}
    for _ in range(args.rounds):
        for name, (fn, _) in built.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                value = fn()
            float(value)
            times[name].append((time.perf_counter() - start) / args.steps)
    base = min(times["full"])
    for name, (_, trained) in built.items():
        best = min(times[name])
        print(f"{name:<6} trained={trained:<7} step_s={best:.3f} (rounds "
              f"{' '.join(f'{t:.3f}' for t in times[name])}) vs_full={best / base:.2f}")
    print(f"load_avg={' '.join(f'{x:.1f}' for x in os.getloadavg())} cpus={os.cpu_count()}")


if __name__ == "__main__":
    main()
