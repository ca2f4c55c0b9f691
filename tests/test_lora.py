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
from albert_tf.models.lora import (adapter_variables, enable_lora, merged_lora,
                                   parameter_counts, trained_part)
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.classification.text_classifier import TextClassifier
from albert_tf.weights.lora_adapter import read_adapter, trained_variables, write_adapter
from albert_tf.weights.loading import load
from albert_tf.weights.lora_base import base_digest, keep_adapter
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
# The adapter file of ALBERT-base at rank 8 with a 2-class head: 112,492 bytes of data and its
# index (measured; the data's size is 2 bytes a number and the step's 8).
ADAPTER_BASE_BYTES = 113173
# The largest change of a probability from the float32 checkpoint to the float16 adapter:
# measured 2.4e-5 on the tiny fit, 5.1e-5 on the demo-sized model (the bounds: about twice).
SHIPPED_TINY_TOLERANCE = 5e-5
DEMO_TOLERANCE = 1e-4
# The spread of a trained rank-8 run's adapters (SST-2 from the demo's model, 1,000 steps at
# 2e-3: 0.15 and 0.17 for the layer's A, 0.09 and 0.07 for its B, 0.12 and 0.15 the word's).
ADAPTER_STD = {"lora_kernel_a": 0.16, "lora_kernel_b": 0.08, "word_lora_a": 0.12,
               "word_lora_b": 0.15}
# The demo's model (albert_tf.demo: DemoOptions' shapes).
DEMO = dict(vocab_size=3000, embedding_size=64, hidden_size=128, num_hidden_layers=6,
            num_attention_heads=4, intermediate_size=512, max_position_embeddings=128)


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
    """A rank-2 LoRA fit (2 steps, a learning rate that moves the adapters) on a base folder;
    the rank is from_pretrained's, which fit takes when it is given none."""
    root = tmp_path_factory.mktemp("lora")
    base = _base(root / "base", spm_model)
    clf = TextClassifier.from_pretrained(str(base), labels=LABELS, max_seq_length=16,
                                         output_dir=str(root / "out"), seed=3, lora_rank=RANK)
    clf.fit(TEXTS, GOLD, epochs=1, batch_size=4, learning_rate=0.05, verbose=0)
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


def test_albert_base_trains_under_one_percent(tmp_path):
    """The counts docs/compression.md gives for ALBERT-base at rank 8 with a 2-class head, and
    the size of the adapter a run ships: 2 bytes a number (float16), under 200 KB."""
    model = AlbertClassifier(preset("albert_base_v2"), 2)
    enable_lora(model, 8)
    # query and value: 2 x (768x8 + 8x768); the word table: 30000x1 + 1x128; the head.
    assert parameter_counts(model) == (24576 + 30128 + 1538, 11685122)
    entry = write_adapter(model, str(tmp_path / "lora_adapter"), 300)
    # The data: 56,242 float16 numbers and the int64 step; the index: the 8 names.
    assert (tmp_path / "lora_adapter.data-00000-of-00001").stat().st_size == 2 * 56242 + 8
    assert entry == {"file": "lora_adapter", "dtype": "float16", "tensors": 8,
                     "numbers": 56242, "bytes": ADAPTER_BASE_BYTES, "step": 300}


def test_the_run_ships_its_trained_weights_as_float16(trained):
    """lora.json's "adapter": the trained weights alone (no optimizer slots) as float16, under
    the names of the checkpoint the folder serves (here the last, step 2), plus the step."""
    root, _, _ = trained
    out = root / "out"
    record = json.loads((out / "lora.json").read_text())
    served = tf.train.load_checkpoint(str(out / "model.ckpt-2"))
    adapter = tf.train.load_checkpoint(str(out / "lora_adapter"))
    dtypes = adapter.get_variable_to_dtype_map()
    keys = sorted(k for k in served.get_variable_to_shape_map() if k.startswith("model/"))
    assert sorted(dtypes) == ["global_step"] + keys and len(keys) == 8
    for key in keys:
        assert dtypes[key] == tf.float16
        np.testing.assert_array_equal(adapter.get_tensor(key),
                                      served.get_tensor(key).astype(np.float16))
    assert adapter.get_tensor("global_step") == 2
    size = sum(p.stat().st_size for p in out.glob("lora_adapter.*"))
    assert (out / "lora_adapter.data-00000-of-00001").stat().st_size == \
        2 * record["trainable_parameters"] + 8
    assert record["adapter"] == {
        "file": "lora_adapter", "dtype": "float16", "tensors": 8,
        "numbers": record["trainable_parameters"], "bytes": size, "step": 2,
        "from": "model.ckpt-2", "from_digest": base_digest(str(out / "model.ckpt-2"))}


def test_the_adapter_follows_the_checkpoint_the_folder_serves(trained, tmp_path):
    """Written again only when the folder serves another checkpoint (here a model.ckpt-best
    appears), from that checkpoint; lora.json records it."""
    root, _, _ = trained
    copy = tmp_path / "copy"
    shutil.copytree(root / "out", copy)
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), len(LABELS))
    loaded = []

    def load_served(prefix):
        loaded.append(prefix)
        load(model, prefix)
        return model
    kept = json.loads((copy / "lora.json").read_text())["adapter"]
    assert keep_adapter(str(copy), load_served) == kept and not loaded
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(copy / f"model.ckpt-2{suffix}", copy / f"model.ckpt-best{suffix}")
    entry = keep_adapter(str(copy), load_served)
    assert loaded == [str(copy / "model.ckpt-best")]
    assert entry == {**kept, "from": "model.ckpt-best",  # the same weights and step
                     "from_digest": base_digest(str(copy / "model.ckpt-best"))}
    assert json.loads((copy / "lora.json").read_text())["adapter"] == entry


def test_a_folder_of_the_adapter_alone_serves_it(trained, tmp_path):
    """What a user ships beside the base: the model files, lora.json and the adapter; loads
    cast it back to float32, and the labels are the run's own."""
    root, _, clf = trained
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    for name in ("albert_config.json", "30k-clean.model", "labels.json", "lora.json",
                 "lora_adapter.index", "lora_adapter.data-00000-of-00001"):
        shutil.copy(root / "out" / name, shipped / name)
    labels, probabilities = clf.predict(TEXTS)
    served = TextClassifier.from_pretrained(str(shipped), max_seq_length=16)
    shipped_labels, shipped_probabilities = served.predict(TEXTS)
    assert shipped_labels == labels
    moved = np.abs(shipped_probabilities - probabilities).max()
    assert 0 < moved < SHIPPED_TINY_TOLERANCE
    # The adapter's prefix in the run's folder serves it too (the folder serves its checkpoint).
    direct = TextClassifier.from_pretrained(str(root / "out" / "lora_adapter"), max_seq_length=16)
    np.testing.assert_array_equal(direct.predict(TEXTS)[1], shipped_probabilities)


def test_float16_adapters_move_a_demo_sized_model_by_little(tmp_path):
    """The demo's shapes (6 passes, H=128, E=64, V=3,000), rank 8, adapters at the spread a
    trained SST-2 run's have: the adapter read back holds each trained weight rounded to
    float16, and the merged model's probabilities move by less than the measured bound."""
    def build():
        model = AlbertClassifier(AlbertConfig(**DEMO), 2)
        spread_weights(model, seed=11, std=0.05)
        enable_lora(model, 8)
        return model
    model, other = build(), build()
    rng = np.random.default_rng(3)
    for variable in adapter_variables(model):
        variable.assign(rng.normal(0.0, ADAPTER_STD[variable.path.split("/")[-1]],
                                   variable.shape).astype(np.float32))
    write_adapter(model, str(tmp_path / "lora_adapter"), 1000)
    read_adapter(other, str(tmp_path / "lora_adapter"))
    trained = trained_variables(model)
    for key, variable in trained_variables(other).items():
        np.testing.assert_array_equal(
            variable.numpy(), trained[key].numpy().astype(np.float16).astype(np.float32))
    ids = rng.integers(5, 3000, (32, 64)).astype(np.int32)
    inputs = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": 0 * ids}
    with merged_lora(model), merged_lora(other):
        full = model(inputs)["probabilities"].numpy()
        half = other(inputs)["probabilities"].numpy()
    assert np.ptp(full[:, 0]) > 0.1  # they depend on the input (0.14 here)
    np.testing.assert_array_equal(full.argmax(-1), half.argmax(-1))
    assert 0 < np.abs(full - half).max() < DEMO_TOLERANCE


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


def test_an_adapter_file_of_another_model_is_refused(tmp_path):
    """Another rank, or no word adapter where the model has one: one error naming the file and
    the weight, and the model keeps its values."""
    def lora(rank, word_rank=1):
        model = AlbertClassifier(AlbertConfig(**TINY), 3)
        enable_lora(model, rank, word_rank)
        return model
    prefix = str(tmp_path / "lora_adapter")
    write_adapter(lora(4), prefix, 1)
    model = lora(2)
    before = [v.numpy().copy() for v in model.weights]
    with pytest.raises(CheckpointError, match=rf"^{prefix}: {BLOCK}_query_lora_kernel_a has "
                       r"shape \[16, 4\], this model's \[16, 2\]$"):
        read_adapter(model, prefix)
    assert all(np.array_equal(a, v.numpy()) for a, v in zip(before, model.weights))
    write_adapter(lora(2, 0), prefix, 1)
    with pytest.raises(CheckpointError, match=rf"^{prefix}: not this model's adapters and head "
                       r"\(no model/embeddings_word_lora_a\)$"):
        read_adapter(lora(2), prefix)


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
    # Its adapter holds the same weights (the tagger's head too), and nothing else but the step.
    assert sorted(n.split("/.ATTRIBUTES")[0] for n, _ in tf.train.list_variables(
        str(out / "lora_adapter"))) == ["global_step"] + names
    assert json.loads((out / "lora.json").read_text())["rank"] == 2
    assert (out / "eval_results.json").is_file()
