"""The classifier SavedModel: both signatures agree with each other and the model; saved_model_cli."""

import pathlib

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, tokenization
from albert_tf.models import AlbertClassifier
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.examples import InputExample
from albert_tf.tasks.classification.export import export_classifier
from support.informative import assert_moves, assert_spread, spread_weights
from support.serving import saved_model_cli

SEQ = 24
PAIRS = [("The cat sat on the mat.", "A cat is sitting."),
         ("Prices rose 1,000.5 percent, Amrozi said.", "Café owners were not amused"),
         ("short", "")]


def _tiny_config():
    return AlbertConfig(vocab_size=1500, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=24, max_position_embeddings=32,
                        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)


def _serialized(spm_model, pairs, pair=True, lower=True):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    records = []
    for i, (a, b) in enumerate(pairs):
        example = InputExample(str(i), tokenization.preprocess_text(a, lower=lower),
                               tokenization.preprocess_text(b, lower=lower) if pair else None, "0")
        feature = F.convert_single_example(example, ["0", "1"], SEQ, tokenizer)
        records.append(F.feature_to_example(feature, False).SerializeToString())
    return records


def _answer(export, request):
    """Both signatures of a loaded export on the request (the logic of QUERY, in process)."""
    model = tf.saved_model.load(export)
    default = model.signatures["serving_default"](
        input=tf.constant([bytes.fromhex(h) for h in request["examples"]]))
    text = model.signatures["serve_text"](**{k: tf.constant(v) for k, v in request["texts"].items()})
    return {"default": {k: v.numpy().tolist() for k, v in default.items()},
            "text": {k: v.numpy().tolist() for k, v in text.items()},
            "inputs": {k: sorted(model.signatures[k].structured_input_signature[1])
                       for k in model.signatures}}


def test_pair_signatures_agree_with_threshold(spm_model, tmp_path):
    pair, threshold = True, 0.25
    model = AlbertClassifier(_tiny_config(), 3)
    model(_parse(_serialized(spm_model, PAIRS[:1])))
    spread_weights(model, seed=3)
    export = export_classifier(model, str(tmp_path / "export"), SEQ, spm_model, True, pair,
                               threshold, label_names=["no", "maybe", "yes"])
    assert pathlib.Path(export).name.isdigit()  # a numeric version folder for TF Serving
    assert export == str(tmp_path / "export" / "1")  # the one version rule: <export_dir>/<n>
    records = _serialized(spm_model, PAIRS, pair)
    texts = {"text_a": [a for a, _ in PAIRS]}
    if pair:
        texts["text_b"] = [b for _, b in PAIRS]
    request = {"examples": [r.hex() for r in records], "texts": texts}
    answer = _answer(export, request)  # (test_run_classifier queries an export in a new process)
    assert answer["inputs"]["serving_default"] == ["input"]
    assert answer["inputs"]["serve_text"] == (["text_a", "text_b"] if pair else ["text_a"])
    default, text = answer["default"], answer["text"]
    np.testing.assert_allclose(default["probabilities"], text["probabilities"], atol=1e-5)
    assert default["predictions"] == text["predictions"]
    # The label names of the predicted ids (a constant table in the graph).
    for served in (default, text):
        assert served["labels"] == [[b"no", b"maybe", b"yes"][i] for i in served["predictions"]]
    # And both equal the in-process Keras model on the Python-tokenized features.
    local = model(_parse(records), training=False)
    np.testing.assert_allclose(default["probabilities"], local["probabilities"].numpy(), atol=1e-5)
    # The comparisons at 1e-5 can tell: the rows differ by far more, and so does the model on the
    # pairs swapped, without text_b, not lower-cased, or in reverse order (each a wrong export;
    # measured 2026-11-29: rows >= 1.5e-2 apart, those four 2.5e-2, 9e-3, 1.5e-2, 2.4e-2 off).
    assert_spread(text["probabilities"], 1e-3)
    wrong = {"swapped": [(b, a) for a, b in PAIRS], "no text_b": [(a, "") for a, _ in PAIRS],
             "reversed": PAIRS[::-1]}
    for what, pairs in wrong.items():
        assert_moves(text["probabilities"],
                     model(_parse(_serialized(spm_model, pairs)))["probabilities"], 1e-3, what)
    unlowered = model(_parse(_serialized(spm_model, PAIRS, lower=False)))["probabilities"]
    assert_moves(text["probabilities"], unlowered, 1e-3, "not lower-cased")
    assert default["threshold"] == pytest.approx(threshold) and text["threshold"] == default["threshold"]


def test_single_sentence_regression_export_and_saved_model_cli(spm_model, tmp_path):
    model = AlbertClassifier(_tiny_config(), 1)  # regression (STS-B): probabilities [B,1]
    export = export_classifier(model, str(tmp_path / "export"), SEQ, spm_model, True, False, None)
    request = {"examples": [r.hex() for r in _serialized(spm_model, PAIRS, pair=False)],
               "texts": {"text_a": [a for a, _ in PAIRS]}}
    answer = _answer(export, request)
    assert answer["inputs"]["serve_text"] == ["text_a"] and "threshold" not in answer["default"]
    assert "labels" not in answer["default"]  # a regressor serves its score
    assert answer["default"]["score"] == answer["default"]["predictions"]
    assert answer["text"]["score"] == answer["text"]["predictions"]
    np.testing.assert_allclose(answer["default"]["probabilities"], answer["text"]["probabilities"],
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(answer["default"]["probabilities"])[:, 0],
                               answer["default"]["predictions"], atol=1e-7)
    shown = saved_model_cli("show", "--dir", export, "--all").stdout
    assert "signature_def['serving_default']" in shown and "signature_def['serve_text']" in shown
    assert "inputs['input']" in shown and "inputs['text_a']" in shown
    assert "outputs['probabilities']" in shown and "outputs['predictions']" in shown
    # `saved_model_cli run` cannot load custom ops by itself; the SentencePiece op comes from
    # tensorflow_text, so the same CLI is run with that module imported first.
    ran = saved_model_cli("run", "--dir", export, "--tag_set", "serve", "--signature_def",
                          "serve_text", "--input_exprs", "text_a=['a man is dancing']").stdout
    assert "probabilities" in ran and "predictions" in ran
    # The same sentence through the Python tokenizer and the in-process model.
    local = model(_parse(_serialized(spm_model, [("a man is dancing", "")], pair=False)))
    value = float(local["predictions"].numpy()[0])
    numbers = [float(x) for x in ran.replace("[", " ").replace("]", " ").split()
               if _is_float(x)]
    assert any(abs(n - value) < 1e-5 for n in numbers)


def _parse(records):
    spec = {k: tf.io.FixedLenFeature([SEQ], tf.int64) for k in ("input_ids", "input_mask", "segment_ids")}
    parsed = tf.io.parse_example(tf.constant(records), spec)
    return {k: tf.cast(v, tf.int32) for k, v in parsed.items()}


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_serve_text_refuses_mismatched_batches_and_non_utf8(spm_model):
    from albert_tf.tasks.classification.export import ClassifierServing

    root, signatures = ClassifierServing(AlbertClassifier(_tiny_config(), 2), SEQ, spm_model,
                                         pair=True).module()
    serve = signatures["serve_text"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_a:\] \[2\] \[text_b:\] \[1\]"):
        serve(tf.constant(["a", "b"]), tf.constant(["c"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="text_a is not valid UTF-8"):
        serve(tf.constant([b"caf\xe9"]), tf.constant(["c"]))
