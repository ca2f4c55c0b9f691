"""Peak memory of one pretraining step with and without --recompute (each pass of the shared
layer recomputed in the backward step), each in a process of its own: peak RSS (the kernel's
high-water mark, `ru_maxrss`), the RSS before the step (weights and optimizer slots built), the
step's time, and `training.memory.step_bytes`'s preflight estimate.

    python bench/recompute_memory.py [--sizes base,large,xxlarge] [--batch 8] [--seq 128]

One line per (size, recompute). The step is the one run_pretraining.py runs (MLM + SOP, LAMB,
clipping); its first call traces, so the second is timed, and its peak RSS measured on its own
(VmHWM reset through /proc/self/clear_refs before it). `measured_step_mb` = that peak − the RSS
after importing TensorFlow (what the estimate counts: weights, gradients, slots, activations).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "bench"))

MB = 1024 * 1024


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def _rss_bytes() -> int:
    return _status_bytes("VmRSS:")


def one(size: str, recompute: bool, batch: int, seq: int, predictions: int) -> dict:
    """In this process: one traced step, then one timed step."""
    import tensorflow as tf

    from albert_tf import AlbertPretrainer, preset
    from albert_tf.optimization import create_optimizer
    from albert_tf.tasks.pretraining.objective import pretraining_objective
    from albert_tf.training import Runtime, RuntimeConfig, TrainStep
    from albert_tf.training.memory import step_bytes
    from pretrain_throughput import features

    base = _rss_bytes()
    config = preset(size, vocab_size=30000, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0)
    runtime = Runtime(RuntimeConfig(recompute=recompute))
    with runtime.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(1e-4, 1000, 10, "lamb")
        optimizer.build(model.trainable_variables)
    step = TrainStep(runtime, model, optimizer, pretraining_objective())
    values = {k: tf.constant(v) for k, v in features(batch, seq, predictions, 30000).items()}
    iterator = iter(runtime.strategy.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.from_tensors(values).repeat()))
    built = _rss_bytes()
    float(step(iterator)[0])  # traces
    traced_peak = _status_bytes("VmHWM:")
    steady = _rss_bytes()
    with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM: the next step's own peak
        f.write("5")
    start = time.perf_counter()
    float(step(iterator)[0])
    seconds = time.perf_counter() - start
    peak = _status_bytes("VmHWM:")
    return {"size": size, "recompute": recompute, "batch": batch, "seq": seq,
            "step_s": round(seconds, 2), "rss_after_import_mb": base // MB,
            "rss_built_mb": built // MB, "first_step_peak_rss_mb": traced_peak // MB,
            "rss_between_steps_mb": steady // MB, "peak_rss_mb": peak // MB,
            "measured_step_mb": (peak - base) // MB,
            "estimate_mb": step_bytes(config, batch, seq, 1, predictions,
                                      recompute=recompute) // MB,
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="base,large")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # size:0|1, in a child
    args = parser.parse_args(argv)
    if args.one:
        size, recompute = args.one.split(":")
        print(json.dumps(one(size, recompute == "1", args.batch, args.seq, args.predictions)))
        return
    for size in args.sizes.split(","):
        for recompute in (0, 1):
            done = subprocess.run(
                [sys.executable, os.path.abspath(__file__), f"--one={size}:{recompute}",
                 f"--batch={args.batch}", f"--seq={args.seq}",
                 f"--predictions={args.predictions}"], capture_output=True, text=True)
            lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
            print(lines[-1] if lines else f"{size} recompute={recompute}: failed "
                  f"({done.returncode}): {done.stderr[-500:]}", flush=True)


if __name__ == "__main__":
    main()
