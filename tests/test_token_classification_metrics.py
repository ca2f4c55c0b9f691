"""Entity precision/recall/F1 as conlleval computes them: hand-computed cases for IOB2, IOB1,
IOBES and ill-formed tag sequences, and (when seqeval is installed: the [test] extra) the same
numbers as seqeval's default mode on random sequences and on real tweets."""

import random

import pytest

from albert_tf.tasks.token_classification.metrics import chunks, split_tag, tagging_metrics
from support.paths import DATA


def test_split_tag():
    assert split_tag("B-PER") == ("B", "PER")
    assert split_tag("I-ORG-X") == ("I", "ORG-X")
    assert split_tag("O") == ("O", "")
    assert split_tag("NN") == ("NN", "")


@pytest.mark.parametrize("tags, want", [
    # IOB2 (BIO)
    (["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 1), ("LOC", 3, 3)]),
    (["B-PER", "B-PER", "I-PER"], [("PER", 0, 0), ("PER", 1, 2)]),
    # IOB1 (CoNLL-2003's original): I starts a chunk, B only splits two of one type
    (["I-PER", "I-PER", "B-PER", "O", "I-LOC"], [("PER", 0, 1), ("PER", 2, 2), ("LOC", 4, 4)]),
    # IOBES
    (["S-PER", "B-LOC", "I-LOC", "E-LOC", "S-ORG"],
     [("PER", 0, 0), ("LOC", 1, 3), ("ORG", 4, 4)]),
    (["B-LOC", "E-LOC", "E-LOC"], [("LOC", 0, 1), ("LOC", 2, 2)]),
    # ill-formed predictions: a type change splits, an I after O starts a chunk
    (["B-PER", "I-LOC", "I-LOC", "O", "I-PER"], [("PER", 0, 0), ("LOC", 1, 2), ("PER", 4, 4)]),
    # the last word closes a chunk; no prefix (POS tags): no chunks, as conlleval
    (["O", "B-MISC"], [("MISC", 1, 1)]),
    (["NN", "VB", "NN"], []),
])
def test_chunks(tags, want):
    assert chunks(tags) == want


def test_hand_computed_scores():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-PER"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "O"]]
    # gold: PER(0,0-1) LOC(0,3) ORG(1,0) PER(1,2); found: PER(0,0-1) ORG(0,3) ORG(1,0)
    # correct: PER(0,0-1), ORG(1,0) → P = 2/3, R = 2/4
    result = tagging_metrics(gold, pred)
    assert result["eval_precision"] == pytest.approx(2 / 3)
    assert result["eval_recall"] == pytest.approx(0.5)
    assert result["eval_f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert result["eval_accuracy"] == pytest.approx(5 / 7)
    # per type: PER 1 of 1 found, 1 of 2 gold; ORG 1 of 2 found, 1 of 1 gold; LOC 0
    assert result["eval_f1_PER"] == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert result["eval_f1_ORG"] == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert result["eval_f1_LOC"] == 0.0
    # a chunk must match in type, first and last word
    assert tagging_metrics([["B-PER", "I-PER"]], [["B-PER", "O"]])["eval_f1"] == 0.0


def test_nothing_found_or_nothing_to_find_scores_zero():
    result = tagging_metrics([["O", "O"]], [["O", "O"]])
    assert (result["eval_precision"], result["eval_recall"], result["eval_f1"]) == (0, 0, 0)
    assert result["eval_accuracy"] == 1.0
    assert tagging_metrics([["B-X"]], [["O"]])["eval_f1"] == 0.0


def test_sentences_must_align():
    with pytest.raises(ValueError, match="sentence 0: 2 gold tags but 1 predicted"):
        tagging_metrics([["O", "O"]], [["O"]])


def _random_sentences(rng, tags, count):
    return [[rng.choice(tags) for _ in range(rng.randint(1, 12))] for _ in range(count)]


def _real_tweets(limit=300):
    path = DATA / "ner" / "btc" / "dev.conll"
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    sentences = [[line.rsplit("\t", 1)[-1] for line in block.split("\n")]
                 for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]
    return sentences[:limit]


def test_same_numbers_as_seqeval():
    seqeval = pytest.importorskip("seqeval.metrics", reason="seqeval (pip install -e .[test])")
    from seqeval.metrics.sequence_labeling import get_entities

    rng = random.Random(0)
    schemes = [["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],                    # IOB2 / IOB1
               ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "E-LOC", "S-LOC"]]  # IOBES
    for tags in schemes:
        for _ in range(200):
            sequence = [rng.choice(tags) for _ in range(rng.randint(1, 12))]
            assert chunks(sequence) == get_entities(sequence), sequence
    gold = _real_tweets()
    flat = sorted({tag for sentence in gold for tag in sentence})
    cases = [(gold, [[rng.choice(flat) for _ in s] for s in gold]),       # random tagging
             (gold, [[t if rng.random() < 0.8 else "O" for t in s] for s in gold])]  # misses
    for tags in schemes:
        sentences = _random_sentences(rng, tags, 80)
        cases.append((sentences, [[rng.choice(tags) for _ in s] for s in sentences]))
    for want, got in cases:
        ours = tagging_metrics(want, got)
        assert ours["eval_f1"] == seqeval.f1_score(want, got)  # identical, not approximately
        assert ours["eval_precision"] == seqeval.precision_score(want, got)
        assert ours["eval_recall"] == seqeval.recall_score(want, got)
        assert ours["eval_accuracy"] == seqeval.accuracy_score(want, got)
        report = seqeval.classification_report(want, got, output_dict=True, zero_division=0)
        for kind in {c[0] for s in want + got for c in chunks(s)}:
            assert ours[f"eval_f1_{kind}"] == report[kind]["f1-score"], kind
