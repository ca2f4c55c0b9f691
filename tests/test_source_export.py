"""albert_tf.source_export (export_saved_model.py's work): every interop fixture, as
transformers and keras-hub saved it, exported and served from a fresh process, matches that
library's own outputs; a TF-Hub v1 module folder exports too. All exports are served by one
fresh process (one TensorFlow start-up)."""

import json
import os

import numpy as np
import pytest

from support.interop import (assert_close, expected, inputs, interop, odd_config, random_source,
                             tfhub_module)
from support.serving import serve_in_fresh_process
from support.source_reads import counting_hf_reads

LENGTH = 20  # the fixtures' sequence length (keras-hub's preprocessor was built for it)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _log_softmax(x):
    return np.log(_softmax(x))


def _examples(feed):
    from albert_tf.serving.head_export import example_bytes as _example

    return np.array([_example(feed["input_ids"][i], feed["input_mask"][i],
                              feed["segment_ids"][i], LENGTH)
                     for i in range(len(feed["input_ids"]))], dtype=object)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """{fixture: (export result, served outputs)} for every interop fixture and a TF-Hub module."""
    from albert_tf.source_export import export_source
    from albert_tf.models import AlbertPretrainer

    root = tmp_path_factory.mktemp("source_exports")
    feed = inputs()
    # Two layers in two groups: tracing the exports costs time per layer.
    hub_config = odd_config(vocab_size=1500, num_hidden_layers=2, inner_group_num=1)
    hub_source, hub_model = random_source(hub_config, AlbertPretrainer)
    hub = tfhub_module(root / "hub", hub_source.arrays, interop("hf", "pretraining",
                                                                  "spiece.model"))
    (root / "hub_config.json").write_text(hub_config.to_json_string())
    sources = {
        # keras_hub/backbone is the classifier's backbone reader without its head: the
        # classifier's probabilities cover it (each export costs tens of seconds of tracing).
        "hf/pretraining": {}, "hf/classifier": {"tflite": "float32"}, "hf/qa": {},
        "keras_hub/classifier": {},
        "tfhub": {"albert_config_file": str(root / "hub_config.json")},
    }
    results, requests = {}, {}
    for name, flags in sources.items():
        path = str(hub) if name == "tfhub" else interop(*name.split("/"))
        with counting_hf_reads() as counts:
            result = export_source(path, root / name.replace("/", "_"), max_seq_length=LENGTH,
                                   verify=False, **flags)
        result["hf_reads"] = counts
        results[name] = result
        ids = {"input_word_ids": feed["input_ids"], "input_mask": feed["input_mask"],
               "input_type_ids": feed["segment_ids"]}
        original = dict(feed)
        requests[name + ":encoder"] = (result["encoder"], {"serving_default": ids})
        if "mlm" in result["heads"]:
            positions = np.tile(np.arange(LENGTH, dtype=np.int32), (3, 1))
            requests[name + ":encoder"][1].update(
                sop=original, mlm={**original, "mlm_positions": positions})
        if "classifier" in result:
            calls = {"serving_default": {"input": _examples(feed)}}
            if name == "keras_hub/classifier":
                texts = expected(*name.split("/"))["texts"]
                # A source does not say whether its task reads one text or two: serve_text
                # takes one, serve_pair two (an empty text_b is a single text).
                calls["serve_text"] = {"text_a": texts}
                calls["serve_pair"] = {"text_a": texts, "text_b": np.array([""] * len(texts))}
            requests[name + ":classifier"] = (result["classifier"], calls)
        if "squad" in result:
            requests[name + ":squad"] = (result["squad"], {"serving_default": original})
    outputs = serve_in_fresh_process(requests)
    hub_expected = hub_model({**feed, "masked_lm_positions": np.tile(
        np.arange(LENGTH, dtype=np.int32), (3, 1))})
    return results, outputs, hub_expected, root


def test_an_export_opens_its_hf_folder_once_and_reads_its_weights_once(served):
    results = served[0]
    # The classifier export loads the encoder, then the classifier, from the one source.
    assert results["hf/classifier"]["hf_reads"] == {"opened": 1, "read": 1}
    assert results["keras_hub/classifier"]["hf_reads"] == {"opened": 0, "read": 0}


def test_hf_pretraining_serves_transformers_outputs(served):
    results, outputs, _, _ = served
    want, got = expected("hf", "pretraining"), outputs["hf/pretraining:encoder"]
    assert results["hf/pretraining"]["model"] == "AlbertPretrainer"
    mask = inputs()["input_mask"].astype(bool)
    assert_close(got["serving_default"]["sequence_output"][mask],
                 want["last_hidden_state"][mask], "sequence_output")
    assert_close(got["serving_default"]["pooled_output"], want["pooler_output"], "pooled_output")
    assert_close(got["sop"]["sop_log_probs"], _log_softmax(want["sop_logits"]), "sop")
    logits = got["mlm"]["mlm_logits"].reshape(want["prediction_logits"].shape)
    assert_close(logits[mask], want["prediction_logits"][mask], "mlm_logits")


def test_hf_classifier_serves_transformers_probabilities_and_label_names(served):
    results, outputs, _, _ = served
    want, mask = expected("hf", "classifier"), inputs()["input_mask"].astype(bool)
    encoder = outputs["hf/classifier:encoder"]["serving_default"]
    assert_close(encoder["sequence_output"][mask], want["last_hidden_state"][mask],
                 "sequence_output")
    got = outputs["hf/classifier:classifier"]["serving_default"]
    assert_close(got["probabilities"], _softmax(expected("hf", "classifier")["logits"]),
                 "probabilities")
    assert set(got["labels"]) <= {"LABEL_0", "LABEL_1", "LABEL_2"}
    assert "from_source" in results["hf/classifier"]  # config and spm taken from the folder


def test_hf_qa_serves_transformers_span_logits(served):
    results, outputs, _, _ = served
    assert "squad" in results["hf/qa"] and "classifier" not in results["hf/qa"]
    got, want = outputs["hf/qa:squad"]["serving_default"], expected("hf", "qa")
    for name in ("start_logits", "end_logits"):
        assert_close(got[name], want[name], name)


def test_keras_hub_classifier_serves_raw_text_as_keras_hub(served):
    """Raw strings through our in-graph tokenizer give keras-hub's own probabilities."""
    results, outputs, _, _ = served
    want = expected("keras_hub", "classifier")
    got = outputs["keras_hub/classifier:classifier"]
    assert_close(got["serving_default"]["probabilities"], _softmax(want["logits"]),
                 "probabilities")
    assert_close(got["serve_text"]["probabilities"], _softmax(want["text_logits"]),
                 "text probabilities")
    assert_close(got["serve_pair"]["probabilities"], _softmax(want["text_logits"]),
                 "pair probabilities (empty text_b)")
    assert results["keras_hub/classifier"]["heads"] == ["classifier"]


def test_tfhub_module_folder_exports_encoder_and_pretraining_heads(served):
    results, outputs, hub, _ = served
    got = outputs["tfhub:encoder"]
    assert results["tfhub"]["source"].startswith("tfhub weights")
    assert "preprocessing" in results["tfhub"]  # the module's assets/ spm model
    assert_close(got["sop"]["sop_log_probs"], _log_softmax(np.asarray(
        hub["sentence_order_logits"])), "sop", atol=1e-5)
    logits = np.asarray(hub["masked_lm_logits"])
    assert_close(got["mlm"]["mlm_logits"], logits.reshape(-1, logits.shape[-1]), "mlm",
                 atol=1e-5)
    json.dumps(results["tfhub"])  # the script prints it


def test_hf_classifier_with_tflite_writes_encoder_and_classifier_files(served):
    """--tflite on a source with a classification head: encoder.* and classifier.* files, the
    classifier's float32 probabilities equal to transformers' own logits (softmaxed)."""
    from albert_tf.serving.lite import interpreter_runner

    results, _, _, root = served
    result = results["hf/classifier"]
    # Versioned with the SavedModel each came from: <export_dir>/<name>/tflite/<version>.
    exports = root / "hf_classifier"
    assert sorted(os.listdir(exports / "encoder" / "tflite" / "1")) == [
        "encoder.float32.tflite", "encoder.json", "spiece.model"]
    assert sorted(os.listdir(exports / "classifier" / "tflite" / "1")) == [
        "classifier.float32.tflite", "classifier.json", "spiece.model"]
    assert result["tflite"]["classifier"]["float32"] == str(
        exports / "classifier" / "tflite" / "1" / "classifier.float32.tflite")
    runner = interpreter_runner(result["tflite"]["classifier"]["float32"])
    feed = inputs()
    probabilities = np.concatenate([runner(
        input_word_ids=feed["input_ids"][i:i + 1].astype(np.int32),
        input_mask=feed["input_mask"][i:i + 1].astype(np.int32),
        input_type_ids=feed["segment_ids"][i:i + 1].astype(np.int32))["probabilities"]
        for i in range(len(feed["input_ids"]))])
    assert_close(probabilities, _softmax(expected("hf", "classifier")["logits"]),
                 "tflite probabilities")
