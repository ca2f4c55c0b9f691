"""Serving latency and throughput of ALBERT-base (random weights, V=30000, seq 128) on this CPU:
our encoder SavedModel, our TFLite files (float32, float16, dynamic_int8) and, in the same run,
keras-hub's exported AlbertBackbone and HF transformers (when torch is importable), via
../shared/bench/peer_serving.py.

    python bench/serving_latency.py            # 2 interleaved rounds
    python bench/serving_latency.py --quick    # 1 round, fewer repetitions, no float16/HF

Batch-1 latency is the median of single calls, batch-32 throughput the median over calls of 32
(each engine runs once per round, rounds interleave the engines; the table takes the median of
the rounds). Ratios are against keras-hub's SavedModel measured in the same run. Goal (issue
16): int8 TFLite batch-1 latency <= 0.5x keras-hub's, base int8 file <= 12 MB.
A bf16 SavedModel is measured only where the CPU has bf16 (avx512_bf16 or amx_bf16).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("ALBERT_TF_SHARED") or next(
    (p / "shared" for p in REPO.parents if (p / "shared").is_dir()), REPO.parent / "shared"))
PEER = SHARED / "bench" / "peer_serving.py"
SEQ, VOCAB = 128, 30000

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "One round, fewer repetitions, no float16 and no HF peer.")
flags.DEFINE_integer("rounds", 2, "Interleaved rounds (ignored with --quick).")
flags.DEFINE_list("peers", ["keras_hub", "hf_torch"], "Peers of peer_serving.py to run.")


def cpu_bf16() -> str | None:
    try:
        flags_line = next(line for line in open("/proc/cpuinfo") if line.startswith("flags"))
    except (OSError, StopIteration):
        return None
    found = [f for f in ("avx512_bf16", "amx_bf16") if f in flags_line.split()]
    return ",".join(found) or None


def timeit(fn, batch, reps):
    """peer_serving.py's protocol: 3 warm-up calls, then the median of `reps` timed calls."""
    rng = np.random.default_rng(0)
    ids = rng.integers(5, VOCAB, size=(batch, SEQ)).astype("int32")
    mask, seg = np.ones((batch, SEQ), "int32"), np.zeros((batch, SEQ), "int32")
    for _ in range(3):
        fn(ids, mask, seg)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn(ids, mask, seg)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure_tflite(path, quick):
    from albert_tf.serving.lite import LiteRunner

    runner = LiteRunner(path)
    call = lambda ids, mask, seg: runner(input_word_ids=ids, input_mask=mask,  # noqa: E731
                                         input_type_ids=seg)
    b1 = timeit(call, 1, 10 if quick else 30)
    b32 = timeit(call, 32, 3 if quick else 5)
    return b1 * 1e3, 32 / b32


def run_peer(args):
    """(b1 ms, b32 ex/s) from one peer_serving.py process."""
    done = subprocess.run([sys.executable, str(PEER), *args], capture_output=True, text=True)
    match = re.search(r"b1_ms=([\d.]+) b32_ex_per_s=([\d.]+)", done.stdout)
    if not match:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"peer_serving.py {' '.join(args)} failed: {tail[0]}")
    return float(match.group(1)), float(match.group(2))


def build_exports(workdir, quick, bf16):
    """Our SavedModel(s) and TFLite files of one random ALBERT-base; {name: (kind, path, MB)}."""
    import keras

    from albert_tf.config import preset
    from albert_tf.serving.encoder import export_encoder
    from albert_tf.serving.tflite import export_tflite
    from albert_tf.models import AlbertModel

    keras.utils.set_random_seed(0)
    model = AlbertModel(preset("base", vocab_size=VOCAB))
    engines = {}
    path = export_encoder(model, os.path.join(workdir, "encoder"))
    engines["ours_savedmodel_fp32"] = ("savedmodel", path, folder_mb(path))
    if bf16:
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        half = AlbertModel(preset("base", vocab_size=VOCAB))
        half.set_weights(model.get_weights())
        keras.mixed_precision.set_global_policy("float32")
        path = export_encoder(half, os.path.join(workdir, "encoder_bf16"))
        engines["ours_savedmodel_bf16"] = ("savedmodel", path, folder_mb(path))
    kinds = ["float32", "dynamic_int8"] if quick else ["float32", "float16", "dynamic_int8"]
    written = export_tflite(model, os.path.join(workdir, "tflite"), SEQ, kinds)
    for kind in kinds:
        engines[f"ours_tflite_{kind}"] = ("tflite", written[kind],
                                          os.path.getsize(written[kind]) / 1e6)
    return engines


def folder_mb(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file()) / 1e6


def main(argv):
    del argv
    quick = FLAGS.quick
    rounds = 1 if quick else max(1, FLAGS.rounds)
    bf16 = cpu_bf16()
    peers = [p for p in FLAGS.peers if p]
    if quick:
        peers = [p for p in peers if p != "hf_torch"]
    notes = []
    if "hf_torch" in peers and importlib.util.find_spec("torch") is None:
        peers.remove("hf_torch")
        notes.append("hf_torch: torch is not importable, not measured")
    if not bf16:
        notes.append("bf16 SavedModel: this CPU has neither avx512_bf16 nor amx_bf16, not measured")
    if not PEER.exists():
        notes.append(f"peers: {PEER} not found, not measured")
        peers = []
    with tempfile.TemporaryDirectory(prefix="albert_serving_") as workdir:
        print("exporting ALBERT-base (random weights) ...", flush=True)
        engines = build_exports(workdir, quick, bf16)
        results = {name: [] for name in list(engines) + [f"peer_{p}" for p in peers]}
        for round_index in range(rounds):
            for name, (kind, path, _) in engines.items():
                if kind == "tflite":
                    results[name].append(measure_tflite(path, quick))
                else:
                    results[name].append(run_peer(["savedmodel", path]))
                print(f"  round {round_index + 1} {name}: {results[name][-1][0]:.1f} ms, "
                      f"{results[name][-1][1]:.1f} ex/s", flush=True)
            for peer in peers:
                try:
                    results[f"peer_{peer}"].append(run_peer([peer]))
                except RuntimeError as error:
                    notes.append(str(error))
                    continue
                print(f"  round {round_index + 1} peer_{peer}: {results[f'peer_{peer}'][-1][0]:.1f}"
                      f" ms, {results[f'peer_{peer}'][-1][1]:.1f} ex/s", flush=True)
        sizes = {name: mb for name, (_, _, mb) in engines.items()}
        print_table(results, sizes, rounds, notes)


def print_table(results, sizes, rounds, notes):
    table = {name: (float(np.median([r[0] for r in rows])), float(np.median([r[1] for r in rows])))
             for name, rows in results.items() if rows}
    ref = table.get("peer_keras_hub")
    print(f"\nALBERT-base, seq {SEQ}, {os.cpu_count()} CPU cores, median of {rounds} round(s)")
    header = f"{'engine':<24} {'b1 ms':>8} {'b32 ex/s':>9} {'size MB':>8}"
    if ref:
        header += f" {'b1 / keras-hub':>15} {'b32 / keras-hub':>16}"
    print(header)
    for name, (b1, b32) in table.items():
        size = f"{sizes[name]:.1f}" if name in sizes else "-"
        line = f"{name:<24} {b1:>8.1f} {b32:>9.1f} {size:>8}"
        if ref:
            line += f" {b1 / ref[0]:>15.2f} {b32 / ref[1]:>16.2f}"
        print(line)
    if ref and "ours_tflite_dynamic_int8" in table:
        ratio = table["ours_tflite_dynamic_int8"][0] / ref[0]
        size = sizes["ours_tflite_dynamic_int8"]
        print(f"goal: int8 b1 <= 0.50x keras-hub: {ratio:.2f}x "
              f"({'met' if ratio <= 0.5 else 'NOT met'}); int8 file <= 12 MB: {size:.1f} MB "
              f"({'met' if size <= 12 else 'NOT met'})")
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    app.run(main)
