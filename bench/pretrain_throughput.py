"""Pretraining throughput: one full train step (forward, backward, global-norm clipping, LAMB
update) of ALBERT-base with MLM + SOP heads, through the same `albert_tf.training` step that
run_pretraining.py uses.

    python bench/pretrain_throughput.py [--precision none|bf16|fp16] [--jit] [--batch 8]
        [--seq 128] [--predictions 20] [--steps 5] [--size base|large|xlarge|xxlarge]

Prints one line with `ex_per_s=` and `gflops=`; the FLOP count is the peers' convention,
6·L·(4H² + 2HI) + 12·L·S·H per token (matmuls forward + backward, attention scores/context),
so the figure compares directly with ../shared/bench/peer_*.py run on the same machine.

The keras-hub peer needs keras-hub beside the project, not in requirements.txt, e.g.
    python -m venv --system-site-packages .peers/venv && .peers/venv/bin/pip install keras-hub
    python bench/pretrain_throughput.py --peer_python .peers/venv/bin/python
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

from albert_tf import AlbertPretrainer, preset  # noqa: E402
from albert_tf.optimization import create_optimizer  # noqa: E402
from albert_tf.training import Runtime, RuntimeConfig, TrainStep  # noqa: E402
from albert_tf.tasks.pretraining.objective import pretraining_objective  # noqa: E402


def flops_per_token(config, seq):
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return 6 * layers * (4 * h * h + 2 * h * i) + 12 * layers * seq * h


def features(batch, seq, predictions, vocab, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "input_ids": rng.integers(5, vocab, (batch, seq)).astype(np.int32),
        "input_mask": np.ones((batch, seq), np.int32),
        "segment_ids": (np.arange(seq)[None, :] >= seq // 2).astype(np.int32).repeat(batch, 0),
        "masked_lm_positions": np.tile(np.arange(1, predictions + 1), (batch, 1)).astype(np.int32),
        "masked_lm_ids": rng.integers(5, vocab, (batch, predictions)).astype(np.int32),
        "masked_lm_weights": np.ones((batch, predictions), np.float32),
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype(np.int32),
    }


def _timed(fn, steps):
    float(fn())
    start = time.perf_counter()
    for _ in range(steps):
        value = fn()
    float(value)
    return (time.perf_counter() - start) / steps


def breakdown(model, batch, steps, full_step_s, jit):
    """Where a step's time goes: forward, backward (fwd+bwd − fwd), the rest (clipping,
    cross-replica sums, LAMB update)."""
    from albert_tf.models import pretraining_losses

    @tf.function(jit_compile=jit)
    def forward():
        return pretraining_losses(model(batch, training=True, heads_only=True), batch)[0]

    @tf.function(jit_compile=jit)
    def forward_backward():
        with tf.GradientTape() as tape:
            loss = pretraining_losses(model(batch, training=True, heads_only=True), batch)[0]
        grads = tape.gradient(loss, model.trainable_variables)
        return loss + tf.add_n([tf.reduce_sum(tf.convert_to_tensor(g)[..., :1]) for g in grads]) * 0

    fwd = _timed(forward, steps)
    fwd_bwd = _timed(forward_backward, steps)
    return (f"breakdown forward_s={fwd:.3f} backward_s={fwd_bwd - fwd:.3f} "
            f"update_and_rest_s={full_step_s - fwd_bwd:.3f} step_s={full_step_s:.3f}")


def run_peer(python, batch, steps):
    import subprocess

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.environ.get("ALBERT_TF_SHARED", os.path.join(os.path.dirname(repo), "shared"))
    script = os.path.join(shared, "bench", "peer_keras_hub.py")
    result = subprocess.run([python, script, str(batch), str(steps), "none"], capture_output=True,
                            text=True, check=True)
    return [line for line in result.stdout.splitlines() if line.startswith("keras_hub")][-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--precision", default="none", choices=["none", "bf16", "fp16"])
    parser.add_argument("--jit", action="store_true", help="XLA-compile forward + backward")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--size", default="base")
    parser.add_argument("--vocab", type=int, default=30000)
    parser.add_argument("--peer_python", default=None,
                        help="a Python with keras-hub installed: also run ../shared/bench/"
                             "peer_keras_hub.py in this run and print our GFLOP/s ratio")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the forward pass and forward+backward on their own")
    args = parser.parse_args(argv)

    config = preset(args.size, vocab_size=args.vocab, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0)
    runtime = Runtime(RuntimeConfig(mixed_precision=args.precision, jit_compile=args.jit))
    with runtime.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(1e-4, 1000, 10, "lamb")
        optimizer.build(model.trainable_variables)
    step = TrainStep(runtime, model, optimizer, pretraining_objective())
    batch = {k: tf.constant(v) for k, v in features(args.batch, args.seq, args.predictions,
                                                    args.vocab).items()}
    dataset = runtime.strategy.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.from_tensors(batch).repeat())
    iterator = iter(dataset)
    loss = step(iterator)[0]
    float(loss)  # compile + first step, not timed
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step(iterator)[0]
    float(loss)
    seconds = (time.perf_counter() - start) / args.steps
    gflops = flops_per_token(config, args.seq) * args.batch * args.seq / seconds / 1e9
    if args.breakdown:
        print(breakdown(model, batch, args.steps, seconds, args.jit))
    device = "gpu" if tf.config.list_logical_devices("GPU") else "cpu"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"albert_tf size={args.size} device={device} precision={args.precision} "
          f"jit={args.jit} batch={args.batch} seq={args.seq} step_s={seconds:.3f} "
          f"ex_per_s={args.batch / seconds:.2f} gflops={gflops:.1f} loss={float(loss):.4f} "
          f"load_avg={load}")
    if args.peer_python:
        peer = run_peer(args.peer_python, args.batch, args.steps)
        print(f"{peer}\nratio_vs_keras_hub={gflops / float(peer.split('gflops=')[1].split()[0]):.3f}")


if __name__ == "__main__":
    main()
