"""Entity-level precision, recall and F1 as conlleval computes them (seqeval's default mode
follows the same chunk rules), per-type F1 and token accuracy. Plain Python: no TensorFlow.

A tag `X-TYPE` (one letter, a dash, the type) is read as prefix X and type TYPE; any other tag
(`O`, `.`, or a tag without such a prefix) is the prefix itself with no type. A chunk starts and
ends where conlleval's rules say, between each tag and the one before it (a sentence starts and
ends with an implicit `O`):

* it ends after E or S; after B or I when the next prefix is B, S or O; and after any tag other
  than O or `.` when the next type differs;
* it starts at B or S; at E or I after E, S or O; and at any tag other than O or `.` whose
  type differs from the previous one.

So IOB1 (CoNLL-2003's I-X I-X B-X), IOB2/BIO and IOBES all decode, and so do ill-formed
predictions (an I-X after O starts a chunk). A chunk is (type, first word, last word) and counts
as found only when a predicted chunk has the same three. Tags without an `X-` prefix (POS sets)
form no chunks, as in conlleval: their measure is the token accuracy. (conlleval's bracket tags
`[` and `]` are not read as brackets.)
"""

from __future__ import annotations

_OUTSIDE = ("O", ".")


def split_tag(tag: str) -> tuple[str, str]:
    """(prefix, type): "B-PER" → ("B", "PER"), "O" → ("O", "")."""
    if len(tag) >= 2 and tag[1] == "-":
        return tag[0], tag[2:]
    return tag, ""


def chunk_ends(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """Whether a chunk ends between the previous word (prefix, type) and this one."""
    return (prev in ("E", "S") or (prev in ("B", "I") and tag in ("B", "S", "O"))
            or (prev not in _OUTSIDE and prev_type != tag_type))


def chunk_starts(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """Whether a chunk starts at this word, after the previous one (prefix, type)."""
    return (tag in ("B", "S") or (prev in ("E", "S", "O") and tag in ("E", "I"))
            or (tag not in _OUTSIDE and prev_type != tag_type))


def chunks(tags) -> list[tuple[str, int, int]]:
    """(type, first word, last word) of every chunk of one sentence's tags."""
    found, begin = [], 0
    prev, prev_type = "O", ""
    for index, tag in enumerate(list(tags) + ["O"]):
        prefix, kind = split_tag(tag)
        if chunk_ends(prev, prev_type, prefix, kind):
            found.append((prev_type, begin, index - 1))
        if chunk_starts(prev, prev_type, prefix, kind):
            begin = index
        prev, prev_type = prefix, kind
    return found


def _prf(correct: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def tagging_metrics(gold_sentences, predicted_sentences) -> dict:
    """`eval_precision`, `eval_recall`, `eval_f1` (entities, micro-averaged over all of them),
    `eval_f1_<TYPE>` per entity type found in either, and `eval_accuracy` (tags of words).
    Both arguments are lists of sentences, each a list of tag strings, word for word."""
    if len(gold_sentences) != len(predicted_sentences):
        raise ValueError(f"{len(gold_sentences)} gold sentences but {len(predicted_sentences)} "
                         "predicted")
    gold, predicted = set(), set()
    words = right = 0
    for index, (want, got) in enumerate(zip(gold_sentences, predicted_sentences)):
        if len(want) != len(got):
            raise ValueError(f"sentence {index}: {len(want)} gold tags but {len(got)} predicted")
        gold.update((index, *chunk) for chunk in chunks(want))
        predicted.update((index, *chunk) for chunk in chunks(got))
        words += len(want)
        right += sum(a == b for a, b in zip(want, got))
    found = gold & predicted
    precision, recall, f1 = _prf(len(found), len(predicted), len(gold))
    result = {"eval_precision": precision, "eval_recall": recall, "eval_f1": f1,
              "eval_accuracy": right / words if words else 0.0}
    for kind in sorted({c[1] for c in gold | predicted} - {""}):
        result[f"eval_f1_{kind}"] = _prf(sum(c[1] == kind for c in found),
                                         sum(c[1] == kind for c in predicted),
                                         sum(c[1] == kind for c in gold))[2]
    return result
