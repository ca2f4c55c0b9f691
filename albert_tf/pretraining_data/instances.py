"""Pretraining instances from a document: target lengths, A/B segments, sentence order, truncation.

The original's `create_instances_from_document`, draw for draw, on token codes (see
`sentence_tokens`). A document is a list of sentences; a sentence is a non-empty list of codes.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

from albert_tf.pretraining_data import masking


class Instance(NamedTuple):
    input_ids: list  # [CLS] A [SEP] B [SEP] after masking
    len_a: int  # tokens of segment A (segment ids: 0 for [CLS] A [SEP], 1 for B [SEP])
    token_boundary: list
    masked_lm_positions: list
    masked_lm_ids: list
    sentence_order_label: int  # 1 = swapped (or a random-document B), 0 = in order


@dataclasses.dataclass(frozen=True)
class InstanceConfig:
    max_seq_length: int = 512
    short_seq_prob: float = 0.1
    random_next_sentence: bool = False

    def __post_init__(self):
        if self.max_seq_length < 5:
            # [CLS] A [SEP] B [SEP] with non-empty A and B, and randint(2, max_seq_length - 3).
            raise ValueError(f"max_seq_length must be at least 5, got {self.max_seq_length}")


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_num_tokens: int, rng):
    """Trims the longer list (B on ties) from a random end until the pair fits; returns new lists.

    The original deletes one token per step, front or back on a draw, from whichever list is then
    longer. Which list a step trims does not depend on the draws: first the longer one until the
    lengths meet, then B, A, B, ... alternately. So all draws are made at once, in the same order,
    and each list is cut once (the original's per-token deletion is quadratic on long sentences).
    """
    len_a, len_b = len(tokens_a), len(tokens_b)
    excess = len_a + len_b - max_num_tokens
    if excess <= 0:
        return tokens_a, tokens_b
    random = rng.random
    fronts = [random() < 0.5 for _ in range(excess)]
    lead = min(abs(len_a - len_b), excess)  # steps on the longer list before the lengths meet
    alternating = fronts[lead:]
    cut_a, cut_b = len(alternating) // 2, (len(alternating) + 1) // 2
    front_a, front_b = sum(alternating[1::2]), sum(alternating[0::2])
    if len_a > len_b:
        cut_a += lead
        front_a += sum(fronts[:lead])
    else:
        cut_b += lead
        front_b += sum(fronts[:lead])
    return (tokens_a[front_a:len_a - (cut_a - front_a)], tokens_b[front_b:len_b - (cut_b - front_b)])


def _concat(sentences) -> list:
    return [code for sentence in sentences for code in sentence]


def create_instances_from_document(documents: list, document_index: int, cfg: InstanceConfig,
                                   mask_cfg: masking.MaskingConfig, rng,
                                   draw_ngram: Callable[[], int],
                                   ngram_lengths: list | None = None) -> list[Instance]:
    """Instances of `documents[document_index]`; random B segments come from `documents`."""
    document = documents[document_index]
    max_num_tokens = cfg.max_seq_length - 3
    # One draw per document per pass: all its instances in this pass share the target.
    target_seq_length = max_num_tokens
    if rng.random() < cfg.short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)

    instances = []
    chunk: list = []
    chunk_length = 0
    i = 0
    while i < len(document):
        sentence = document[i]
        chunk.append(sentence)
        chunk_length += len(sentence)
        if i == len(document) - 1 or chunk_length >= target_seq_length:
            a_end = 1
            if len(chunk) >= 2:
                a_end = rng.randint(1, len(chunk) - 1)
            tokens_a = _concat(chunk[:a_end])
            if len(chunk) == 1 or (cfg.random_next_sentence and rng.random() < 0.5):
                label = 1
                tokens_b = _random_segment(documents, document_index,
                                           target_seq_length - len(tokens_a), rng)
                i -= len(chunk) - a_end  # the unused sentences are read again
            elif not cfg.random_next_sentence and rng.random() < 0.5:
                label = 1
                tokens_a, tokens_b = _concat(chunk[a_end:]), tokens_a
            else:
                label = 0
                tokens_b = _concat(chunk[a_end:])
            tokens_a, tokens_b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
            if not tokens_a or not tokens_b:
                raise AssertionError("empty segment after truncation (max_seq_length too small)")
            tokens = [mask_cfg.cls_code, *tokens_a, mask_cfg.sep_code, *tokens_b, mask_cfg.sep_code]
            ids, positions, labels, boundary = masking.create_masked_lm_predictions(
                tokens, mask_cfg, rng, draw_ngram, ngram_lengths)
            instances.append(Instance(ids, len(tokens_a), boundary, positions, labels, label))
            chunk = []
            chunk_length = 0
        i += 1
    return instances


def _random_segment(documents, document_index, target_b_length, rng) -> list:
    """B from another document: up to 10 tries to avoid the current one, then a random start."""
    for _ in range(10):
        random_document_index = rng.randint(0, len(documents) - 1)
        if random_document_index != document_index:
            break
    random_document = documents[random_document_index]
    start = rng.randint(0, len(random_document) - 1)
    tokens_b: list = []
    for j in range(start, len(random_document)):
        tokens_b.extend(random_document[j])
        if len(tokens_b) >= target_b_length:
            break
    return tokens_b
