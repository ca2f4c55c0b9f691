"""Sentence embeddings (albert_tf/tasks/embeddings): pooling against the Keras model's own
outputs, the losses against numpy, pair files (GLUE's STS-B TSV as it is), Spearman by hand,
fit, the saved folder, the TFLite file, exact search against brute force, the index file and
the commands. The export's `embed` signature: tests/test_fill_mask.py's export."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.entry_points import run_embeddings as run_embeddings_entry
from albert_tf.errors import InputError, UsageError
from albert_tf.serving.lite import LiteEmbedder
from albert_tf.tasks.embeddings import (EmbeddingsError, EmbeddingsRunConfig, TextEncoder,
                                        embedding, run_embeddings)
from albert_tf.tasks.embeddings.pairs import read_pairs, spearman
from support.entry_points import run_entry_point
from support.informative import assert_spread
from support.released_model import passages

TEXTS = ["A man is playing a guitar.", "The cat sat on the mat.",
         "Dogs are running in the park.", "ALBERT shares its layers across the network."]


@pytest.fixture(scope="module")
def encoder(pretrained_folder):
    return TextEncoder.from_pretrained(pretrained_folder, max_seq_length=32)


@pytest.fixture(scope="module")
def stsb(data_dir):
    return data_dir / "glue" / "STS-B"


@pytest.mark.parametrize("pooling", ["mean", "cls", "pooled"])
def test_encode_pools_the_models_outputs(encoder, pooling):
    encoder.pooling = pooling
    try:
        got = encoder.encode(TEXTS, batch_size=3)
    finally:
        encoder.pooling = "mean"
    rows = [encoder.ids(t) for t in TEXTS]
    vectors = []
    for row in rows:  # one text at a time: no padding at all
        out = encoder.model({"input_ids": np.array([row], np.int32),
                             "input_mask": np.ones((1, len(row)), np.int32),
                             "segment_ids": np.zeros((1, len(row)), np.int32)})
        vector = {"mean": out["sequence_output"].numpy()[0].mean(0),
                  "cls": out["sequence_output"].numpy()[0, 0],
                  "pooled": out["pooled_output"].numpy()[0]}[pooling].astype(np.float64)
        vectors.append(vector / np.linalg.norm(vector))
    np.testing.assert_allclose(got, np.array(vectors), atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    assert_spread(got, 1e-2)


def test_losses_equal_numpy():
    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=(4, 6)) for _ in range(2))
    a, b = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
    s = a @ b.T / 0.05

    def cross_entropy(logits):
        logits = logits - logits.max(1, keepdims=True)
        return np.mean(np.log(np.exp(logits).sum(1)) - np.diag(logits))

    want = (cross_entropy(s) + cross_entropy(s.T)) / 2
    got = embedding.contrastive_loss(tf.constant(a, tf.float32), tf.constant(b, tf.float32), 0.05)
    assert float(got) == pytest.approx(want, rel=1e-5)
    targets = np.array([1.0, 0.2, 0.0, 0.76])
    got = embedding.cosine_loss(tf.constant(a, tf.float32), tf.constant(b, tf.float32), targets)
    assert float(got) == pytest.approx(np.mean(((a * b).sum(1) - targets) ** 2), rel=1e-5)


def test_spearman_by_hand():
    # ranks of x with the tie averaged: 1, 2.5, 2.5, 4; of y: 1, 3, 2, 4 -> 4.5 / sqrt(4.5 * 5)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / np.sqrt(22.5), abs=1e-12)
    assert spearman([3, 1, 2], [30, 10, 20]) == pytest.approx(1.0)


def test_glue_stsb_tsv_is_read_as_it_is(stsb):
    dev = read_pairs(stsb / "dev.tsv")
    assert len(dev) == 1500 and dev.score_range == (0.0, 5.0)
    assert (dev.texts_a[0], dev.texts_b[0], dev.scores[0]) == (
        "A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.", 5.0)
    test = read_pairs(stsb / "test.tsv")
    assert test.scores is None and len(test) == 1379


def test_pair_files_and_their_errors(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"anchor": "a b", "positive": "c d"}\n\n'
                                      '{"anchor": "e", "positive": "f"}\n')
    pairs = read_pairs(tmp_path / "p.jsonl")
    assert (pairs.texts_a, pairs.texts_b, pairs.scores) == (["a b", "e"], ["c d", "f"], None)
    (tmp_path / "p.csv").write_text('"one, two",three,0.5\nfour,five,1\n')
    pairs = read_pairs(tmp_path / "p.csv")
    assert (pairs.texts_a, pairs.scores) == (["one, two", "four"], [0.5, 1.0])
    (tmp_path / "one.tsv").write_text("only one column\nanother\n")
    with pytest.raises(InputError, match=r"one\.tsv:1: one column; a pair file needs two text"):
        read_pairs(tmp_path / "one.tsv")
    (tmp_path / "out.tsv").write_text("sentence1\tsentence2\tscore\na\tb\t4.5\nc\td\t5.25\n")
    with pytest.raises(InputError, match=r"out\.tsv:3: score 5\.25 is outside the file's range "
                                         r"0\.\.5 \(--score_range\)"):
        read_pairs(tmp_path / "out.tsv")
    with pytest.raises(InputError, match=r"p\.csv:1: score 0\.5 is outside the file's range 1\.\.2"):
        read_pairs(tmp_path / "p.csv", "1,2")


@pytest.mark.parametrize("missing", ["init_checkpoint", "output_dir"])
def test_run_embeddings_in_python_needs_a_model_and_an_output_dir(tmp_path, missing):
    """The command's required flags, as `EmbeddingsRunConfig` fields (None by default, as in
    every run config): named before anything is read."""
    given = {"init_checkpoint": str(tmp_path / "model"), "output_dir": str(tmp_path / "out")}
    del given[missing]
    with pytest.raises(UsageError, match=rf"^--{missing} is required$"):
        run_embeddings(EmbeddingsRunConfig(do_eval=True, dev_file="dev.tsv", **given))
    assert not (tmp_path / "out").exists()


def test_fit_save_and_reload(encoder, tmp_path):
    pairs = [("A man is playing a guitar.", "Someone plays music on a guitar."),
             ("The cat sat on the mat.", "A cat is sitting on a rug."),
             ("Dogs are running in the park.", "Two dogs run across the grass."),
             ("The stock market fell sharply.", "Shares dropped a lot today."),
             ("She is cooking pasta.", "A woman makes spaghetti in the kitchen."),
             ("It is raining heavily.", "There is a lot of rain outside."),
             ("The child reads a book.", "A kid is reading."),
             ("He repairs the old car.", "A man fixes a vehicle.")]
    trained = TextEncoder.from_pretrained(encoder.inputs.init_checkpoint, max_seq_length=32,
                                          pooling="cls")

    def retrieved():  # each text's pair is its nearest of the 8 others' pairs
        found = trained.search(trained.encode([a for a, _ in pairs]),
                               trained.encode([b for _, b in pairs]), top_k=1)
        return sum(r[0]["corpus_id"] == i for i, r in enumerate(found))

    before = retrieved()
    result = trained.fit(pairs, epochs=15, batch_size=8, learning_rate=5e-3)
    assert result["steps"] == 15 and before < 8 and retrieved() == 8
    with pytest.raises(EmbeddingsError, match=r"scores\[1\] = 7 is outside score_range 0\.\.5"):
        trained.fit(pairs[:2], scores=[1, 7], score_range=(0, 5))
    saved = trained.save(tmp_path / "embedder")
    assert sorted(os.listdir(saved)) == [
        "30k-clean.model", "albert_config.json", "checkpoint", "embedding_config.json",
        "model.ckpt-best.data-00000-of-00001", "model.ckpt-best.index", "tokenizer_config.json"]
    reloaded = TextEncoder.from_pretrained(saved)
    assert (reloaded.pooling, reloaded.max_seq_length) == ("cls", 32)
    np.testing.assert_array_equal(reloaded.encode(TEXTS), trained.encode(TEXTS))
    assert reloaded.digest == trained.digest != encoder.digest


def test_tflite_embedder_equals_encode(encoder, tmp_path):
    written = encoder.export_tflite(tmp_path / "lite")
    assert sorted(os.listdir(tmp_path / "lite")) == ["30k-clean.model", "embedder.float32.tflite",
                                                     "embedder.json"]
    lite = LiteEmbedder.from_folder(tmp_path / "lite", kind="float32")
    assert lite.path == written["float32"]
    got = np.concatenate([lite.embed([text]) for text in TEXTS])  # padded to 32 pieces
    np.testing.assert_allclose(got, encoder.encode(TEXTS), atol=1e-5)


def test_search_equals_brute_force(encoder, data_dir):
    corpus = passages(data_dir / "pretrain" / "nltk_gutenberg" / "austen-emma.txt", 60)
    queries = ["She was very happy.", "a letter from her father", "the weather"]
    vectors, asked = encoder.encode(corpus), encoder.encode(queries)
    found = encoder.search(asked, vectors, top_k=10)
    for query, results in zip(asked, found):
        cosines = [float(np.dot(query.astype(np.float64), v)) for v in vectors]
        brute = sorted(range(len(corpus)), key=lambda i: (-cosines[i], i))[:10]
        assert [r["corpus_id"] for r in results] == brute
        assert [r["score"] for r in results] == pytest.approx([cosines[i] for i in brute],
                                                              abs=1e-6)
    assert len({r[0]["corpus_id"] for r in found}) == 3  # the queries find different texts
    assert [[r["corpus_id"] for r in q] for q in encoder.search(queries, vectors, top_k=10)] == \
        [[r["corpus_id"] for r in q] for q in found]  # texts are encoded first
    with pytest.raises(EmbeddingsError, match="an empty corpus; nothing to search"):
        encoder.search(asked, np.zeros((0, vectors.shape[1])))
    with pytest.raises(EmbeddingsError, match="top_k must be an integer of at least 1, got 0"):
        encoder.search(asked, vectors, top_k=0)


def test_search_command_and_its_index_file(encoder, pretrained_folder, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS[:3]) + "\n\n" + TEXTS[3] + "\n")
    argv = ["albert_tf.search", f"--init_checkpoint={pretrained_folder}", f"--index_file={corpus}",
            "--max_seq_length=32", "--top_k=2", "--query=a guitar player", "--query=cats"]
    done = run_entry_point("-m", argv)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    want = encoder.search(encoder.encode(["a guitar player", "cats"]), encoder.encode(TEXTS), 2)
    assert [[r["corpus_id"] for r in line["results"]] for line in lines] == \
        [[r["corpus_id"] for r in w] for w in want]
    assert lines[0]["results"][0]["text"] == TEXTS[want[0][0]["corpus_id"]]
    index = tmp_path / "corpus.txt.index.npz"
    built = index.stat().st_mtime_ns
    assert run_entry_point("-m", argv).returncode == 0 and index.stat().st_mtime_ns == built
    other = run_entry_point("-m", [argv[0], f"--init_checkpoint={pretrained_folder}",
                                   f"--index_file={index}", "--query=x"])  # length 64, not 32
    assert other.returncode == 1 and other.stdout == ""
    assert other.stderr.startswith(f"error: {index} was built by another model (digest ")
    assert len(other.stderr.strip().splitlines()) == 1
    (tmp_path / "empty.txt").write_text("\n  \n")
    empty = run_entry_point("-m", [argv[0], f"--init_checkpoint={pretrained_folder}",
                                   f"--index_file={tmp_path / 'empty.txt'}", "--query=x"])
    assert empty.returncode == 1 and empty.stderr.strip() == \
        f"error: {tmp_path / 'empty.txt'}: an empty corpus (no non-blank line); nothing to search"
    assert not (tmp_path / "empty.txt.index.npz").exists()


def test_run_embeddings_trains_evaluates_and_writes_a_folder(pretrained_folder, stsb, tmp_path):
    rows = (stsb / "train.tsv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.tsv").write_text("\n".join(rows[:25]) + "\n", encoding="utf-8")
    (tmp_path / "dev.tsv").write_text("\n".join(rows[:1] + rows[100:120]) + "\n",
                                      encoding="utf-8")
    out = tmp_path / "embedder"
    done = run_entry_point("run_embeddings.py", [
        f"--init_checkpoint={pretrained_folder}", f"--train_file={tmp_path / 'train.tsv'}",
        f"--dev_file={tmp_path / 'dev.tsv'}", "--do_train", "--do_eval", f"--output_dir={out}",
        "--max_seq_length=32", "--train_batch_size=8", "--learning_rate=1e-3", "--json"])
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    # Without --json the command ends with these lines, not the dump.
    assert run_embeddings_entry.gist(result, str(out)) == [
        f"model folder: {result['output_dir']} (--init_checkpoint={result['output_dir']} alone "
        "serves it)",
        f"trained on {result['train_pairs']} pairs, {result['train_steps']} steps "
        f"(contrastive loss, {result['pooling']} pooling)",
        f"Spearman x100 {result['eval_spearman']:.2f} on 20 scored pairs "
        f"({result['output_dir']}/eval_results.json)"]
    assert json.loads((out / "eval_results.json").read_text()) == \
        {k: v for k, v in result.items() if k != "output_dir"}
    positives = sum(float(r.split("\t")[-1]) >= 2.5 for r in rows[1:25])
    assert result["train_pairs"] == positives and result["train_steps"] == -(-positives // 8)
    dev = read_pairs(tmp_path / "dev.tsv")
    again = TextEncoder.from_pretrained(out).evaluate(dev.texts_a, dev.texts_b, dev.scores)
    assert result["eval_spearman"] == pytest.approx(again["spearman"], abs=1e-9)
    assert result["eval_pairs"] == 20
    refused = run_entry_point("run_embeddings.py", [
        f"--init_checkpoint={pretrained_folder}", f"--train_file={tmp_path / 'train.tsv'}",
        "--do_train",
        f"--output_dir={out}"])
    assert refused.returncode == 1 and "exists and is not an empty folder" in refused.stderr
    scored = run_entry_point("run_embeddings.py", [  # no --json: the gist alone on stdout
        f"--init_checkpoint={out}", f"--dev_file={tmp_path / 'dev.tsv'}", "--do_eval",
        f"--output_dir={tmp_path / 'scored'}"])
    assert scored.returncode == 0, scored.stderr[-2000:]
    assert scored.stdout.splitlines() == [
        f"Spearman x100 {result['eval_spearman']:.2f} on 20 scored pairs "
        f"({tmp_path / 'scored' / 'eval_results.json'})"]


@pytest.mark.parametrize("content,message", [
    ("just one column\nsecond\n", r"train\.tsv:1: one column; a pair file needs two text"),
    ("sentence1\tsentence2\tscore\na b\tc d\t6\n",
     r"train\.tsv:2: score 6 is outside the file's range 0\.\.5")])
def test_run_embeddings_bad_files_are_one_line(pretrained_folder, tmp_path, content, message):
    (tmp_path / "train.tsv").write_text(content)
    done = run_entry_point("run_embeddings.py", [
        f"--init_checkpoint={pretrained_folder}", f"--train_file={tmp_path / 'train.tsv'}",
        "--do_train",
        f"--output_dir={tmp_path / 'out'}"])
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert pytest.importorskip("re").search(message, done.stderr)
    assert not (tmp_path / "out").exists()
