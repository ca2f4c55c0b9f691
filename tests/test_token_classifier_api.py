"""TokenClassifier, the Python API of run_ner.py: fit / evaluate / predict / export on real
tweets with a tiny model, a Hugging Face AlbertForTokenClassification used as it is, and
arguments that cannot work named one by one."""

import json

import pytest

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.tasks import TokenClassifier
from albert_tf.tasks.token_classification.api import TokenClassifierError
from albert_tf.tasks.token_classification.data import read_sentences
from albert_tf.tasks.token_classification.metrics import tagging_metrics
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY
from support.informative import spread_weights
from support.paths import DATA


def _tweets(name, count):
    path = DATA / "ner" / "btc" / name
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    sentences = read_sentences(str(path))[:count]
    return [s.tokens for s in sentences], [s.tags for s in sentences]


@pytest.fixture()
def config_file(tmp_path):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(GLUE_TINY))
    return str(path)


def test_fit_evaluate_predict_export(tmp_path, config_file, spm_model, monkeypatch):
    from test_classification_text_classifier import counting

    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SentencePiece ops of serve_text)

    train, train_tags = _tweets("train.conll", 24)
    dev, dev_tags = _tweets("dev.conll", 12)
    # A spread pretrained start (support/informative.py): from the initializer's spread every
    # word got the same tag, and the export check could not tell a wrong serving path.
    start = save_tf1_checkpoint(
        spread_weights(AlbertPretrainer(AlbertConfig(**GLUE_TINY)), seed=3),
        str(tmp_path / "start.ckpt"))
    tagger = TokenClassifier(config_file, start, spm_model_file=spm_model, max_seq_length=32,
                             output_dir=str(tmp_path / "out"), seed=1)
    tagger.fit(train, train_tags, epochs=1, batch_size=8, learning_rate=1e-5,
               validation_data=(dev, dev_tags))
    assert tagger.labels == sorted({t for tags in train_tags for t in tags})
    assert (tmp_path / "out" / "model.ckpt-best.index").exists()
    listing = sorted(p.name for p in (tmp_path / "out").iterdir())
    counts = counting(monkeypatch)
    result = tagger.evaluate(dev, dev_tags, batch_size=4)
    assert result["global_step"] == 3
    assert set(result) >= {"eval_precision", "eval_recall", "eval_accuracy", "eval_loss"}
    tags = tagger.predict(dev)
    # evaluate's numbers are those of predict's tags on the same sentences: word accuracy by
    # hand, entity F1 as the metrics module scores predict's output.
    right = sum(a == b for want, got in zip(dev_tags, tags) for a, b in zip(want, got))
    assert result["eval_accuracy"] == pytest.approx(right / sum(map(len, dev_tags)), abs=1e-9)
    assert result["eval_f1"] == pytest.approx(tagging_metrics(dev_tags, tags)["eval_f1"], abs=1e-9)
    assert [len(t) for t in tags] == [len(s) for s in dev]
    assert all(t in tagger.labels for sentence in tags for t in sentence)
    # fit's model serves: the best checkpoint loaded once, nothing built, no file written
    assert counts == {"build": 0, "load": 1}
    assert tagger.predict(dev, batch_size=5) == tags and counts == {"build": 0, "load": 1}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == listing
    # A string is its whitespace-separated words; the export tags them the same way.
    texts = [" ".join(s) for s in dev if all(t and len(t.split()) == 1 for t in s)]
    assert tagger.predict(texts) == [t for s, t in zip(dev, tags) if " ".join(s) in texts]
    export = tagger.export(str(tmp_path / "export"))
    served = tf.saved_model.load(export).signatures["serve_text"](text=tf.constant(texts))
    got = [[x.decode() for x in row if x] for row in served["tags"].numpy()]
    # The spread start tags the words differently (measured: 4 distinct tags, 30 of 123 words
    # not the commonest tag), so a serve_text that reads a word's tag from the wrong position
    # or feeds the model other ids changes tags the check compares.
    words = [t for sentence in got for t in sentence]
    assert len(set(words)) >= 3
    assert len(words) - max(map(words.count, set(words))) >= 15
    assert got == tagger.predict(texts)


def test_a_hugging_face_tagger_predicts_as_it_is(tmp_path):
    import shutil

    from support.interop import interop

    folder = tmp_path / "hf"
    shutil.copytree(interop("hf", "classifier"), folder)
    values = json.loads((folder / "config.json").read_text())
    values.update(architectures=["AlbertForTokenClassification"],
                  id2label={"0": "B-PER", "1": "I-PER", "2": "O"})
    (folder / "config.json").write_text(json.dumps(values))
    tagger = TokenClassifier.from_pretrained(str(folder), output_dir=str(tmp_path / "out"),
                                             max_seq_length=16)
    assert tagger.labels == ["B-PER", "I-PER", "O"]
    tags = tagger.predict(["hello world from the test", ["one", "two"]])
    assert [len(t) for t in tags] == [5, 2]
    assert all(t in tagger.labels for sentence in tags for t in sentence)


def test_arguments_that_cannot_work_are_named(tmp_path, config_file, spm_model):
    tagger = TokenClassifier(config_file, None, spm_model_file=spm_model,
                             labels=["B-X", "I-X", "O"], output_dir=str(tmp_path / "out"))
    cases = [
        (lambda: tagger.fit([["a", "b"]], [["O"]]), r"tags\[0\]: expected 2 tags"),
        (lambda: tagger.fit([["a"]], [["B-Y"]]), r"tags\[0\]: unknown tag 'B-Y'"),
        (lambda: tagger.fit("a b", [["O", "O"]]), "sentences: expected a non-empty list"),
        (lambda: tagger.fit([[]], [[]]), r"sentences\[0\]: expected a non-empty list of str"),
        (lambda: tagger.fit([["a"]], [["O"]], epochs=0), "epochs and batch_size"),
        (lambda: tagger.predict([["a"]]), "not fine-tuned yet: call fit"),
        (lambda: TokenClassifier(config_file, None, spm_model_file=spm_model, labels=["O"]),
         "at least 2 distinct tags"),
        (lambda: TokenClassifier(config_file, None), "spm_model_file= .* is required"),
        (lambda: TokenClassifier(config_file, None, spm_model_file=spm_model,
                                 labels=["O", "B-X"], output_dir=str(tmp_path / "out")),
         "labels.json holds the tags"),
    ]
    (tmp_path / "out" / "labels.json").write_text(json.dumps(["B-X", "I-X", "O"]))
    for call, words in cases:
        with pytest.raises(TokenClassifierError, match=words):
            call()
