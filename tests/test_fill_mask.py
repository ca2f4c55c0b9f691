"""Fill-mask (albert_tf/tasks/fill_mask, `python -m albert_tf.fill_mask`, the encoder export's
`fill_mask` signature; the same export's `embed` too) on a tiny spread pretraining model: the
masks found in raw text, the top-k equal to the Keras pretrainer's own masked-LM outputs, top-1
accuracy equal to run_pretraining's masked_lm_accuracy on the same positions, and the errors."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.source_export import export_source
from albert_tf.tasks.embeddings import TextEncoder
from albert_tf.tasks.fill_mask import FillMask, FillMaskError
from albert_tf.tasks.pretraining.objective import pretraining_metrics
from albert_tf.tokenization import encode_ids, load_sentencepiece, preprocess_text
from support.entry_points import run_entry_point
from support.informative import assert_spread
from support.released_model import passages


@pytest.fixture(scope="module")
def fill(pretrained_folder):
    return FillMask.from_pretrained(pretrained_folder, max_seq_length=64)


@pytest.fixture(scope="module")
def held_out(data_dir, fill):
    """50 sentences (a passage's first 12 words) with one word masked: (masked texts, their
    ids, the masked word's id). The word is one the whole text tokenizes as a single piece, so
    the masked text's ids are the whole text's with [MASK] at that place."""
    path = data_dir / "pretrain" / "nltk_gutenberg" / "austen-persuasion.txt"
    rows = fill.single_word_masks((p.split()[:12] for p in passages(path, 200)), 50)
    if len(rows) == 50:
        return rows
    pytest.fail(f"only {len(rows)} maskable sentences")


def keras_top(fill, rows, k):
    """Top-k ids and probabilities from the pretrainer's own call (numpy softmax and sort)."""
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), np.int32)
    mask = np.zeros_like(ids)
    places = [[i for i, v in enumerate(r) if v == fill.tokenizer.mask_id] for r in rows]
    positions = np.zeros((len(rows), max(map(len, places))), np.int32)
    for i, (row, at) in enumerate(zip(rows, places)):
        ids[i, :len(row)], mask[i, :len(row)], positions[i, :len(at)] = row, 1, at
    logits = fill.model({"input_ids": ids, "input_mask": mask, "segment_ids": 0 * ids,
                         "masked_lm_positions": positions})["masked_lm_logits"].numpy()
    logits = logits.astype(np.float64) - logits.max(-1, keepdims=True)
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    order = np.argsort(-probabilities, -1, kind="stable")[..., :k]
    return ([o[:len(at)] for o, at in zip(order, places)],
            [np.take_along_axis(p, o, -1)[:len(at)] for p, o, at in zip(probabilities, order, places)])


def test_masks_are_found_anywhere_in_raw_text(fill, spm_model):
    sp = load_sentencepiece(spm_model)
    pieces = lambda text: encode_ids(sp, preprocess_text(text, lower=True))  # noqa: E731
    ids = fill.encode(["[MASK] Shares its[MASK]. And [MASK]"])[0]
    cls, sep, mask = (sp.PieceToId(p) for p in ("[CLS]", "[SEP]", "[MASK]"))
    assert ids == [cls, mask, *pieces("Shares its"), mask, *pieces("."), *pieces("And"),
                   mask, sep]
    assert ids.count(mask) == 3 and pieces("its") == pieces(" its ")


def test_predict_equals_the_pretrainers_masked_lm(fill):
    texts = ["The quick brown [MASK] jumps over the lazy dog.", "[MASK] shares its[MASK].",
             "Anne was [MASK] at the news."]
    results = fill.predict(texts, top_k=4)
    want_ids, want_scores = keras_top(fill, fill.encode(texts), 4)
    assert [len(r) for r in results] == [1, 2, 1]
    firsts = []
    for masks, ids, scores in zip(results, want_ids, want_scores):
        for records, row_ids, row_scores in zip(masks, ids, scores):
            assert [r["token"] for r in records] == row_ids.tolist()
            np.testing.assert_allclose([r["score"] for r in records], row_scores, atol=1e-6)
            firsts.append(row_scores)
    assert_spread(firsts, 1e-4)  # the texts' candidates differ: a mix-up would show
    record = results[0][0][0]
    assert sorted(record) == ["score", "sequence", "token", "token_str"]
    piece = fill.tokenizer.piece(record["token"])  # glued to "brown" unless it starts a word
    assert record["token_str"] == piece.replace("\u2581", "")
    assert record["sequence"] == "the quick brown" + piece.replace("\u2581", " ") + \
        " jumps over the lazy dog."
    assert results[1][0][0]["sequence"].endswith(" shares its [MASK] .")
    alone = fill.predict(texts[0], top_k=1)  # a str: that text's masks (batch of one)
    assert [[r["token"] for r in m] for m in alone] == [[record["token"]]]
    assert alone[0][0]["score"] == pytest.approx(record["score"], abs=1e-6)


def test_top1_accuracy_equals_run_pretrainings_masked_lm_accuracy(fill, held_out):
    """The held-out words, and for every other sentence the Keras model's own top word as the
    label (so the accuracy is well inside 0..1): FillMask's top-1 agrees with the label exactly
    as often as pretraining_metrics (run_pretraining --do_eval's masked_lm_accuracy) counts."""
    texts, rows, words = zip(*held_out)
    argmax = [int(i[0][0]) for i in keras_top(fill, list(rows), 1)[0]]
    labels = [w if i % 2 == 0 else a for i, (w, a) in enumerate(zip(words, argmax))]
    top1 = [int(masks[0][0]["token"]) for masks in fill.predict(list(texts), top_k=1)]
    ids = np.array(rows, dtype=object)
    width = max(map(len, rows))
    features = {"input_ids": np.array([r + [0] * (width - len(r)) for r in ids], np.int32),
                "input_mask": np.array([[1] * len(r) + [0] * (width - len(r)) for r in ids],
                                       np.int32),
                "masked_lm_positions": np.array([[r.index(fill.tokenizer.mask_id)] for r in ids],
                                                np.int32),
                "masked_lm_ids": np.array(labels, np.int32)[:, None],
                "masked_lm_weights": np.ones((len(rows), 1), np.float32),
                "next_sentence_labels": np.zeros((len(rows), 1), np.int32)}
    features["segment_ids"] = 0 * features["input_ids"]
    metrics = pretraining_metrics(fill.model(features, training=False), features)
    correct, total = (float(v) for v in metrics["masked_lm_accuracy"])
    hits = sum(t == label for t, label in zip(top1, labels))
    assert total == 50 and hits == correct
    assert hits == 25 + sum(a == w for a, w in zip(argmax[0::2], words[0::2]))


def test_export_fill_mask_signature_equals_the_class(fill, pretrained_folder, held_out, tmp_path):
    """The 50 held-out sentences and texts with several masks, one glued to a word."""
    result = export_source(str(pretrained_folder), str(tmp_path / "exports"), max_seq_length=64)
    assert result["encoder_check"]["fill_mask/ids"] == 0
    assert result["encoder_check"]["embed/embeddings"] <= 1e-5  # tasks/embeddings' signature
    served = tf.saved_model.load(result["encoder"]).signatures["fill_mask"]
    texts = ["The quick brown [MASK] jumps over the lazy dog.", "[MASK] shares its[MASK].",
             *(text for text, _, _ in held_out)]
    out = served(text=tf.constant(texts + ["no mask"]), top_k=tf.constant(5))
    ids, scores, _ = fill.top_ids(texts, top_k=5)
    assert out["mask_count"].numpy().tolist() == [1, 2] + [1] * 50 + [0]
    assert len({int(row[0][0]) for row in ids}) >= 5  # not one word for every sentence
    for i, (row_ids, row_scores) in enumerate(zip(ids, scores)):
        got = out["ids"].numpy()[i]
        np.testing.assert_array_equal(got[:len(row_ids)], row_ids)
        np.testing.assert_allclose(out["scores"].numpy()[i][:len(row_ids)], row_scores, atol=1e-6)
        assert [p.decode() for p in out["pieces"].numpy()[i][0]] == \
            [fill.tokenizer.piece(t) for t in row_ids[0]]
    assert (out["ids"].numpy()[-1] == -1).all() and (out["ids"].numpy()[0][1] == -1).all()
    # The same export's `embed` (tasks/embeddings) against TextEncoder.encode, mean pooling.
    plain = [text.replace("[MASK]", "word") for text in texts]
    embedded = tf.saved_model.load(result["encoder"]).signatures["embed"](
        text=tf.constant(plain))["embeddings"].numpy()
    want = TextEncoder.from_pretrained(pretrained_folder, max_seq_length=64).encode(plain)
    assert_spread(want, 1e-2)
    np.testing.assert_allclose(embedded, want, atol=1e-5)


def test_command_prints_the_classes_records(fill, pretrained_folder, held_out):
    texts = ["[MASK] shares its[MASK].", *(text for text, _, _ in held_out)]
    done = run_entry_point("-m", ["albert_tf.fill_mask", f"--init_checkpoint={pretrained_folder}",
                                  "--top_k=5", "--max_seq_length=64", f"--text={texts[0]}",
                                  *texts[1:]])
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    want = fill.predict(texts, 5)
    assert [line["text"] for line in lines] == texts
    for line, masks in zip(lines, want):  # the same top-5 (scores: another batch, 1e-6)
        assert [[r["token"] for r in m] for m in line["masks"]] == \
            [[r["token"] for r in m] for m in masks]
        assert [[r["sequence"] for r in m] for m in line["masks"]] == \
            [[r["sequence"] for r in m] for m in masks]
        np.testing.assert_allclose([[r["score"] for r in m] for m in line["masks"]],
                                   [[r["score"] for r in m] for m in masks], atol=1e-6)


@pytest.mark.parametrize("argv,message", [
    (["Anne was here."], r"^error: texts\[0\] 'Anne was here.' holds no \[MASK\]"),
    (["--top_k=0", "A [MASK]."], r"^error: top_k must be an integer of at least 1, got 0"),
    ([], r"^error: give one or more texts after the flags")])
def test_command_errors_are_one_line(pretrained_folder, argv, message):
    done = run_entry_point("-m", ["albert_tf.fill_mask",
                                  f"--init_checkpoint={pretrained_folder}", *argv])
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""
    assert __import__("re").match(message, done.stderr)


def test_python_errors(fill, spm_model):
    with pytest.raises(FillMaskError, match=r"texts\[1\] 'two' holds no \[MASK\]"):
        fill.predict(["one [MASK]", "two"])
    with pytest.raises(FillMaskError, match="top_k must be an integer of at least 1, got 0"):
        fill.predict(["one [MASK]"], top_k=0)
    words = " ".join(["x"] * 32)
    count = len(encode_ids(load_sentencepiece(spm_model), words)) + 3  # [CLS] [MASK] [SEP]
    with pytest.raises(FillMaskError, match=rf"texts\[0\] .*: {count} pieces with \[CLS\] and "
                                            r"\[SEP\], more than max_seq_length=64"):
        fill.predict([words + " [MASK]"])
