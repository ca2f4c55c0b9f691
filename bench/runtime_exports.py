"""ONNX and OpenVINO files of ALBERT-base (issue 48): their sizes and their speed beside the
TensorFlow function they were converted from, at seq 128, batch 1 and 32.

    python bench/runtime_exports.py [--rounds 5] [--threads 2] [--out /tmp/albert_runtimes]
        [--peer_python .peers/ort_env/bin/python]

Builds an ALBERT-base classifier (random weights, seed 0: sizes and speed do not depend on the
values), writes its float32 and dynamic_int8 files through the same writers as
`export_saved_model.py --onnx --openvino`, and times each runtime on the same ids, interleaved
round by round (medians; a shared machine's load moves absolute times, so compare ratios).
With `--peer_python` (a bench-only Python holding torch + transformers, see bench/ort_peer.py),
ONNX Runtime on Hugging Face's export of ALBERT-base (../shared/bench/peer_onnxruntime.py) is
timed too; without it that row is skipped with a message.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf

from albert_tf.config import preset
from albert_tf.models import AlbertClassifier
from albert_tf.serving import openvino_export, runtimes
from albert_tf.serving.tflite import sample_inputs, serving_function

SEQ = 128
PEER = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench",
                    "peer_onnxruntime.py")


def cpu_features() -> str:
    try:
        with open("/proc/cpuinfo") as reader:
            flags = next(line for line in reader if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "unknown"
    return " ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_int8")
                    if f in flags)


def size_mb(path) -> float:
    total = os.path.getsize(path)
    if path.endswith(".xml"):
        total += os.path.getsize(path[:-4] + ".bin")
    return total / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="/tmp/albert_runtimes")
    parser.add_argument("--peer_python", default=None)
    args = parser.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.keras.utils.set_random_seed(0)
    model = AlbertClassifier(preset("base"), 2)
    feeds = {b: sample_inputs(SEQ, 30000, batch=b) for b in (1, 32)}
    feed1 = feeds[1]
    model({"input_ids": feed1["input_word_ids"], "input_mask": feed1["input_mask"],
           "segment_ids": feed1["input_type_ids"]})
    # Distinct values in every weight: a fresh model's query/key/value/output kernels start
    # identical (one unseeded Keras initializer), which tf2onnx would store once, flattering sizes.
    rng = np.random.default_rng(0)
    for variable in (v for v in model.weights if len(v.shape) == 2):
        variable.assign(rng.normal(0, 0.02, variable.shape).astype(np.float32))
    print(f"params {model.count_params():,} ({model.count_params() * 4 / 1e6:.1f} MB float32)")
    files = {}
    started = time.time()
    writes = openvino_export.extras(model, SEQ, "float32,dynamic_int8", "float32,dynamic_int8",
                                    verify=False)
    for folder, write in writes.items():
        target = os.path.join(args.out, folder)
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(target):
            os.remove(os.path.join(target, name))
        for kind, path in write(target).items():
            if kind != "metadata":
                files[f"{folder} {kind}"] = path
    print(f"converted in {time.time() - started:.0f} s")
    serve = serving_function(model, SEQ, ("probabilities",))
    engines = {"tensorflow float32": lambda **f: serve(**{k: tf.constant(v)
                                                         for k, v in f.items()})}
    for label, path in files.items():  # ORT's threads sleep when idle: a shared machine
        engines[label] = runtimes.OnnxRunner(path, args.threads, spinning=False) \
            if path.endswith(".onnx") else runtimes.runner(path, args.threads)
    times = {(label, b): [] for label in engines for b in feeds}
    for label, run in engines.items():  # warm-up
        for feed in feeds.values():
            run(**feed)
    for _ in range(args.rounds):
        for label, run in engines.items():
            for b, feed in feeds.items():
                start = time.perf_counter()
                run(**feed)
                times[(label, b)].append(time.perf_counter() - start)
    print(f"cpu: {cpu_features()}; threads {args.threads}; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'engine':28s} {'size MB':>8s} {'b1 ms':>8s} {'b32 ex/s':>9s}")
    for label in engines:
        size = f"{size_mb(files[label]):.1f}" if label in files else "-"
        b1 = statistics.median(times[(label, 1)]) * 1e3
        b32 = 32 / statistics.median(times[(label, 32)])
        print(f"{label:28s} {size:>8s} {b1:8.1f} {b32:9.1f}")
    if not args.peer_python or not os.path.exists(args.peer_python):
        print("peer (ORT on HF's export) skipped: pass --peer_python, a Python with torch and "
              "transformers (python bench/ort_peer.py make_env)")
        return
    peer_out = os.path.join(args.out, "peer")
    subprocess.run([args.peer_python, PEER, "make", peer_out], check=True)
    for kind in ("fp32", "int8", "fp32_opt", "int8_opt"):
        subprocess.run([args.peer_python, PEER, "time", peer_out, kind, str(args.rounds)],
                       check=True)


if __name__ == "__main__":
    sys.exit(main())
