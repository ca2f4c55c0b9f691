"""OpenVINO's `static_int8` file: int8 weights AND int8 activations, with scales calibrated at
export on the export's own texts, so the CPU runs every dense layer as an int8 matmul (AMX or
VNNI where the CPU has them).

    content = static_int8(float32_onnx_bytes, calibration_inputs)   # QDQ .onnx bytes

Why a third kind: OpenVINO runs `dynamic_int8` (int8 weights, see
`openvino_export.int8_weights`) by decompressing them to float32, no faster than float32;
onnxruntime's QDQ kernels on the same file are slower than its float32 ones. With the scales
fixed, OpenVINO fuses each QuantizeLinear/DequantizeLinear pair into its int8 kernels.

Before quantizing, two rewrites of tf2onnx's graph let it fuse them (measured on ALBERT-base,
batch 1, 2 cores with AMX: 17.9 ms as converted, 13 ms rewritten):
- each LayerNorm, which tf2onnx writes as GlobalAveragePool / Sub / Mul / Sqrt / Reciprocal
  over [batch, seq, H], becomes one `LayerNormalization` (opset 17);
- each Dense on [batch, seq, K], written as Reshape to [-1, K], MatMul, Reshape back, becomes
  one MatMul on the 3-D tensor (ONNX MatMul broadcasts), so the activations' quantization sits
  next to the op that makes them.
The rewritten float32 graph computes the same function (`openvino_export` checks every file
against the Keras model; tests/test_serving_openvino_int8.py pins the rewrites).
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile

import numpy as np

from albert_tf.serving import runtimes

KIND = "static_int8"
# The calibration rows used at most: more moves the scales little and costs export time.
CALIBRATION_ROWS = 64


def _onnx():
    onnx = runtimes.load("onnx", f"--openvino={KIND}", "openvino")
    return onnx, importlib.import_module("onnx.numpy_helper")


def _consumers(graph) -> dict:
    found = {}
    for node in graph.node:
        for name in dict.fromkeys(node.input):
            found.setdefault(name, []).append(node)
    return found


def _scalar(initializers, name):
    value = initializers.get(name)
    return None if value is None or value.size != 1 else float(value.reshape(-1)[0])


def _shapes(onnx, model) -> dict:
    """{value name: its dims (0 where unknown)}, by ONNX's shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    return {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in [*inferred.graph.value_info, *inferred.graph.input]}


def fuse_layer_norms(model) -> int:
    """Replaces each LayerNorm over the last axis of a rank-3 tensor (tf2onnx's pattern, with
    or without its gamma Mul and beta Add) by one LayerNormalization node; returns how many."""
    onnx, numpy_helper = _onnx()
    graph = model.graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    users, shapes = _consumers(graph), _shapes(onnx, model)

    def single(name, op):
        found = users.get(name, [])
        return found[0] if len(found) == 1 and found[0].op_type == op else None

    def affine(name, op):  # the gamma Mul or beta Add after `name`, with its constant
        node = single(name, op)
        if node is None:
            return None, None
        other = node.input[1] if node.input[0] == name else node.input[0]
        return (node, other) if other in values else (None, None)

    fused = 0
    for mean in [n for n in graph.node if n.op_type == "GlobalAveragePool"]:
        x = mean.input[0]
        sub = single(mean.output[0], "Sub")
        if sub is None or list(sub.input) != [x, mean.output[0]] or len(
                shapes.get(x, ())) != 3 or not shapes[x][-1]:
            continue
        centred = sub.output[0]
        square = next((n for n in users.get(centred, []) if n.op_type == "Mul"
                       and list(n.input) == [centred, centred]), None)
        variance = square and single(square.output[0], "GlobalAveragePool")
        plus = variance and single(variance.output[0], "Add")
        epsilon = plus and _scalar(values, plus.input[1])
        root = epsilon is not None and single(plus.output[0], "Sqrt")
        inverse = root and single(root.output[0], "Reciprocal")
        scaled = inverse and single(inverse.output[0], "Mul")
        if not scaled or set(scaled.input) != {centred, inverse.output[0]} or len(
                users[centred]) != 2:
            continue
        nodes, output = [mean, sub, square, variance, plus, root, inverse, scaled], scaled.output[0]
        gamma_node, gamma = affine(output, "Mul")
        if gamma_node is not None:
            nodes.append(gamma_node)
            output = gamma_node.output[0]
        beta_node, beta = affine(output, "Add")
        if beta_node is not None:
            nodes.append(beta_node)
            output = beta_node.output[0]
        fused += 1
        name = f"albert_layer_norm_{fused}"
        width = shapes[x][-1]
        if gamma is None:
            gamma = name + "/gamma"
            graph.initializer.append(numpy_helper.from_array(np.ones(width, np.float32), gamma))
        if beta is None:
            beta = name + "/beta"
            graph.initializer.append(numpy_helper.from_array(np.zeros(width, np.float32), beta))
        position = list(graph.node).index(mean)
        for node in nodes:
            graph.node.remove(node)
        graph.node.insert(position, onnx.helper.make_node(
            "LayerNormalization", [x, gamma, beta], [output], name=name, axis=-1,
            epsilon=epsilon))
    return fused


def unflatten_dense(model) -> int:
    """Makes each Reshape([-1, K]) → MatMul(W [K, N]) → Reshape([-1, S, N]) of a rank-3
    input one MatMul on the 3-D tensor; returns how many."""
    onnx, numpy_helper = _onnx()
    graph = model.graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    users, shapes = _consumers(graph), _shapes(onnx, model)
    makers = {out: node for node in graph.node for out in node.output}
    done = 0
    for matmul in [n for n in graph.node if n.op_type == "MatMul"]:
        weight = values.get(matmul.input[1])
        flatten = makers.get(matmul.input[0])
        if weight is None or weight.ndim != 2 or flatten is None or (
                flatten.op_type != "Reshape" or flatten.input[1] not in values):
            continue
        if values[flatten.input[1]].tolist() != [-1, weight.shape[0]] or len(
                shapes.get(flatten.input[0], ())) != 3:
            continue
        after = users.get(matmul.output[0], [])
        if len(after) != 1 or after[0].op_type != "Reshape" or after[0].input[1] not in values:
            continue
        target = values[after[0].input[1]].tolist()
        if len(target) != 3 or target[-1] != weight.shape[1]:
            continue
        matmul.input[0] = flatten.input[0]
        matmul.output[0] = after[0].output[0]
        graph.node.remove(after[0])
        if len(users.get(flatten.output[0], [])) == 1:
            graph.node.remove(flatten)
        done += 1
    return done


def _drop_unused(graph) -> None:
    """Removes the initializers no node reads any more (the Reshapes' shapes)."""
    used = {name for node in graph.node for name in node.input}
    used.update(output.name for output in graph.output)
    for initializer in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(initializer)


def static_int8(content: bytes, calibration: list[dict], products: bool = True) -> bytes:
    """The float32 .onnx bytes rewritten (above) and quantized with onnxruntime's static
    QDQ quantizer: every dense MatMul's weights int8 per output column, its input activations
    int8 with one symmetric scale each, calibrated on `calibration` (feeds of the file's
    inputs); `products`: the attention's activation-by-activation products too. The embedding
    tables are left to `openvino_export.int8_weights` (int8 per row)."""
    onnx, _ = _onnx()
    quantization = runtimes.load("onnxruntime.quantization", f"--openvino={KIND}", "onnx")
    model = onnx.load_from_string(content)
    fuse_layer_norms(model)
    unflatten_dense(model)
    _drop_unused(model.graph)
    weights = {i.name for i in model.graph.initializer}
    # The attention's two products multiply activations by activations. In int8 they make
    # ALBERT-base's call 14.1 -> 11.8 ms, and keep the demo's classifier's answers when the
    # scales come from its own dev texts (100 % of 400); calibrated on a few odd texts instead,
    # they cost 1.8 % of the answers (0.5 % without them): `products=False` leaves them float32.
    excluded = [] if products else [node.name for node in model.graph.node
                                    if node.op_type == "MatMul" and node.input[1] not in weights]
    rows = iter(calibration[:CALIBRATION_ROWS])

    class Reader(quantization.CalibrationDataReader):
        def get_next(self):
            return next(rows, None)

    with tempfile.TemporaryDirectory(prefix="albert_openvino_int8_",
                                     ignore_cleanup_errors=True) as staging:
        source, target = os.path.join(staging, "f.onnx"), os.path.join(staging, "q.onnx")
        onnx.save(model, source)
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # its advice to pre-process, on every call
        try:
            quantization.quantize_static(
                source, target, Reader(), quant_format=quantization.QuantFormat.QDQ,
                per_channel=True, activation_type=quantization.QuantType.QInt8,
                weight_type=quantization.QuantType.QInt8, op_types_to_quantize=["MatMul"],
                nodes_to_exclude=excluded, extra_options={"ActivationSymmetric": True})
        finally:
            root.setLevel(level)
        with open(target, "rb") as reader:
            return reader.read()


def calibration_rows(inputs: dict) -> list[dict]:
    """One feed per row of `inputs` ({name: [rows, seq] array}): the scales are calibrated on
    single rows, as a served request runs."""
    count = len(next(iter(inputs.values())))
    return [{k: np.asarray(v[i:i + 1]) for k, v in inputs.items()}
            for i in range(min(count, CALIBRATION_ROWS))]
