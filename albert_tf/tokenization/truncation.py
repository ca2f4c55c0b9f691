"""Sequence-pair truncation, as the original's classifier features (run_classifier) do it."""

from __future__ import annotations


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_length: int) -> None:
    """Pops the last token of the longer list (B on ties) until the pair fits, in place."""
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()
