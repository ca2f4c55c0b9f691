"""ONNX and OpenVINO files of an ALBERT-base classifier (issue 48): their sizes against the
parameter count (the shared layer stored once) and the time to write them.

    python bench/runtime_exports.py [--out /tmp/albert_runtimes]

Builds an ALBERT-base classifier (random weights, seed 0, a distinct draw in every matrix: sizes
do not depend on the values), and writes its float32 and dynamic_int8 files through the same
writers as `export_saved_model.py --onnx --openvino`, each float32 file checked against the
Keras model within 1e-4. Their speed, beside every other engine and ONNX Runtime on Hugging
Face's export of the same weights, is `bench/serving_latency.py`'s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import tensorflow as tf

from albert_tf.config import preset
from albert_tf.models import AlbertClassifier
from albert_tf.serving import openvino_export
from albert_tf.serving.tflite import sample_inputs

SEQ = 128


def size_mb(path) -> float:
    total = os.path.getsize(path)
    if path.endswith(".xml"):
        total += os.path.getsize(path[:-4] + ".bin")
    return total / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/albert_runtimes")
    args = parser.parse_args()
    tf.keras.utils.set_random_seed(0)
    model = AlbertClassifier(preset("base"), 2)
    feed = sample_inputs(SEQ, 30000, batch=1)
    model({"input_ids": feed["input_word_ids"], "input_mask": feed["input_mask"],
           "segment_ids": feed["input_type_ids"]})
    # Distinct values in every weight: a fresh model's query/key/value/output kernels start
    # identical (one unseeded Keras initializer), which tf2onnx would store once, flattering sizes.
    rng = np.random.default_rng(0)
    for variable in (v for v in model.weights if len(v.shape) == 2):
        variable.assign(rng.normal(0, 0.02, variable.shape).astype(np.float32))
    print(f"params {model.count_params():,} ({model.count_params() * 4 / 1e6:.1f} MB float32)")
    started = time.time()
    writes = openvino_export.extras(model, SEQ, "float32,dynamic_int8", "float32,dynamic_int8")
    print(f"{'file':28s} {'size MB':>8s}")
    for folder, write in writes.items():
        target = os.path.join(args.out, folder)
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(target):
            os.remove(os.path.join(target, name))
        for kind, path in write(target).items():
            if kind != "metadata":
                print(f"{folder + ' ' + kind:28s} {size_mb(path):8.1f}")
    print(f"written and checked in {time.time() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
