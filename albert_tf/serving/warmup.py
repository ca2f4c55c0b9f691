"""TF Serving's warmup file: `<SavedModel>/assets.extra/tf_serving_warmup_requests`.

TF Serving replays the requests of that file when it loads a version, before the version takes
traffic, so the first real request does not pay for the graph's first run (kernel choices,
memory, the tokenizer's tables). The file is a TFRecord of `tensorflow.serving.PredictionLog`
protos, each a `predict_log` whose `request` names a signature and holds its inputs as
`TensorProto`s. Every SavedModel of this package gets one, written before it is published,
with one request per signature: the inputs its fresh-process verification sends where it has
them, else sample inputs made from the signature's saved input specs (`sample_requests`: token
ids, masks, raw texts, serialized Examples of the length the signature parses).

The protos are encoded here by their wire format (field numbers from TF Serving's
`apis/prediction_log.proto`, `predict.proto`, `model.proto`) rather than with the
`tensorflow-serving-api` package, which the package does not need at run time;
tests/test_serving_warmup.py parses the file with that package's own classes.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from albert_tf.serving.head_export import SAMPLE_TEXT, example_bytes

FOLDER = "assets.extra"
FILE_NAME = "tf_serving_warmup_requests"
# PredictionLog.predict_log, PredictLog.request, PredictRequest.model_spec / inputs,
# ModelSpec.signature_name; a map entry's key and value.
_PREDICT_LOG, _REQUEST, _MODEL_SPEC, _INPUTS, _SIGNATURE_NAME, _KEY, _VALUE = 6, 1, 1, 2, 3, 1, 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2: strings, bytes, messages)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _tensor_proto(value) -> bytes:
    value = np.asarray(value)
    if value.dtype.kind in "US":  # text: UTF-8 bytes, as a client sends it
        value = np.vectorize(lambda s: s.encode("utf-8") if isinstance(s, str) else s,
                             otypes=[object])(value)
    return tf.make_tensor_proto(value).SerializeToString()


def prediction_log(signature: str, inputs: dict) -> bytes:
    """One serialized PredictionLog: a predict request of `signature` with `inputs`
    ({name: array}; strings as str or bytes)."""
    entries = b"".join(_field(_INPUTS, _field(_KEY, name.encode("utf-8")) +
                              _field(_VALUE, _tensor_proto(value)))
                       for name, value in sorted(inputs.items()))
    request = _field(_MODEL_SPEC, _field(_SIGNATURE_NAME, signature.encode("utf-8"))) + entries
    return _field(_PREDICT_LOG, _field(_REQUEST, request))


def signature_inputs(saved_model_dir) -> dict:
    """{signature: {input key: (tf.DType, shape list)}} as the saved `saved_model.pb` declares
    them: the keys a request must use (TF Serving reads these, not the Python names)."""
    saved = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(os.path.join(os.fspath(saved_model_dir), "saved_model.pb"),
                           "rb") as reader:
        saved.ParseFromString(reader.read())
    result = {}
    for name, signature in saved.meta_graphs[0].signature_def.items():
        if name.startswith("__"):  # the saver's own (__saved_model_init_op)
            continue
        result[name] = {key: (tf.as_dtype(info.dtype),
                              tf.TensorShape(info.tensor_shape).as_list()
                              if not info.tensor_shape.unknown_rank else None)
                        for key, info in signature.inputs.items()}
    return result


def _parsed_length(function):
    """The length of the int64 features a signature parses from serialized Examples (its
    ParseExampleV2 op's dense shapes), or None."""
    if function is None:
        return None
    if hasattr(function, "get_concrete_function"):
        function = function.get_concrete_function()
    for op in function.graph.get_operations():
        if op.type == "ParseExampleV2":
            shapes = op.get_attr("dense_shapes")
            if shapes:
                return tf.TensorShape(shapes[0]).as_list()[-1]
    return None


def _ids(dtype, shape, name: str, batch: int) -> np.ndarray:
    shape = [batch if d is None and i == 0 else (4 if d is None else d)
             for i, d in enumerate(shape)]
    dtype = dtype.as_numpy_dtype
    if "mask" in name:
        return np.ones(shape, dtype)
    if "type" in name or "segment" in name:
        return np.zeros(shape, dtype)
    if "positions" in name:
        return np.ones(shape, dtype)
    # Small ids (every vocabulary has them), a different one per position.
    return (np.arange(int(np.prod(shape))) % 5 + 5).reshape(shape).astype(dtype)


def sample_requests(saved_model_dir, signatures: dict) -> dict:
    """{signature: {input: array}} of the SavedModel at `saved_model_dir` (its functions in
    `signatures`), for each signature whose inputs can be made up: integer ids, masks and
    positions, raw texts (string vectors; a [B, N] string matrix as options), serialized
    Examples (of the length the signature parses). A signature with any other input is left
    out."""
    text_a, text_b = SAMPLE_TEXT
    requests = {}
    for signature, specs in signature_inputs(saved_model_dir).items():
        inputs, batch = {}, len(text_a)
        for name, (dtype, shape) in specs.items():
            rank = None if shape is None else len(shape)
            if dtype.is_integer and rank:
                inputs[name] = _ids(dtype, shape, name, batch)
            elif dtype == tf.string and rank == 1 and name == "input":
                length = _parsed_length(signatures.get(signature))
                if length is None:
                    break
                inputs[name] = np.array([example_bytes([2, 5 + i, 3], [1, 1, 1], [0, 0, 0],
                                                       length) for i in range(batch)], object)
            elif dtype == tf.string and rank == 1:
                inputs[name] = np.array(text_b if name in ("text_b", "question") else text_a)
            elif dtype == tf.string and rank == 2:
                inputs[name] = np.array([[t, t.lower()] for t in text_a])
            else:
                break
        else:
            requests[signature] = inputs
    return requests


def write_warmup(saved_model_dir, requests: dict) -> str:
    """Writes `<saved_model_dir>/assets.extra/tf_serving_warmup_requests` with one request per
    signature of `requests` ({signature: {input: array}}); returns its path. The SavedModel
    folder is a staged (unpublished) one, so the file needs no temporary name of its own."""
    folder = os.path.join(os.fspath(saved_model_dir), FOLDER)
    tf.io.gfile.makedirs(folder)
    path = os.path.join(folder, FILE_NAME)
    with tf.io.TFRecordWriter(path) as writer:
        for signature, inputs in sorted(requests.items()):
            writer.write(prediction_log(signature, inputs))
    return path
