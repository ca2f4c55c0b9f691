"""ALBERT-base (V=30000, seq 128) served on this CPU, every engine side by side in ONE run (issue 48,
"Measured side by side"): our SavedModel, TFLite, ONNX and OpenVINO files, each float32 and
int8, beside ONNX Runtime on Hugging Face's ONNX export of the SAME weights (plain and
transformer-optimized, fp32 and dynamic int8: ../shared/bench/peer_onnxruntime.py), keras-hub's
exported AlbertBackbone and HF transformers eager (../shared/bench/peer_serving.py).

    python bench/ort_peer.py --make_env          # once: the peers' bench-only Pythons (.peers/)
    python bench/serving_latency.py            # 3 interleaved rounds
    python bench/serving_latency.py --quick    # 1 round, fewer repetitions, no float16

Our exports are made from the ORT peer's `hf` folder (random weights, seed 0), so every row but
keras-hub's runs the same weights; each float32 ONNX / OpenVINO file is checked against the
Keras model within 1e-4 at export, as `export_saved_model.py --onnx --openvino` checks it.
Without the ORT peer's Python the ORT rows are left out (a note says why) and the weights are
random. Batch-1 latency is the median of single calls, batch-32 throughput the median over
calls of 32; each engine runs once per round, rounds interleave the engines, the table takes
the median of the rounds. Every row is given as a time ratio (lower is faster, batch 32 too)
to plain ORT fp32 and to the optimized ORT int8, measured in the same run, and the goals are
checked: our fastest fp32 <= 0.8x ORT fp32, our fastest int8 <= 0.5x optimized ORT int8.
bf16 rows (where the CPU has avx512_bf16 or amx_bf16) are labelled and count for neither goal.
The notes give the CPU's features (AVX2, AVX-512, VNNI, AMX), the load average, and the CPU's
own int8 matmul speed against float32 (TFLite, XNNPACK), which bounds what int8 can gain, and
onnxruntime's float32 matmul rate on batch 1's shapes, which bounds every float32 engine
(`matmul_ceiling`).
"""

from __future__ import annotations

import json
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
from absl import app, flags, logging  # noqa: E402

import matmul_ceiling  # noqa: E402  (bench/, beside this file)
import ort_peer  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("ALBERT_TF_SHARED") or next(
    (p / "shared" for p in REPO.parents if (p / "shared").is_dir()), REPO.parent / "shared"))
PEER = SHARED / "bench" / "peer_serving.py"
ORT_PEER = SHARED / "bench" / "peer_onnxruntime.py"
SEQ, VOCAB = 128, 30000
ORT_KINDS = ("fp32", "int8", "fp32_opt", "int8_opt")
# The two references of every row's ratios and of the goals.
ORT_FP32, ORT_INT8_OPT = "ort_fp32", "ort_int8_opt"

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "One round, fewer repetitions, no float16.")
flags.DEFINE_integer("rounds", 3, "Interleaved rounds (ignored with --quick).")
flags.DEFINE_list("peers", ["keras_hub", "hf_torch"], "Peers of peer_serving.py to run.")
flags.DEFINE_string("ort_python", None, "Python with torch, transformers, onnx, onnxscript and "
                    "onnxruntime for the ORT peer and hf_torch (default: .peers/ort_env/bin/python, "
                    "made by `python bench/ort_peer.py --make_env`).")
flags.DEFINE_string("keras_hub_python", None, "Python that imports keras_hub, for its peer "
                    "(default: .peers/keras_hub_env/bin/python, else this one).")
flags.DEFINE_bool("ort", True, "Measure ONNX Runtime on HF's export when its Python is found.")
flags.DEFINE_integer("threads", 2, "Threads of our TFLite, ONNX and OpenVINO runners (the ORT "
                     "peer's fixed count; the SavedModels use TensorFlow's default, all cores).")


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


def cpu_features() -> str:
    return cpu_has("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16",
                   "amx_bf16", "amx_int8") or "none of AVX2, AVX-512, VNNI, AMX"


def feed(batch, seed=0):
    ids = np.random.default_rng(seed).integers(5, VOCAB, size=(batch, SEQ)).astype("int32")
    return ids, np.ones((batch, SEQ), "int32"), np.zeros((batch, SEQ), "int32")


def timeit(fn, batch, reps, warmup=3):
    """peer_serving.py's protocol: 3 warm-up calls, then the median of `reps` timed calls."""
    ids, mask, seg = feed(batch)
    for _ in range(warmup):
        fn(ids, mask, seg)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn(ids, mask, seg)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure_in_process(runner, quick, first):
    """(b1 ms, b32 ex/s) of a runner taking keyword ids (our TFLite, ONNX, OpenVINO files),
    opened once for every round: after the first, one warm-up call per batch size."""
    call = lambda ids, mask, seg: runner(input_word_ids=ids, input_mask=mask,  # noqa: E731
                                         input_type_ids=seg)
    warmup = 3 if first else 1
    b1 = timeit(call, 1, 10 if quick else 30, warmup)
    b32 = timeit(call, 32, 3 if quick else 5, warmup)
    return b1 * 1e3, 32 / b32


def run_peer(args, python=None):
    """(b1 ms, b32 ex/s) from one peer_serving.py process."""
    done = subprocess.run([python or sys.executable, str(PEER), *args], capture_output=True,
                          text=True)
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


def build_exports(model, workdir, quick, bf16, notes):
    """Our SavedModel(s), TFLite, ONNX and OpenVINO files of `model`:
    {name: (precision, kind, path, MB)}, in the table's order."""
    import keras

    from albert_tf.models import AlbertModel
    from albert_tf.serving import openvino_export
    from albert_tf.serving.encoder import export_encoder
    from albert_tf.serving.tflite import export_tflite

    engines = {}
    path = export_encoder(model, os.path.join(workdir, "encoder"))
    engines["ours_savedmodel_fp32"] = ("fp32", "savedmodel", path, folder_mb(path))
    # --serving_xla: the same signatures XLA-compiled (TF Serving: --xla_cpu_compilation_enabled).
    path = export_encoder(model, os.path.join(workdir, "encoder_xla"), xla=True)
    engines["ours_savedmodel_fp32_xla"] = ("fp32", "savedmodel", path, folder_mb(path))
    if bf16:
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        half = AlbertModel(model.config)
        half.set_weights(model.get_weights())
        keras.mixed_precision.set_global_policy("float32")
        path = export_encoder(half, os.path.join(workdir, "encoder_bf16"))
        engines["ours_savedmodel_bf16"] = ("bf16", "savedmodel", path, folder_mb(path))
    kinds = ["float32", "dynamic_int8"] if quick else ["float32", "float16", "dynamic_int8"]
    written = export_tflite(model, os.path.join(workdir, "tflite"), SEQ, kinds)
    for kind in kinds:
        engines[f"ours_tflite_{kind}"] = (PRECISION[kind], "tflite", written[kind],
                                          os.path.getsize(written[kind]) / 1e6)
    # The writers of export_saved_model.py --onnx --openvino: float32 checked within 1e-4.
    both = "float32,dynamic_int8"
    # static_int8 is calibrated on the sample ids the files are checked on (no texts here), its
    # attention products left float32 as an export without texts leaves them.
    for folder, write in openvino_export.extras(model, SEQ, both,
                                                both + ",static_int8").items():
        paths = write(os.path.join(workdir, folder))
        agreement = json.load(open(paths.pop("metadata")))["agreement"]
        for kind, path in paths.items():
            mb = os.path.getsize(path) / 1e6
            if path.endswith(".xml"):
                mb += os.path.getsize(path[:-4] + ".bin") / 1e6
            engines[f"ours_{folder}_{kind}"] = (PRECISION[kind], folder, path, mb)
            notes.append(f"{folder} {kind} against the Keras model at export: max |diff| "
                         f"{agreement[kind]['max_abs_diff']:.1e}")
        if folder == "openvino":  # static_int8 as a run with dev texts writes it
            engines["ours_openvino_static_int8_products"] = static_int8_products(
                model, os.path.join(workdir, "products"))
        if folder == "openvino" and bf16:  # the plugin's own precision: bf16 here
            for kind in ("float32", "dynamic_int8"):
                engines[f"ours_openvino_{kind}_bf16"] = ("bf16" if kind == "float32" else
                                                         "int8+bf16", "openvino_bf16",
                                                         paths[kind], engines[
                                                             f"ours_openvino_{kind}"][3])
    return engines


def static_int8_products(model, folder):
    """The static_int8 file run_classifier.py writes from its dev texts, the attention's two
    products int8 too (an export without texts leaves them float32); calibrated here on the
    sample ids, as this bench has no tokenizer (the speed is the file's, not the scales')."""
    from albert_tf.serving import onnx_export, openvino_export, openvino_int8

    float32 = onnx_export.convert(model, SEQ, ["float32"])["float32"]
    rows = openvino_int8.calibration_rows(onnx_export.check_inputs(model, SEQ))
    os.makedirs(folder)
    path = os.path.join(folder, "encoder.static_int8.xml")
    openvino_export.save_ir(openvino_export.int8_weights(openvino_int8.static_int8(
        float32, rows, products=True)), path)
    mb = (os.path.getsize(path) + os.path.getsize(path[:-4] + ".bin")) / 1e6
    return ("int8", "openvino", path, mb)


PRECISION = {"float32": "fp32", "float16": "fp16w", "dynamic_int8": "int8", "static_int8": "int8"}


def folder_mb(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file()) / 1e6


def in_process_runner(kind, path, threads):
    """The runner of one of our files, opened once and timed in this process."""
    from albert_tf.serving import runtimes
    from albert_tf.serving.lite import LiteRunner

    if kind == "tflite":
        return LiteRunner(path, num_threads=threads)
    if kind == "onnx":
        return runtimes.OnnxRunner(path, threads)
    return runtimes.OpenVinoRunner(path, threads,
                                   precision=None if kind == "openvino_bf16" else "f32")


def bf16_agreement(runners):
    """Max |diff| of each bf16-compute OpenVINO row's outputs from its file in f32."""
    ids, mask, seg = feed(2, seed=1)
    found = []
    for name in (n for n in runners if n.endswith("_bf16") and "openvino" in n):
        base = runners[name[:-len("_bf16")]]
        got, want = (r(input_word_ids=ids, input_mask=mask, input_type_ids=seg)
                     for r in (runners[name], base))
        found.append(f"{name} against the same file in f32: max |diff| " + ", ".join(
            f"{k} {float(np.max(np.abs(got[k] - want[k]))):.1e}" for k in sorted(want)))
    return found


def ort_setup(workdir, notes):
    """(peer Python, peer folder) with the ORT models made, or (None, None) with a note."""
    if not FLAGS.ort:
        notes.append("ORT: --noort, not measured (no ratios, no goals); our weights random")
        return None, None
    python = ort_peer.find_python(FLAGS.ort_python)
    if python is None or not ORT_PEER.exists():
        notes.append("ORT: no peer Python (run `python bench/ort_peer.py --make_env` or pass "
                      f"--ort_python) or no {ORT_PEER}; not measured, our weights random")
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
    ids = feed(2, seed=1)[0]
    ids_file, out_file = os.path.join(workdir, "ids.npy"), os.path.join(workdir, "ort_out.npz")
    np.save(ids_file, ids)
    ort_peer.fp32_outputs(python, folder, ids_file, out_file)
    theirs = np.load(out_file)
    ours = model({"input_ids": ids, "input_mask": np.ones_like(ids),
                  "segment_ids": np.zeros_like(ids)})
    return {key: float(np.max(np.abs(np.asarray(ours[key]) - theirs[key])))
            for key in ("sequence_output", "pooled_output")}


def peer_pythons(ort_python, notes):
    """{peer: the Python that runs it} of the peers asked for that can run here."""
    found = {}
    for peer in (p for p in FLAGS.peers if p):
        python = (ort_peer.keras_hub_python(FLAGS.keras_hub_python) if peer == "keras_hub"
                  else ort_python)
        if python is None or not PEER.exists():
            notes.append(f"{peer}: no Python with it (python bench/ort_peer.py --make_env) or no "
                         f"{PEER}; not measured")
        else:
            found[peer] = python
    return found


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO lines on every export
    quick = FLAGS.quick
    rounds = 1 if quick else max(1, FLAGS.rounds)
    bf16 = cpu_bf16()
    notes = [] if bf16 else ["bf16 rows: this CPU has neither avx512_bf16 nor amx_bf16"]
    with tempfile.TemporaryDirectory(prefix="albert_serving_") as workdir:
        ort_python, ort_folder = ort_setup(workdir, notes)
        peers = peer_pythons(ort_python, notes)
        print("exporting ALBERT-base ...", flush=True)
        model = base_model(os.path.join(ort_folder, "hf") if ort_folder else None)
        if ort_python:
            diffs = check_against_ort(model, ort_python, ort_folder, workdir)
            notes.append("our Keras model vs ORT fp32 (same weights): max |diff| " + ", ".join(
                f"{k} {v:.1e}" for k, v in diffs.items()))
        engines = build_exports(model, workdir, quick, bf16, notes)
        runners = {name: in_process_runner(kind, path, FLAGS.threads)
                   for name, (_, kind, path, _) in engines.items() if kind != "savedmodel"}
        notes.extend(bf16_agreement(runners))
        precision = {name: spec[0] for name, spec in engines.items()}
        precision.update({f"ort_{k}": k.split("_")[0] for k in ORT_KINDS})
        precision.update({f"peer_{p}": "fp32" for p in peers})
        results = {name: [] for name in list(engines) + (
            [f"ort_{k}" for k in ORT_KINDS] if ort_python else []) + [f"peer_{p}" for p in peers]}

        def record(name, measure):
            try:
                results[name].append(measure())
            except RuntimeError as error:
                notes.append(str(error))
                return
            print(f"  round {round_index + 1} {name}: {results[name][-1][0]:.1f} ms, "
                  f"{results[name][-1][1]:.1f} ex/s", flush=True)

        for round_index in range(rounds):
            for name, (_, kind, path, _) in engines.items():
                if kind == "savedmodel":
                    record(name, lambda: run_peer(["savedmodel", path]))
                else:
                    record(name, lambda: measure_in_process(runners[name], quick,
                                                            round_index == 0))
            for ort_kind in ORT_KINDS if ort_python else ():
                record(f"ort_{ort_kind}", lambda: ort_peer.time_kind(
                    ort_python, ORT_PEER, ort_folder, ort_kind, 10 if quick else 30))
            for peer, python in peers.items():
                record(f"peer_{peer}", lambda: run_peer([peer], python))
        f32_gmacs, int8_gmacs = matmul_ceiling.int8_gemm_speedup(quick, FLAGS.threads)
        ort_fp32 = [r[0] for r in results.get(ORT_FP32, [])]
        notes.extend(matmul_ceiling.ceiling_notes(
            float(np.median(ort_fp32)) if ort_fp32 else None, f32_gmacs, int8_gmacs,
            matmul_ceiling.fp32_matmul_rate(FLAGS.threads, quick), cpu_int8_dot()))
        sizes = {name: spec[3] for name, spec in engines.items()}
        print_table(results, sizes, precision, rounds, notes)


def print_table(results, sizes, precision, rounds, notes):
    table = {name: (float(np.median([r[0] for r in rows])), float(np.median([r[1] for r in rows])))
             for name, rows in results.items() if rows}
    refs = [ref for ref in (ORT_FP32, ORT_INT8_OPT) if ref in table]
    print(f"\nALBERT-base, seq {SEQ}, {os.cpu_count()} CPU cores, median of {rounds} round(s); "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"cpu: {cpu_features()}")
    header = f"{'engine':<32} {'prec':<9} {'b1 ms':>8} {'b32 ex/s':>9} {'size MB':>8}"
    for ref in refs:
        header += f" {'b1/' + ref:>16} {'b32/' + ref:>17}"
    print(header)
    for name, (b1, b32) in table.items():
        size = f"{sizes[name]:.1f}" if name in sizes else "-"
        line = f"{name:<32} {precision.get(name, '-'):<9} {b1:>8.1f} {b32:>9.1f} {size:>8}"
        for ref in refs:  # time ratios: lower is faster, at batch 32 too
            line += f" {b1 / table[ref][0]:>16.2f} {table[ref][1] / b32:>17.2f}"
        print(line)
    # The goals take float32 and int8 rows; the bf16-compute int8 row is set beside, labelled.
    for head, what, prec, ref, limit in (
            ("goal", "fp32", ("fp32",), ORT_FP32, 0.8),
            ("goal", "int8", ("int8",), ORT_INT8_OPT, 0.5),
            ("beside the goal", "int8 file in bf16 compute", ("int8+bf16",), ORT_INT8_OPT, 0.5)):
        ours = {n: v for n, v in table.items() if n.startswith("ours_") and precision[n] in prec}
        if ref not in table or not ours:
            continue
        for batch, index in (("b1", 0), ("b32", 1)):  # the goals are batch-1 latency's
            best = (min if index == 0 else max)(ours, key=lambda n: ours[n][index])
            ratio = ours[best][0] / table[ref][0] if index == 0 else table[ref][1] / ours[best][1]
            print(f"{head if index == 0 else 'batch 32, beside the goal'}: our fastest {what} "
                  f"{batch} <= {limit}x {ref}: {best} {ratio:.2f}x "
                  f"({'met' if ratio <= limit else 'NOT met'})")
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    app.run(main)
