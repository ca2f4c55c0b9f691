"""What this CPU's matmuls can do, measured in the serving bench's own run: the ceiling any
engine's ALBERT-base latency meets (issue 48's goals are ratios to ONNX Runtime, so a goal past
the ceiling cannot be met by a better graph, only by less arithmetic or lower precision).

- `albert_base_macs()`: the multiply-adds of one ALBERT-base sequence (12 passes of H=768,
  I=3072, seq 128): 11.2 G, 98 % of them in the shared layer's dense kernels.
- `fp32_matmul_rate(threads)`: onnxruntime's (MLAS) float32 rate on the shapes a batch-1 call
  runs, the query/key/value/output [128, 768] x [768, 768] and the FFN's [128, 768] x
  [768, 3072] and back, weighted as one pass weights them.
- `int8_gemm_speedup(quick, threads)`: TFLite's (XNNPACK) float32 and dynamic-int8 rates on the
  FFN's shapes, the ceiling of what int8 can buy here.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from timing import best_of

SEQ, HIDDEN, INTERMEDIATE, PASSES, EMBEDDING = 128, 768, 3072, 12, 128


def albert_base_macs(seq: int = SEQ) -> int:
    """Multiply-adds of one ALBERT-base sequence: embedding projection, then per pass the four
    attention kernels, the two attention products and the FFN; then the pooler."""
    per_pass = (4 * seq * HIDDEN * HIDDEN + 2 * seq * seq * HIDDEN
                + 2 * seq * HIDDEN * INTERMEDIATE)
    return seq * EMBEDDING * HIDDEN + PASSES * per_pass + HIDDEN * HIDDEN


def _matmul_file(rows: int, inner: int, cols: int, repeat: int) -> bytes:
    """An ONNX graph applying one [inner, cols] weight `repeat` times in a chain (cols ==
    inner) or to `repeat` inputs' worth of rows: x [rows, inner] @ W, summed, so every product
    is used."""
    weight = np.random.default_rng(0).standard_normal((inner, cols)).astype(np.float32) * 0.02
    nodes = [helper.make_node("MatMul", ["x", "w"], [f"y{i}"]) for i in range(repeat)]
    nodes.append(helper.make_node("Sum", [f"y{i}" for i in range(repeat)], ["y"]))
    graph = helper.make_graph(
        nodes, "matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, inner])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])],
        [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def fp32_matmul_rate(threads: int, quick: bool = False) -> float:
    """MLAS' float32 GMAC/s on batch 1's dense shapes, weighted as one pass runs them (the
    highest of a few timed batches: the least disturbed by other load)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    # Separate MatMuls the optimizer cannot merge: each repeats a product a pass runs.
    shapes = ((HIDDEN, HIDDEN, 4), (HIDDEN, INTERMEDIATE, 1), (INTERMEDIATE, HIDDEN, 1))
    seconds, macs = 0.0, 0
    x_cache = {}
    for inner, cols, repeat in shapes:
        session = ort.InferenceSession(_matmul_file(SEQ, inner, cols, repeat), options,
                                       providers=["CPUExecutionProvider"])
        x = x_cache.setdefault(inner, np.random.default_rng(1).standard_normal(
            (SEQ, inner)).astype(np.float32))
        for _ in range(3):
            session.run(None, {"x": x})
        calls = 10 if quick else 40
        seconds += best_of(lambda: [session.run(None, {"x": x}) for _ in range(calls)],
                           3 if quick else 5) / calls
        macs += SEQ * inner * cols * repeat
    return macs / seconds / 1e9


def int8_gemm_speedup(quick, threads):
    """TFLite's float32 and dynamic-int8 GMAC/s on a stack of ALBERT-base's FFN matmuls
    ([128, 768] x [768, 3072], then back), with the XNNPACK kernels the encoder uses."""
    import keras
    import tensorflow as tf

    from albert_tf.serving.lite import _interpreter_class

    inputs = keras.Input((SEQ, HIDDEN), batch_size=1, name="x")
    hidden, up, down = inputs, keras.layers.Dense(INTERMEDIATE), keras.layers.Dense(HIDDEN)
    for _ in range(4):  # one pair of weights used four times, as ALBERT's layers share theirs
        hidden = down(up(hidden))
    model = keras.Model(inputs, hidden)
    serve = tf.function(lambda x: {"y": model(x)},
                        input_signature=[tf.TensorSpec([1, SEQ, HIDDEN], tf.float32, name="x")])
    x = np.random.default_rng(0).standard_normal((1, SEQ, HIDDEN)).astype("float32")
    speeds = {}
    for kind in ("float32", "dynamic_int8"):
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [serve.get_concrete_function()], model)
        if kind == "dynamic_int8":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        runner = _interpreter_class()(model_content=converter.convert(),
                                      num_threads=threads).get_signature_runner()
        for _ in range(3):
            runner(x=x)
        calls = 5 if quick else 15
        seconds = best_of(lambda: [runner(x=x) for _ in range(calls)], 3) / calls
        speeds[kind] = 8 * SEQ * HIDDEN * INTERMEDIATE / seconds / 1e9
    return speeds["float32"], speeds["dynamic_int8"]


def ceiling_notes(ort_fp32_ms: float | None, f32_gmacs: float, int8_gmacs: float,
                  mlas_gmacs: float, int8_dot: str) -> list[str]:
    """The notes the serving bench prints under its table."""
    macs = albert_base_macs()
    notes = [f"this CPU's matmuls in TFLite: float32 {f32_gmacs:.1f} GMAC/s, dynamic int8 "
             f"{int8_gmacs:.1f} GMAC/s ({int8_gmacs / f32_gmacs:.2f}x); int8 dot-product "
             f"instructions: {int8_dot}",
             f"ALBERT-base batch 1 is {macs / 1e9:.2f} GMAC; onnxruntime's float32 matmuls alone "
             f"on its shapes run {mlas_gmacs:.1f} GMAC/s, a floor of {macs / mlas_gmacs / 1e6:.1f}"
             " ms for any float32 engine using them"]
    if ort_fp32_ms:
        achieved = macs / (ort_fp32_ms / 1e3) / 1e9
        need = achieved / 0.8
        notes.append(f"ORT fp32 on HF's export runs {achieved:.1f} GMAC/s, "
                     f"{achieved / mlas_gmacs:.2f}x of that matmul rate; 0.8x its time would need "
                     f"{need:.1f} GMAC/s, {need / mlas_gmacs:.2f}x of it and "
                     f"{need / f32_gmacs:.2f}x of TFLite's")
    return notes
