"""Fewer passes of the shared layer, served: the int8 TFLite latency of an ALBERT-base classifier
run with K passes against the same weights run 12 times (issue 50: the 6-pass student at
<= 0.55x the 12-pass file's latency).

    python bench/passes_latency.py [--passes 12,6,3] [--rounds 5] [--threads 1]

Builds ALBERT-base (random weights, seed 0: the latency does not depend on the values), writes one
dynamic_int8 TFLite file per pass count through the same converter as `--tflite=dynamic_int8`
(`albert_tf.serving.tflite.convert`, the model rebuilt with `config.with_passes`), and times the
files interleaved round by round at seq 128, batch 1 (medians; ratios to the first count).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import tensorflow as tf

from albert_tf.config import preset, with_passes
from albert_tf.models import AlbertClassifier
from albert_tf.serving.lite import interpreter_runner
from albert_tf.serving.tflite import convert, sample_inputs

SEQ = 128


def classifier(config, weights=None):
    """An ALBERT-base classifier with `config`'s passes, built and given `weights`."""
    model = AlbertClassifier(config, 2)
    feed = sample_inputs(SEQ, config.vocab_size, batch=1)
    model({"input_ids": feed["input_word_ids"], "input_mask": feed["input_mask"],
           "segment_ids": feed["input_type_ids"]})
    if weights is not None:
        model.set_weights(weights)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", default="12,6,3")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    passes = [int(p) for p in args.passes.split(",")]
    tf.keras.utils.set_random_seed(0)
    base = preset("base")
    trained = classifier(base)
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.02, w.shape).astype(np.float32) for w in trained.get_weights()]
    runners, sizes = {}, {}
    for count in passes:
        model = classifier(with_passes(base, count) if count != base.num_hidden_layers else base,
                           weights)
        content = convert(model, SEQ, ["dynamic_int8"], outputs=("probabilities",))["dynamic_int8"]
        sizes[count] = len(content) / 1e6
        runners[count] = interpreter_runner(model_content=content, num_threads=args.threads)
    feed = sample_inputs(SEQ, base.vocab_size, batch=1)
    times = {count: [] for count in passes}
    for run in runners.values():
        run(**feed)
    for _ in range(args.rounds):
        for count, run in runners.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                run(**feed)
            times[count].append((time.perf_counter() - start) / args.calls)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"ALBERT-base classifier, dynamic_int8 TFLite, seq {SEQ}, batch 1, {args.threads} "
          f"thread(s), median of {args.rounds} rounds of {args.calls} calls; load {load}")
    first = statistics.median(times[passes[0]])
    print(f"{'passes':>6s} {'file MB':>8s} {'ms a call':>10s} {'ratio':>6s}")
    for count in passes:
        median = statistics.median(times[count])
        print(f"{count:6d} {sizes[count]:8.2f} {median * 1e3:10.1f} {median / first:6.2f}")


if __name__ == "__main__":
    main()
