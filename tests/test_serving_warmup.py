"""TF Serving's warmup file in every SavedModel: parsed with tensorflow-serving-api's own protos,
each request replayed against the SavedModel in-process, answering as the Keras model (and the
Python tokenizer) on the same inputs."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.models import AlbertClassifier
from albert_tf.serving.warmup import FILE_NAME, FOLDER, prediction_log
from albert_tf.tokenization import pack_pair
from albert_tf.weights.readers import open_source
from albert_tf.weights.tf1_checkpoint import ArrayReader, load_tf1_weights
from support.hf_exports import LENGTH, shared_hf_export
from support.interop import interop

apis = pytest.importorskip("tensorflow_serving.apis.prediction_log_pb2",
                           reason="pip install -e .[test] (tensorflow-serving-api)")


def read_requests(saved_model_dir) -> list:
    """(signature, {input: array}) of each PredictionLog in the SavedModel's warmup file."""
    path = saved_model_dir / FOLDER / FILE_NAME
    requests = []
    for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
        log = apis.PredictionLog.FromString(record)
        assert log.WhichOneof("log_type") == "predict_log"
        request = log.predict_log.request
        requests.append((request.model_spec.signature_name,
                         {k: tf.make_ndarray(v) for k, v in request.inputs.items()}))
    return requests


def test_a_prediction_log_is_tf_servings_bytes():
    """The hand-encoded record parses, and re-encodes to the same bytes with the package."""
    from tensorflow_serving.apis import model_pb2, predict_pb2

    inputs = {"text_a": np.array(["a", "ü"]), "ids": np.arange(6, dtype=np.int32).reshape(2, 3)}
    ours = prediction_log("serve_text", inputs)
    theirs = apis.PredictionLog(predict_log=apis.PredictLog(request=predict_pb2.PredictRequest(
        model_spec=model_pb2.ModelSpec(signature_name="serve_text"),
        inputs={k: tf.make_tensor_proto(np.array([s.encode() for s in v], object)
                                        if v.dtype.kind == "U" else v)
                for k, v in inputs.items()})))
    assert apis.PredictionLog.FromString(ours) == theirs
    parsed = apis.PredictionLog.FromString(ours).predict_log.request
    assert tf.make_ndarray(parsed.inputs["text_a"]).tolist() == ["a".encode(), "ü".encode()]


def _keras_classifier(path, config):
    source = open_source(path)
    model = AlbertClassifier(config, source.num_labels)
    model({"input_ids": tf.zeros([1, LENGTH], tf.int32)})
    load_tf1_weights(model, ArrayReader(source.arrays), path)
    return model


def _probabilities(model, features):
    logits = model({k: tf.cast(v, tf.int32) for k, v in features.items()})["logits"]
    return tf.nn.softmax(logits).numpy()


def test_every_saved_model_replays_its_warmup_requests(tmp_path_factory):
    """export_saved_model on a classifier folder: the encoder, preprocessing and classifier
    SavedModels each hold one request per signature (sample inputs made from the saved
    signatures: ids, texts, serialized Examples of the parsed length); every request answers,
    and as the Keras model / Python tokenizer on the same inputs. (The session's export,
    support/hf_exports.py, with TFLite, ONNX and OpenVINO files beside: they add no requests.)"""
    source = interop("hf", "classifier")
    result, root = shared_hf_export(tmp_path_factory)
    config = open_source(source).config
    classifier = _keras_classifier(source, config)
    sp = tokenization.FullTokenizer(spm_model_file=f"{source}/spiece.model")
    lower = result["do_lower_case"]

    def packed(text_a, text_b=None):
        rows = []
        for i, a in enumerate(text_a):
            tokens_b = sp.tokenize(tokenization.preprocess_text(text_b[i].decode(), lower=lower)) \
                if text_b is not None and text_b[i] else None
            tokens, segments = pack_pair(
                sp.tokenize(tokenization.preprocess_text(a.decode(), lower=lower)), tokens_b,
                LENGTH)
            ids = sp.convert_tokens_to_ids(tokens)
            rows.append([ids + [0] * (LENGTH - len(ids)), [1] * len(ids) + [0] * (
                LENGTH - len(ids)), segments + [0] * (LENGTH - len(segments))])
        rows = np.array(rows, np.int32)
        return {"input_ids": rows[:, 0], "input_mask": rows[:, 1], "segment_ids": rows[:, 2]}

    for name in ("encoder", "preprocessing", "classifier"):
        folder = root / name / "1"
        requests = read_requests(folder)
        loaded = tf.saved_model.load(str(folder))
        assert sorted(s for s, _ in requests) == sorted(loaded.signatures)
        for signature, inputs in requests:
            got = {k: v.numpy() for k, v in loaded.signatures[signature](
                **{k: tf.constant(v) for k, v in inputs.items()}).items()}
            if name == "classifier" and signature == "serving_default":
                spec = {k: tf.io.FixedLenFeature([LENGTH], tf.int64)
                        for k in ("input_ids", "input_mask", "segment_ids")}
                features = tf.io.parse_example(inputs["input"], spec)
                want = _probabilities(classifier, features)
            elif name == "classifier":
                want = _probabilities(classifier, packed(inputs["text_a"], inputs.get("text_b")))
            elif name == "encoder":
                ids = inputs.get("input_word_ids", inputs.get("input_ids"))
                if ids is None or "pooled_output" not in got:  # raw text in (fill_mask, embed)
                    assert got and all(np.isfinite(v).all() for v in got.values()
                                       if v.dtype.kind == "f"), signature
                    continue
                mask = inputs["input_mask"]
                types = inputs.get("input_type_ids", inputs.get("segment_ids"))
                want = classifier.encoder({"input_ids": ids, "input_mask": mask,
                                           "segment_ids": types})["pooled_output"].numpy()
                np.testing.assert_allclose(got["pooled_output"], want, atol=1e-5)
                continue
            elif signature in ("serving_default", "serve_pair"):
                texts = inputs.get("text", inputs.get("text_a"))
                want = packed(texts, inputs.get("text_b"))
                np.testing.assert_array_equal(got["input_word_ids"], want["input_ids"])
                np.testing.assert_array_equal(got["input_type_ids"], want["segment_ids"])
                continue
            else:  # tokenization_info: no inputs
                assert inputs == {} and bool(got["do_lower_case"]) == lower
                continue
            np.testing.assert_allclose(got["probabilities"], want, atol=1e-5)
            assert np.ptp(want) > 1e-3  # the requests tell the classes apart
