"""LiteEncoder / LiteClassifier: raw text through our tokenizer into a .tflite file, and the int8
classifier's accuracy guard on a (tiny) fine-tuned model."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier, AlbertModel
from albert_tf.models.classifier import per_example_loss
from albert_tf.serving.lite import LiteClassifier, LiteEncoder
from albert_tf.serving.tflite import export_tflite
from support.configs import SPM_VOCAB_SIZE, tiny_config
from support.informative import assert_spread, spread_weights

SEQ = 16
TEXTS = ["The quick brown fox jumps over the lazy dog.", "ALBERT shares its layers."]


def test_encoder_on_raw_text_matches_keras(spm_model, tmp_path):
    model = AlbertModel(tiny_config(vocab_size=SPM_VOCAB_SIZE))
    model({"input_ids": tf.zeros([1, SEQ], tf.int32)})
    spread_weights(model)  # pooled outputs that differ between texts (support/informative.py)
    export_tflite(model, tmp_path, SEQ, "float32", spm_model_file=spm_model)
    encoder = LiteEncoder.from_folder(tmp_path, kind="float32")
    packed = encoder.pack(TEXTS, [None, "Pairs too."])
    # What the fine-tuning data holds for the same text: [CLS] a [SEP] (b [SEP]), padded.
    sp = tokenization.FullTokenizer(spm_model_file=spm_model)
    tokens = sp.tokenize(tokenization.preprocess_text(TEXTS[0], lower=True))[:SEQ - 2]
    assert list(packed["input_word_ids"][0, :len(tokens) + 2]) == sp.convert_tokens_to_ids(
        ["[CLS]"] + tokens + ["[SEP]"])
    assert packed["input_mask"][0].sum() == len(tokens) + 2
    assert packed["input_type_ids"][1].max() == 1 and packed["input_type_ids"][0].max() == 0
    got = encoder.encode(TEXTS, [None, "Pairs too."])
    want = model({"input_ids": packed["input_word_ids"], "input_mask": packed["input_mask"],
                  "segment_ids": packed["input_type_ids"]})
    # 10x the errors measured on 2026-11-29 (pooled 1.8e-7, sequence 3.6e-7); the two texts'
    # pooled outputs are 0.23 apart, so the comparison tells texts apart.
    assert_spread(want["pooled_output"].numpy(), 1e-2)
    np.testing.assert_allclose(got["pooled_output"], want["pooled_output"].numpy(), atol=2e-6)
    assert got["sequence_output"].shape == (2, SEQ, 16)
    np.testing.assert_allclose(got["sequence_output"], want["sequence_output"].numpy(), atol=4e-6)
    long = encoder.pack(["word " * 50])
    assert long["input_mask"].sum() == SEQ  # truncated to the file's length




def _toy_task(n, rng):
    """Class 1 draws most of its tokens from the upper half of a 100-id range, class 0 from the
    lower half; a quarter of each sequence is noise from the whole range."""
    labels = rng.integers(0, 2, n).astype(np.int32)
    own = rng.integers(5, 52, (n, SEQ)) + 47 * labels[:, None]
    ids = np.where(rng.random((n, SEQ)) < 0.25, rng.integers(5, 99, (n, SEQ)), own)
    ids[:, 0] = 2
    return ids.astype(np.int32), labels


def test_int8_classifier_keeps_its_accuracy(tmp_path):
    tf.keras.utils.set_random_seed(0)
    model = AlbertClassifier(tiny_config(), 2)
    rng = np.random.default_rng(0)
    optimizer = tf.keras.optimizers.Adam(3e-3)

    @tf.function(autograph=False)  # no tensor-dependent Python: skip the source rewrite
    def step(ids, labels):
        with tf.GradientTape() as tape:
            out = model({"input_ids": ids}, training=True)
            loss = tf.reduce_mean(per_example_loss(out["logits"], labels, False))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))

    for _ in range(100):
        step(*_toy_task(32, rng))
    written = export_tflite(model, tmp_path, SEQ, "float32,dynamic_int8",
                            label_names=["low", "high"])
    ids, labels = _toy_task(400, np.random.default_rng(1))
    feed = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
            "input_type_ids": np.zeros_like(ids)}
    from albert_tf.serving.lite import LiteRunner

    accuracy = {kind: float(np.mean(np.argmax(LiteRunner(written[kind])(**feed)["probabilities"],
                                              -1) == labels))
                for kind in ("float32", "dynamic_int8")}
    assert accuracy["float32"] >= 0.9, accuracy  # it did learn the task
    assert abs(accuracy["dynamic_int8"] - accuracy["float32"]) <= 0.01, accuracy


def test_from_folder_on_another_heads_tflite_files_names_them_and_what_opens_them(tmp_path):
    # It said "classifier.json not found" of a folder holding token_classifier.json.
    tagger = tmp_path / "ner_export" / "tflite" / "2"
    tagger.mkdir(parents=True)
    (tagger / "token_classifier.json").write_text("{}")
    export = tmp_path / "ner_export"
    with pytest.raises(InputError) as raised:
        LiteClassifier.from_folder(export)
    assert str(raised.value) == (
        f"{export} holds {tagger / 'token_classifier.json'} (the TFLite files of a token "
        "classifier), not classifier.json: open it with albert_tf.serving.predictor.Predictor"
        '.open(<its export folder>, format="tflite", "onnx" or "openvino") (tags per word), '
        "not LiteClassifier")
    (tmp_path / "encoder.json").write_text("{}")
    with pytest.raises(InputError, match=r"\(the TFLite files of an encoder\), not classifier"
                       r"\.json: open it with LiteEncoder\.from_folder, not LiteClassifier$"):
        LiteClassifier.from_folder(tmp_path)
    with pytest.raises(InputError, match=r"of a SQuAD model\), not encoder\.json: open it with "
                       r"albert_tf\.serving\.lite\.interpreter_runner .*, not LiteEncoder$"):
        (tmp_path / "encoder.json").rename(tmp_path / "squad.json")
        LiteEncoder.from_folder(tmp_path)


def test_from_folder_errors_and_a_multi_label_file_classifies_into_label_sets(tmp_path,
                                                                              spm_model):
    with pytest.raises(InputError, match="classifier.json not found"):
        LiteClassifier.from_folder(tmp_path)
    names = ["economy", "sport", "uk"]
    model = AlbertClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE), 3, multi_label=True,
                             threshold=0.5)
    export_tflite(model, tmp_path, SEQ, "float32", spm_model_file=spm_model, label_names=names)
    with pytest.raises(InputError, match="no dynamic_int8 file"):
        LiteClassifier.from_folder(tmp_path, kind="dynamic_int8")
    classifier = LiteClassifier.from_folder(tmp_path, kind="float32")
    texts = TEXTS + ["Cup final in London", "Rates rise"]
    probabilities = classifier.predict(texts)
    assert classifier.multi_label and probabilities.shape == (4, 3)
    # A set per text (it was one name per text), as the export's own threshold chooses.
    assert classifier.classify(texts) == [[n for n, p in zip(names, row) if p >= 0.5]
                                          for row in probabilities]
    # docs/multi-label.md: predict_labels picks the single most probable label.
    assert classifier.predict_labels(texts) == [names[i] for i in probabilities.argmax(-1)]


def test_a_token_classifier_file_is_refused_on_open(tmp_path, spm_model):
    from albert_tf.models import AlbertTokenClassifier

    written = export_tflite(AlbertTokenClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE), 3),
                            tmp_path, SEQ, "float32", spm_model_file=spm_model)
    with pytest.raises(InputError, match=rf"token_classifier.float32.tflite: its probabilities "
                       rf"have shape \[1, {SEQ}, 3\], one row per piece: a token-classifier file"
                       r".*; open its export with albert_tf\.serving\.predictor\.Predictor\.open"
                       r"\(<its export folder>, format=\"tflite\""):
        LiteClassifier(written["float32"], spm_model_file=spm_model)


def test_a_regression_file_returns_its_score_and_refuses_labels(tmp_path, spm_model):
    # It named class 0 for every text: the one column is a score, not a class's probability.
    tf.keras.utils.set_random_seed(0)
    model = AlbertClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE, num_hidden_layers=1), 1)
    model({"input_ids": tf.zeros([1, SEQ], tf.int32)})
    spread_weights(model)  # scores that differ between texts
    export_tflite(model, tmp_path, SEQ, "float32", spm_model_file=spm_model)
    meta_path = tmp_path / "classifier.json"
    meta = json.loads(meta_path.read_text())
    assert meta["regression"] is True and "multi_label" not in meta
    regressor = LiteClassifier.from_folder(tmp_path, kind="float32")
    scores = regressor.predict(TEXTS)
    packed = regressor.pack(TEXTS)
    want = model({"input_ids": packed["input_word_ids"], "input_mask": packed["input_mask"],
                  "segment_ids": packed["input_type_ids"]})["predictions"].numpy()
    # Measured 2026-11-29: the scores differ from Keras by 9.9e-8 and from each other by 8.2e-3.
    assert scores.shape == (2,) and abs(float(want[0] - want[1])) > 1e-3
    np.testing.assert_allclose(scores, want, atol=1e-6)  # the Keras model's own score
    for call in (regressor.classify, regressor.predict_labels):
        with pytest.raises(InputError, match=r"classifier.float32.tflite: a regression model "
                           r".*use predict\(texts\)"):
            call(TEXTS)
    # A file written before the key, or opened without its JSON: its one column is a score too.
    del meta["regression"]
    meta_path.write_text(json.dumps(meta))
    older = LiteClassifier.from_folder(tmp_path, kind="float32")
    np.testing.assert_array_equal(older.predict(TEXTS), scores)
    with pytest.raises(InputError, match="a regression model"):
        older.classify(TEXTS)
    meta_path.write_text(json.dumps({**meta, "regression": "yes"}))
    with pytest.raises(InputError, match="classifier.json: key regression must be true or false"):
        LiteClassifier.from_folder(tmp_path, kind="float32")
