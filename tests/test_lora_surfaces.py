"""`lora_rank` beyond run_classifier: run_squad.py --lora_rank and TokenClassifier.fit(lora_rank=)
train adapters and the head only (their checkpoints hold nothing else), their exports equal the
model with its adapters, and a rank below 1 is refused in one line by every surface."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.models import AlbertPretrainer, AlbertSquadV1, AlbertTokenClassifier
from albert_tf.tasks import TokenClassifier
from albert_tf.tasks.classification.text_classifier import TextClassifier, TextClassifierError
from albert_tf.tasks.squad import reader
from albert_tf.tasks.squad.task import SquadRunConfig
from albert_tf.tasks.token_classification.api import TokenClassifierError
from albert_tf.weights.loading import load
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY, READING_TINY
from support.entry_points import run_entry_point
from support.informative import spread_weights
from support.tagger_folder import TAGS, tagger_folder

BLOCK = "model/group_0_inner_group_0_attention"
ADAPTERS = ["model/embeddings_word_lora_a", "model/embeddings_word_lora_b"] + [
    f"{BLOCK}_{layer}_lora_kernel_{ab}" for layer in ("query", "value") for ab in "ab"]
SENTENCES = [["Alice", "saw", "Bob"], ["he", "ran"], ["Bob", "Lee", "saw", "Alice"], ["ran"]]
SENTENCE_TAGS = [["B-X", "O", "B-X"], ["O", "O"], ["B-X", "I-X", "O", "B-X"], ["O"]]


def _saved(prefix) -> list:
    """The model's variables a checkpoint holds (no optimizer slots, no bookkeeping)."""
    return sorted(name.split("/.ATTRIBUTES")[0] for name, _ in tf.train.list_variables(prefix)
                  if name.startswith("model/"))


def _moved(model) -> float:
    """The smallest of the largest entries of the zero-initialised adapter matrices (the
    layer's B, the word table's A if it has one): above zero once every adapter trained."""
    attention, embeddings = model.encoder.transformer.attention_layers[0], model.encoder.embeddings
    words = [embeddings.word_lora_a.numpy()] if embeddings.word_lora_rank else []
    return min(float(np.abs(m).max()) for m in [
        getattr(attention, n).lora_kernel_b.numpy() for n in ("query", "value")] + words)


def test_token_classifier_fit_trains_adapters_and_its_export_merges_them(spm_model, tmp_path):
    folder, _ = tagger_folder(tmp_path, spm_model, GLUE_TINY)
    tagger = TokenClassifier.from_pretrained(str(folder), max_seq_length=16,
                                             output_dir=str(tmp_path / "out"), seed=1)
    tagger.fit(SENTENCES, SENTENCE_TAGS, epochs=1, batch_size=2, learning_rate=0.05,
               lora_rank=2, verbose=0)
    prefix = str(tmp_path / "out" / "model.ckpt-2")
    assert _saved(prefix) == ADAPTERS + ["model/token_output_bias", "model/token_output_weights"]
    record = json.loads((tmp_path / "out" / "lora.json").read_text())
    assert record["rank"] == 2 and record["base"] == str(folder / "model.ckpt-best")
    # The folder's checkpoint, loaded as any other: the base, then its adapters and head.
    model = AlbertTokenClassifier(AlbertConfig(**GLUE_TINY), len(TAGS))
    load(model, prefix)
    assert _moved(model) > 1e-3
    ids = np.array([[2, 40, 41, 42, 3, 0], [2, 50, 3, 0, 0, 0]], np.int32)
    inputs = {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32),
              "segment_ids": np.zeros_like(ids)}
    adapted = model(inputs)["probabilities"].numpy()
    loaded = tf.saved_model.load(tagger.export(str(tmp_path / "export")))
    assert not [v.name for v in loaded.variables if "lora" in v.name]
    served = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in
                                                     inputs.items()})["probabilities"].numpy()
    np.testing.assert_allclose(served, adapted, atol=1e-5)


def test_run_squad_trains_adapters_and_exports_them_merged(data_dir, spm_model, tmp_path):
    """With --lora_word_rank=0: query and value alone (the word table's adapter is the
    tagger's test above)."""
    config = AlbertConfig(**READING_TINY)
    base = tmp_path / "base"
    base.mkdir()
    config.to_json_file(base / "albert_config.json")
    shutil.copy(spm_model, base / "30k-clean.model")
    save_tf1_checkpoint(spread_weights(AlbertPretrainer(config), seed=4, std=0.1),
                        str(base / "model.ckpt-best"))
    data, _ = reader.split_by_article(reader.load_squad_json(
        data_dir / "squad" / "v1.1" / "dev-v1.1.json"))  # the training side: one answer each
    article = data["data"][0]
    (tmp_path / "train.json").write_text(json.dumps({"version": data["version"], "data": [
        {"title": article["title"], "paragraphs": article["paragraphs"][:1]}]}))
    out = tmp_path / "out"
    done = run_entry_point("run_squad.py", [
        f"--init_checkpoint={base / 'model.ckpt-best'}", f"--output_dir={out}",
        f"--train_file={tmp_path / 'train.json'}", "--do_train", "--max_seq_length=64",
        "--doc_stride=32", "--max_query_length=16", "--train_batch_size=4",
        "--num_train_epochs=1", "--learning_rate=0.05", "--lora_rank=2", "--lora_word_rank=0",
        f"--export_dir={tmp_path / 'export'}"])
    assert done.returncode == 0, done.stderr[-3000:]
    prefix = tf.train.latest_checkpoint(str(out))
    assert _saved(prefix) == ADAPTERS[2:] + ["model/output_bias", "model/output_weights"]
    record = json.loads((out / "lora.json").read_text())
    assert (record["word_rank"], record["targets"]) == (0, ["query", "value"])
    # H=32, rank 2: two adapters of 32x2 + 2x32, the head's 32x2 + 2.
    assert record["trainable_parameters"] == 2 * 128 + 66
    model = AlbertSquadV1(config)
    load(model, prefix)
    assert _moved(model) > 1e-3
    ids = np.zeros((2, 64), np.int32)  # the export's windows are --max_seq_length long
    ids[0, :8], ids[1, :6] = [2, 40, 41, 3, 60, 61, 62, 3], [2, 50, 3, 70, 71, 3]
    segments = np.zeros_like(ids)
    segments[0, 4:8], segments[1, 3:6] = 1, 1
    inputs = {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32),
              "segment_ids": segments}
    adapted = model(inputs)
    loaded = tf.saved_model.load(str(tmp_path / "export" / "1"))
    assert not [v.name for v in loaded.variables if "lora" in v.name]
    served = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in
                                                     inputs.items()})
    for key in ("start_logits", "end_logits"):
        np.testing.assert_allclose(served[key], adapted[key], atol=1e-5)


def test_a_rank_below_one_is_refused_by_every_surface(spm_model, tmp_path):
    with pytest.raises(UsageError, match=r"^--lora_rank must be at least 1, got 0$"):
        SquadRunConfig(output_dir="o", lora_rank=0)
    folder, _ = tagger_folder(tmp_path, spm_model, GLUE_TINY)
    tagger = TokenClassifier.from_pretrained(str(folder), max_seq_length=16,
                                             output_dir=str(tmp_path / "tagger"))
    with pytest.raises(TokenClassifierError,
                       match=r"^lora_rank= must be a whole number of at least 1, got 0$"):
        tagger.fit(SENTENCES, SENTENCE_TAGS, lora_rank=0)
    with pytest.raises(TokenClassifierError,
                       match=r"^lora_word_rank= is used only with lora_rank=$"):
        tagger.fit(SENTENCES, SENTENCE_TAGS, lora_word_rank=1)
    classifier = TextClassifier.from_pretrained(str(folder), labels=["a", "b"],
                                                max_seq_length=16,
                                                output_dir=str(tmp_path / "classifier"))
    with pytest.raises(TextClassifierError,
                       match=r"^lora_rank= must be a whole number of at least 1, got -8$"):
        classifier.fit(["x y", "z"], ["a", "b"], lora_rank=-8)
    with pytest.raises(TextClassifierError,
                       match=r"^lora_word_rank= must be a whole number of at least 0, got -1$"):
        classifier.fit(["x y", "z"], ["a", "b"], lora_rank=8, lora_word_rank=-1)
    # from_pretrained's, fit's defaults: checked before anything is written.
    with pytest.raises(TextClassifierError,
                       match=r"^lora_rank= must be a whole number of at least 1, got 0$"):
        TextClassifier.from_pretrained(str(folder), labels=["a", "b"], lora_rank=0,
                                       output_dir=str(tmp_path / "refused"))
    assert not (tmp_path / "refused").exists()
    assert not (tmp_path / "tagger" / "lora.json").exists()
    assert not list((tmp_path / "classifier").glob("model.ckpt-*"))


def test_lora_word_rank_needs_lora_rank_and_zero_or_more():
    with pytest.raises(UsageError, match=r"^--lora_word_rank is used only with --lora_rank$"):
        SquadRunConfig(output_dir="o", lora_word_rank=1)
    with pytest.raises(UsageError, match=r"^--lora_word_rank must be at least 0, got -1$"):
        SquadRunConfig(output_dir="o", lora_rank=8, lora_word_rank=-1)
