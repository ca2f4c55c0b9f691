"""Sequence pairs as the original's classifier features (run_classifier) build them: trimmed to
fit, then packed as `[CLS] A [SEP] B [SEP]` with their segment ids."""

from __future__ import annotations


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_length: int) -> None:
    """Pops the last token of the longer list (B on ties) until the pair fits, in place."""
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def pack_pair(tokens_a: list, tokens_b: list | None, max_seq_length: int) -> tuple[list, list]:
    """(tokens, segment ids) of `[CLS] A [SEP]` (segment 0) + `B [SEP]` (segment 1), the pair
    trimmed first (a single text is cut to max_seq_length - 2). The inputs are not changed."""
    tokens_a = list(tokens_a)
    tokens_b = list(tokens_b) if tokens_b else []
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    else:
        tokens_a = tokens_a[:max_seq_length - 2]
    tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += tokens_b + ["[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
    return tokens, segment_ids
