"""Serving latency and throughput of ALBERT-base (random weights, V=30000, seq 128) on this CPU:
our encoder SavedModel, our TFLite files (float32, float16, dynamic_int8) and, in the same run,
keras-hub's exported AlbertBackbone and HF transformers (when torch is importable), via
../shared/bench/peer_serving.py, and ONNX Runtime fp32 / dynamic int8 on HF's model exported to
ONNX, via ../shared/bench/peer_onnxruntime.py in a bench-only Python (bench/ort_peer.py: make it
once with `python bench/ort_peer.py make_env`, or point `--ort_python` at one). With ORT, our
exports are made from the SAME weights as the ORT models (the peer's `hf` folder).

    python bench/serving_latency.py            # 2 interleaved rounds
    python bench/serving_latency.py --quick    # 1 round, fewer repetitions, no float16/HF

Batch-1 latency is the median of single calls, batch-32 throughput the median over calls of 32
(each engine runs once per round, rounds interleave the engines; the table takes the median of
the rounds). Ratios are against keras-hub's SavedModel and ONNX Runtime of the same precision
(fp32 rows against ORT fp32, int8 rows against ORT int8), measured in the same run. Goals: int8
TFLite batch-1 latency <= 0.5x keras-hub's and <= 0.5x ORT int8's, base int8 file <= 12 MB, our
fp32 SavedModel <= 1.0x ORT fp32 (plain, and with `--serving_xla`: XLA-compiled signatures).
A bf16 SavedModel is measured only where the CPU has bf16 (avx512_bf16 or amx_bf16). The last
note times the CPU's own int8 matmul speed against float32 (TFLite, XNNPACK), which bounds what
any int8 engine can gain here, and names its int8 dot-product instructions (VNNI, AMX).
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

import ort_peer  # noqa: E402  (bench/, beside this file)

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("ALBERT_TF_SHARED") or next(
    (p / "shared" for p in REPO.parents if (p / "shared").is_dir()), REPO.parent / "shared"))
PEER = SHARED / "bench" / "peer_serving.py"
ORT_PEER = SHARED / "bench" / "peer_onnxruntime.py"
SEQ, VOCAB = 128, 30000

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "One round, fewer repetitions, no float16 and no HF peer.")
flags.DEFINE_integer("rounds", 2, "Interleaved rounds (ignored with --quick).")
flags.DEFINE_list("peers", ["keras_hub", "hf_torch"], "Peers of peer_serving.py to run.")
flags.DEFINE_string("ort_python", None, "Python with torch, transformers, onnx, onnxscript and "
                    "onnxruntime for the ORT peer (default: .peers/ort_env/bin/python, made by "
                    "`python bench/ort_peer.py make_env`).")
flags.DEFINE_bool("ort", True, "Measure ONNX Runtime fp32 and int8 when its Python is found.")


def cpu_has(*names) -> str | None:
    """Those of the CPU flags `names` that /proc/cpuinfo lists, comma-joined; None for none
    (or where there is no /proc/cpuinfo)."""
    try:
        flags_line = next(line for line in open("/proc/cpuinfo") if line.startswith("flags"))
    except (OSError, StopIteration):
        return None
    return ",".join(f for f in names if f in flags_line.split()) or None


def cpu_bf16() -> str | None:
    return cpu_has("avx512_bf16", "amx_bf16")


def cpu_int8_dot() -> str:
    """The CPU's int8 dot-product instructions, which int8 matmuls need to beat float32."""
    return cpu_has("avx512_vnni", "avx_vnni", "amx_int8") or "none found (no VNNI, no AMX)"


def int8_gemm_speedup(quick):
    """How much faster this CPU runs a TFLite dynamic-int8 stack of ALBERT-base's FFN matmuls
    ([128, 768] x [768, 3072], then back) than the float32 one, with the same XNNPACK kernels
    the encoder uses: the ceiling of what int8 can buy here, measured in the same run."""
    import keras
    import tensorflow as tf

    from albert_tf.serving.lite import _interpreter_class

    inputs = keras.Input((SEQ, 768), batch_size=1, name="x")
    hidden, up, down = inputs, keras.layers.Dense(3072), keras.layers.Dense(768)
    for _ in range(4):  # one pair of weights used four times, as ALBERT's layers share theirs
        hidden = down(up(hidden))
    model = keras.Model(inputs, hidden)
    serve = tf.function(lambda x: {"y": model(x)},
                        input_signature=[tf.TensorSpec([1, SEQ, 768], tf.float32, name="x")])
    x = np.random.default_rng(0).standard_normal((1, SEQ, 768)).astype("float32")
    speeds = {}
    for kind in ("float32", "dynamic_int8"):
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [serve.get_concrete_function()], model)
        if kind == "dynamic_int8":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        runner = _interpreter_class()(model_content=converter.convert(),
                                      num_threads=os.cpu_count()).get_signature_runner()
        call = lambda ids, mask, seg: runner(x=x)  # noqa: E731
        seconds = timeit(call, 1, 5 if quick else 15)
        speeds[kind] = 8 * SEQ * 768 * 3072 / seconds / 1e9
    return speeds["float32"], speeds["dynamic_int8"]


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


def base_model(hf_folder):
    """ALBERT-base: the ORT peer's HF weights when given, else random (seed 0)."""
    import keras

    from albert_tf import weights
    from albert_tf.config import preset
    from albert_tf.models import AlbertModel

    keras.utils.set_random_seed(0)
    if hf_folder is None:
        return AlbertModel(preset("base", vocab_size=VOCAB))
    source = weights.open_source(hf_folder)
    model = AlbertModel(source.config)
    weights.load(model, source)
    return model


def build_exports(model, workdir, quick, bf16):
    """Our SavedModel(s) and TFLite files of `model`; {name: (kind, path, MB)}."""
    import keras

    from albert_tf.models import AlbertModel
    from albert_tf.serving.encoder import export_encoder
    from albert_tf.serving.tflite import export_tflite

    engines = {}
    path = export_encoder(model, os.path.join(workdir, "encoder"))
    engines["ours_savedmodel_fp32"] = ("savedmodel", path, folder_mb(path))
    # --serving_xla: the same signatures XLA-compiled (TF Serving: --xla_cpu_compilation_enabled).
    path = export_encoder(model, os.path.join(workdir, "encoder_xla"), xla=True)
    engines["ours_savedmodel_fp32_xla"] = ("savedmodel", path, folder_mb(path))
    if bf16:
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        half = AlbertModel(model.config)
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


def ort_setup(workdir, notes):
    """(peer Python, peer folder) with the ORT models made, or (None, None) with a note."""
    if not FLAGS.ort:
        return None, None
    python = ort_peer.find_python(FLAGS.ort_python)
    if python is None or not ORT_PEER.exists():
        notes.append("ORT: no peer Python (run `python bench/ort_peer.py make_env` or pass "
                      f"--ort_python) or no {ORT_PEER}; not measured")
        return None, None
    missing = ort_peer.missing_packages(python)
    if missing:
        notes.append(f"ORT: {python} lacks {', '.join(missing)}; not measured")
        return None, None
    folder = os.path.join(workdir, "ort_peer")
    print("making the ORT peer's models (HF ALBERT-base, seed 0) ...", flush=True)
    ort_peer.make_models(python, ORT_PEER, folder)
    return python, folder


def check_against_ort(model, python, folder, workdir):
    """Max |ours - ORT fp32| of sequence_output and pooled_output on two random rows."""
    ids = np.random.default_rng(1).integers(5, VOCAB, size=(2, SEQ)).astype("int32")
    ids_file, out_file = os.path.join(workdir, "ids.npy"), os.path.join(workdir, "ort_out.npz")
    np.save(ids_file, ids)
    ort_peer.fp32_outputs(python, folder, ids_file, out_file)
    theirs = np.load(out_file)
    ours = model({"input_ids": ids, "input_mask": np.ones_like(ids),
                  "segment_ids": np.zeros_like(ids)})
    return {key: float(np.max(np.abs(np.asarray(ours[key]) - theirs[key])))
            for key in ("sequence_output", "pooled_output")}


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
        ort_python, ort_folder = ort_setup(workdir, notes)
        print("exporting ALBERT-base ...", flush=True)
        model = base_model(os.path.join(ort_folder, "hf") if ort_folder else None)
        if ort_python:
            diffs = check_against_ort(model, ort_python, ort_folder, workdir)
            notes.append("outputs vs ORT fp32 (same weights): max |diff| " + ", ".join(
                f"{k} {v:.1e}" for k, v in diffs.items()))
        engines = build_exports(model, workdir, quick, bf16)
        ort_kinds = ["fp32", "int8"] if ort_python else []
        results = {name: [] for name in list(engines) + [f"peer_{p}" for p in peers]
                   + [f"ort_{k}" for k in ort_kinds]}

        def record(name, measure):
            try:
                results[name].append(measure())
            except RuntimeError as error:
                notes.append(str(error))
                return
            print(f"  round {round_index + 1} {name}: {results[name][-1][0]:.1f} ms, "
                  f"{results[name][-1][1]:.1f} ex/s", flush=True)

        for round_index in range(rounds):
            for name, (kind, path, _) in engines.items():
                if kind == "tflite":
                    record(name, lambda: measure_tflite(path, quick))
                else:
                    record(name, lambda: run_peer(["savedmodel", path]))
                if name == "ours_savedmodel_fp32_xla":  # ORT right beside ours: same load
                    for ort_kind in ort_kinds:
                        record(f"ort_{ort_kind}", lambda: ort_peer.time_kind(
                            ort_python, ORT_PEER, ort_folder, ort_kind, 10 if quick else 30))
            for peer in peers:
                record(f"peer_{peer}", lambda: run_peer([peer]))
        f32_gmacs, int8_gmacs = int8_gemm_speedup(quick)
        notes.append(f"this CPU's matmuls in TFLite: float32 {f32_gmacs:.1f} GMAC/s, dynamic int8 "
                     f"{int8_gmacs:.1f} GMAC/s ({int8_gmacs / f32_gmacs:.2f}x); int8 "
                     f"dot-product instructions: {cpu_int8_dot()} (int8 b1 <= 0.5x ORT int8 "
                     "needs int8 matmuls about twice float32's speed where ORT int8 runs at ORT "
                     "fp32's)")
        sizes = {name: mb for name, (_, _, mb) in engines.items()}
        print_table(results, sizes, rounds, notes)


def _ort_ref(name):
    return "ort_int8" if "int8" in name else "ort_fp32"


def print_table(results, sizes, rounds, notes):
    table = {name: (float(np.median([r[0] for r in rows])), float(np.median([r[1] for r in rows])))
             for name, rows in results.items() if rows}
    ref = table.get("peer_keras_hub")
    has_ort = "ort_fp32" in table
    print(f"\nALBERT-base, seq {SEQ}, {os.cpu_count()} CPU cores, median of {rounds} round(s)")
    header = f"{'engine':<24} {'b1 ms':>8} {'b32 ex/s':>9} {'size MB':>8}"
    if ref:
        header += f" {'b1 / keras-hub':>15} {'b32 / keras-hub':>16}"
    if has_ort:
        header += f" {'b1 / ORT':>9} {'b32 / ORT':>10}"
    print(header)
    for name, (b1, b32) in table.items():
        size = f"{sizes[name]:.1f}" if name in sizes else "-"
        line = f"{name:<24} {b1:>8.1f} {b32:>9.1f} {size:>8}"
        if ref:
            line += f" {b1 / ref[0]:>15.2f} {b32 / ref[1]:>16.2f}"
        if has_ort and _ort_ref(name) in table:
            ort = table[_ort_ref(name)]
            line += f" {b1 / ort[0]:>9.2f} {b32 / ort[1]:>10.2f}"
        print(line)
    goals = []
    if ref and "ours_tflite_dynamic_int8" in table:
        goals.append(("int8 b1 <= 0.50x keras-hub",
                      table["ours_tflite_dynamic_int8"][0] / ref[0], 0.5))
    if "ort_int8" in table and "ours_tflite_dynamic_int8" in table:
        goals.append(("int8 b1 <= 0.50x ORT int8",
                      table["ours_tflite_dynamic_int8"][0] / table["ort_int8"][0], 0.5))
    for name, what in (("ours_savedmodel_fp32", "fp32 SavedModel"),
                       ("ours_savedmodel_fp32_xla", "fp32 SavedModel --serving_xla")):
        if has_ort and name in table:
            fp32, ort = table[name], table["ort_fp32"]
            goals.append((f"{what} b1 <= 1.00x ORT fp32", fp32[0] / ort[0], 1.0))
            goals.append((f"{what} b32 time <= 1.00x ORT fp32", ort[1] / fp32[1], 1.0))
    for what, ratio, limit in goals:
        print(f"goal: {what}: {ratio:.2f}x ({'met' if ratio <= limit else 'NOT met'})")
    if "ours_tflite_dynamic_int8" in sizes:
        size = sizes["ours_tflite_dynamic_int8"]
        print(f"goal: int8 file <= 12 MB: {size:.1f} MB ({'met' if size <= 12 else 'NOT met'})")
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    app.run(main)
