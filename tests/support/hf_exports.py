"""One export of transformers' ALBERT classifier (the interop fixture) per test session, in every
format: export_saved_model's SavedModels (encoder, preprocessing, classifier, each with its
warmup requests), float32 TFLite files, ONNX float32 and dynamic_int8 files and OpenVINO float32
IRs (the runtimes the environment has; CI has both). Made once and shared by the xdist workers
(a lock in the session's temporary root), where tests/test_serving_onnx.py,
tests/test_serving_predictor.py and tests/test_serving_warmup.py each exported it again."""

from __future__ import annotations


from albert_tf.serving import runtimes
from albert_tf.source_export import export_source
from support.session_once import once_per_session
from support.interop import interop

LENGTH = 20  # the interop fixtures' sequence length


def runtime_formats() -> list:
    """The runtime formats this environment can write and run, of onnx and openvino."""
    return [fmt for fmt, package in (("onnx", "onnxruntime"), ("openvino", "openvino"))
            if runtimes.available(package) and runtimes.available("tf2onnx")]


def shared_hf_export(tmp_path_factory) -> tuple:
    """(export_source's result, the export folder): the first caller of the session exports,
    the others wait for it and read its record."""
    source = interop("hf", "classifier")  # skips without ../shared

    def make(root):
        formats = runtime_formats()
        return export_source(
            source, root, max_seq_length=LENGTH, verify=False, tflite="float32",
            onnx="float32,dynamic_int8" if "onnx" in formats else None,
            openvino="float32" if "openvino" in formats else None)

    return once_per_session(tmp_path_factory, "hf_export", make)
