"""LoRA adapters (`--lora_rank`, `TextClassifier.fit(lora_rank=)`): the encoder frozen, adapters
on the shared layer's query and value, a rank-1 adapter of the word table and the head trained,
checkpoints of those alone with lora.json pointing at the checked base, exports with the
adapters merged."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig, preset
from albert_tf.errors import CheckpointError, UsageError
from albert_tf.models import AlbertClassifier
from albert_tf.models.lora import enable_lora, merged_lora, parameter_counts, trained_part
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.classification.text_classifier import TextClassifier
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY, TINY
from support.entry_points import assert_refused, run_entry_point
from support.informative import spread_weights
from support.tagger_folder import TAGS, tagger_folder

LABELS = ["neg", "pos"]
TEXTS = ["a fine day", "it broke at once", "great value", "never again", "works well",
         "awful sound", "I love it", "a waste"]
GOLD = ["pos", "neg", "pos", "neg", "pos", "neg", "pos", "neg"]
BLOCK = "model/group_0_inner_group_0_attention"
RANK = 2


def _base(path, spm_model, seed=5):
    path.mkdir()
    (path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    shutil.copy(spm_model, path / "30k-clean.model")
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), len(LABELS))
    spread_weights(model, seed=seed, std=0.1)
    save_tf1_checkpoint(model, str(path / "model.ckpt-best"))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory, spm_model):
    """A rank-2 LoRA fit (2 steps, a learning rate that moves the adapters) on a base folder."""
    root = tmp_path_factory.mktemp("lora")
    base = _base(root / "base", spm_model)
    clf = TextClassifier.from_pretrained(str(base), labels=LABELS, max_seq_length=16,
                                         output_dir=str(root / "out"), seed=3)
    clf.fit(TEXTS, GOLD, epochs=1, batch_size=4, learning_rate=0.05, lora_rank=RANK, verbose=0)
    return root, base, clf


def test_the_checkpoint_holds_only_adapters_and_head(trained):
    root, base, _ = trained
    saved = tf.train.list_variables(str(root / "out" / "model.ckpt-2"))
    names = sorted(n.split("/.ATTRIBUTES")[0] for n, _ in saved if n.startswith("model/"))
    assert names == ["model/embeddings_word_lora_a", "model/embeddings_word_lora_b"] + [
        f"{BLOCK}_{layer}_lora_kernel_{ab}" for layer in ("query", "value") for ab in "ab"] + [
        "model/output_bias", "model/output_weights"]
    # Nothing of the encoder anywhere: every saved tensor (optimizer slots included) has the
    # shape of an adapter (V=1500, E=16, H=32, rank 2) or of the head.
    assert {tuple(shape) for _, shape in saved if shape} == {
        (1500, 1), (1, 16), (32, 2), (2, 32), (2,)}
    record = json.loads((root / "out" / "lora.json").read_text())
    assert record["base"] == str(base / "model.ckpt-best") and record["rank"] == RANK
    assert record["digest"].startswith("sha256:") and record["word_rank"] == 1
    assert record["targets"] == ["query", "value", "word_embeddings"]
    # Two adapters of 32x2 + 2x32, the word table's 1500x1 + 1x16, the head's 32x2 + 2.
    assert record["trainable_parameters"] == 2 * (32 * 2 + 2 * 32) + 1500 + 16 + 32 * 2 + 2
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), len(LABELS))
    assert record["parameters"] == sum(v.numpy().size for v in model.weights)


def test_albert_base_trains_under_one_percent():
    """The counts docs/compression.md gives for ALBERT-base at rank 8 with a 2-class head."""
    model = AlbertClassifier(preset("albert_base_v2"), 2)
    enable_lora(model, 8)
    # query and value: 2 x (768x8 + 8x768); the word table: 30000x1 + 1x128; the head.
    assert parameter_counts(model) == (24576 + 30128 + 1538, 11685122)


def test_export_equals_the_merged_and_the_adapted_model(trained, tmp_path):
    root, base, clf = trained
    _, adapted = clf.predict(TEXTS)
    exported = clf.export(str(tmp_path / "export"))
    loaded = tf.saved_model.load(exported)
    served = loaded.signatures["serve_text"](text_a=tf.constant(TEXTS))["probabilities"].numpy()
    assert not [v.name for v in loaded.variables if "lora" in v.name]  # merged, no adapters
    np.testing.assert_allclose(served, adapted, atol=1e-5)
    # The adapters count: the base with the trained head alone gives other probabilities.
    plain = TextClassifier.from_pretrained(str(base), labels=LABELS, max_seq_length=16,
                                           output_dir=str(tmp_path / "plain"))
    assert np.abs(plain.predict(TEXTS)[1] - adapted).max() > 1e-3


def test_a_changed_or_missing_base_is_refused(trained, tmp_path, spm_model):
    root, base, _ = trained
    copy = tmp_path / "copy"
    shutil.copytree(root / "out", copy)
    record = json.loads((copy / "lora.json").read_text())
    other = _base(tmp_path / "other", spm_model, seed=9)
    (copy / "lora.json").write_text(json.dumps({**record, "base": str(other / "model.ckpt-best")}))
    with pytest.raises(CheckpointError, match=rf"^{copy}/lora.json: its base checkpoint "
                       rf"{other}/model.ckpt-best changed since the adapters were trained"):
        TextClassifier.from_pretrained(str(copy), max_seq_length=16).predict(TEXTS[:1])
    (copy / "lora.json").write_text(json.dumps({**record, "base": str(tmp_path / "gone")}))
    with pytest.raises(CheckpointError, match=rf"^{copy}/lora.json: its base checkpoint "
                       rf"{tmp_path}/gone is missing"):
        TextClassifier.from_pretrained(str(copy), max_seq_length=16).predict(TEXTS[:1])


def test_training_moves_adapters_and_head_only():
    model = AlbertClassifier(AlbertConfig(**TINY), 3)
    enable_lora(model, 4)
    encoder = [v.numpy().copy() for v in model.encoder.weights if "lora" not in v.path]
    trainable = {v.path.split("/")[-1] for v in model.trainable_weights}
    assert trainable == {"output_weights", "output_bias", "lora_kernel_a", "lora_kernel_b",
                         "word_lora_a", "word_lora_b"}
    # one block: query and value, a and b; the word table's a and b
    assert len(model.trainable_weights) == 2 + 2 * 2 + 2
    ids = np.arange(16, dtype=np.int32).reshape(2, 8) % 100
    inputs = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": 0 * ids}
    optimizer = tf.keras.optimizers.SGD(0.5)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(inputs, training=True)["logits"] ** 2)
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
    after = [v.numpy() for v in model.encoder.weights if "lora" not in v.path]
    assert all(np.array_equal(a, b) for a, b in zip(encoder, after))
    assert np.abs(model.encoder.transformer.attention_layers[0].query.lora_kernel_b.numpy()).max() > 0
    words = model.encoder.embeddings.word_lora_a.numpy()
    assert np.abs(words[ids.ravel()]).min() > 0 and not words[16:].any()  # the batch's rows
    trained, total = parameter_counts(model)
    # TINY: H=16, rank 4: 2 x (16x4 + 4x16) adapters, the word table's 100x1 + 1x8, a 16x3 + 3
    # head, of 6,435 weights.
    assert (trained, total) == (2 * 128 + 108 + 51,
                                sum(v.numpy().size for v in model.weights) - 256 - 108)
    # Merged: the same outputs from plain kernels; the adapters come back after.
    adapted = model(inputs)["logits"].numpy()
    table = model.encoder.embeddings.word_embeddings.numpy()
    with merged_lora(model):
        layer = model.encoder.transformer.attention_layers[0].query
        assert not layer.lora_enabled and not model.encoder.embeddings.word_lora_rank
        np.testing.assert_allclose(model(inputs)["logits"].numpy(), adapted, atol=1e-5)
    assert layer.lora_enabled and model.encoder.embeddings.word_lora_rank == 1
    np.testing.assert_array_equal(model.encoder.embeddings.word_embeddings.numpy(), table)
    np.testing.assert_array_equal(model(inputs)["logits"].numpy(), adapted)
    assert len(trained_part(model).weights) == 8


def test_rank_below_one_and_distillation_are_refused():
    with pytest.raises(UsageError, match=r"^--lora_rank must be at least 1, got 0$"):
        ClassifierRunConfig(output_dir="o", task_name="tsv", lora_rank=0)
    with pytest.raises(UsageError, match=r"^--lora_rank and --distill_from: not together"):
        ClassifierRunConfig(output_dir="o", task_name="tsv", lora_rank=8, distill_from="t")


def test_a_full_run_from_a_lora_folder_is_refused(trained, tmp_path):
    root, _, _ = trained
    train = tmp_path / "train.tsv"
    train.write_text("text\tlabel\n" + "".join(f"{t}\t{g}\n" for t, g in zip(TEXTS, GOLD)))
    done = run_entry_point("run_classifier.py", [
        "--task_name=tsv", f"--train_file={train}", "--text_a_column=text",
        "--label_column=label", f"--output_dir={tmp_path / 'out'}", "--do_train",
        "--max_seq_length=16", "--train_batch_size=4", "--train_step=1",
        f"--init_checkpoint={root / 'out'}"])
    assert_refused(done, (
        f"--init_checkpoint={root / 'out'} holds LoRA adapters (its lora.json), not a "
        "model to train on: start from its base (lora.json names it), with or without "
        "--lora_rank"), tmp_path / "out")


def test_run_ner_trains_adapters_of_a_tagger(spm_model, tmp_path):
    folder, train = tagger_folder(tmp_path, spm_model, GLUE_TINY)
    tags = TAGS
    out = tmp_path / "tagger_lora"
    done = run_entry_point("run_ner.py", [
        f"--train_file={train}", f"--dev_file={train}", f"--output_dir={out}", "--do_train",
        "--do_eval", "--max_seq_length=16", "--train_batch_size=2", "--train_step=1",
        f"--init_checkpoint={folder}", "--lora_rank=2"])
    assert done.returncode == 0, done.stderr[-2000:]
    names = sorted(n.split("/.ATTRIBUTES")[0] for n, _ in
                   tf.train.list_variables(str(out / "model.ckpt-1")) if n.startswith("model/"))
    assert names[:6] == ["model/embeddings_word_lora_a", "model/embeddings_word_lora_b"] + [
        f"{BLOCK}_{layer}_lora_kernel_{ab}" for layer in ("query", "value") for ab in "ab"]
    assert not [n for n in names[6:] if "embeddings" in n or "/encoder/" in n]
    assert json.loads((out / "lora.json").read_text())["rank"] == 2
    assert (out / "eval_results.json").is_file()
