"""SquadExample → windowed model features, exactly as the original `convert_examples_to_features`.

Each question becomes one feature per sliding window over the paragraph pieces:
`[CLS] query [SEP] window [SEP]` padded with id 0, plus `p_mask` (1 = cannot be in the answer),
max-context flags and per-piece raw-text offsets that post-processing needs to recover text.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from absl import logging

from albert_tf.tasks.squad.alignment import align_paragraph, answer_token_span
from albert_tf.tokenization import encode_ids, encode_pieces, preprocess_text

FIRST_UNIQUE_ID = 1000000000


@dataclasses.dataclass
class SquadFeature:
    unique_id: int
    example_index: Optional[int]  # None for training features, as the original
    doc_span_index: int
    tok_start_to_orig_index: list
    tok_end_to_orig_index: list
    token_is_max_context: dict  # position in the feature → bool, context positions only
    tokens: list
    input_ids: list
    input_mask: list
    segment_ids: list
    p_mask: list
    paragraph_len: int  # quirk kept: len(tokens) before padding, query and specials included
    start_position: Optional[int] = None
    end_position: Optional[int] = None
    is_impossible: bool = False


def doc_spans(num_tokens: int, max_tokens_for_doc: int, doc_stride: int) -> list:
    """(start, length) windows: advance by min(length, doc_stride) until one reaches the end."""
    if doc_stride < 1 or max_tokens_for_doc < 1:  # a window that never advances: no end
        raise ValueError(f"doc_stride ({doc_stride}) and max_tokens_for_doc "
                         f"({max_tokens_for_doc}) must be at least 1")
    spans = []
    start = 0
    while start < num_tokens:
        length = min(num_tokens - start, max_tokens_for_doc)
        spans.append((start, length))
        if start + length == num_tokens:
            break
        start += min(length, doc_stride)
    return spans


def is_max_context(spans: list, span_index: int, position: int) -> bool:
    """True iff window `span_index` gives `position` the most context (ties: earliest window)."""
    best_score, best_index = None, None
    for index, (start, length) in enumerate(spans):
        end = start + length - 1
        if position < start or position > end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score:
            best_score, best_index = score, index
    return span_index == best_index


class _AlignmentCache:
    """Alignments keyed by paragraph text: every question of a paragraph shares one (the LCS is
    the slow part of feature creation and depends only on the paragraph). Training examples are
    shuffled, so this is a dict rather than a last-paragraph slot; it is bounded in size."""

    def __init__(self, sp_model, do_lower_case, max_entries=4096):
        self.sp_model, self.do_lower_case = sp_model, do_lower_case
        self.max_entries = max_entries
        self._entries: dict = {}

    def get(self, paragraph_text):
        if paragraph_text not in self._entries:
            if len(self._entries) >= self.max_entries:
                self._entries.pop(next(iter(self._entries)))
            pieces = encode_pieces(self.sp_model, preprocess_text(paragraph_text,
                                                                  lower=self.do_lower_case),
                                   return_unicode=False)
            self._entries[paragraph_text] = align_paragraph(paragraph_text, pieces,
                                                            self.do_lower_case)
        return self._entries[paragraph_text]


def convert_examples_to_features(examples, sp_model, max_seq_length: int, doc_stride: int,
                                 max_query_length: int, is_training: bool,
                                 output_fn: Optional[Callable] = None, do_lower_case: bool = True,
                                 first_unique_id: int = FIRST_UNIQUE_ID) -> list:
    """Features of every example, in order (also passed one by one to `output_fn` if given).

    Examples whose paragraph cannot be aligned (including empty paragraphs) get no feature, as
    in the original; at prediction time their questions are answered from no candidates.
    """
    if max_seq_length <= max_query_length + 3:
        raise ValueError(f"max_seq_length ({max_seq_length}) must exceed max_query_length "
                         f"({max_query_length}) + 3")
    cls_id, sep_id = sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]")
    cache = _AlignmentCache(sp_model, do_lower_case)
    features = []
    unique_id = first_unique_id
    positives = negatives = 0
    for example_index, example in enumerate(examples):
        query_ids = encode_ids(sp_model, preprocess_text(example.question_text,
                                                         lower=do_lower_case))[:max_query_length]
        alignment = cache.get(example.paragraph_text)
        if alignment is None:
            logging.warning("MISMATCH DETECTED: cannot align the paragraph of question %s "
                            "(empty or unalignable context); the question gets no feature",
                            example.qas_id)
            continue
        tok_start = tok_end = None
        if is_training:
            if example.is_impossible:
                tok_start = tok_end = 0
            else:
                tok_start, tok_end = answer_token_span(alignment, example.start_position,
                                                       example.orig_answer_text)
        doc_ids = [sp_model.PieceToId(piece) for piece in alignment.pieces]
        spans = doc_spans(len(doc_ids), max_seq_length - len(query_ids) - 3, doc_stride)
        for span_index, (span_start, span_length) in enumerate(spans):
            ids = [cls_id] + query_ids + [sep_id]
            segment_ids = [0] * len(ids)
            p_mask = [0] + [1] * (len(query_ids) + 1)
            max_context = {}
            window = range(span_start, span_start + span_length)
            for piece_index in window:
                max_context[len(ids)] = is_max_context(spans, span_index, piece_index)
                ids.append(doc_ids[piece_index])
            ids.append(sep_id)
            segment_ids += [1] * (span_length + 1)
            p_mask += [0] * span_length + [1]
            paragraph_len = len(ids)
            padding = max_seq_length - len(ids)
            input_mask = [1] * len(ids) + [0] * padding
            ids += [0] * padding
            segment_ids += [0] * padding
            p_mask += [1] * padding

            start_position = end_position = None
            span_impossible = example.is_impossible
            if is_training:
                start_position = end_position = 0
                span_end = span_start + span_length - 1
                if not span_impossible and span_start <= tok_start and tok_end <= span_end:
                    offset = len(query_ids) + 2
                    start_position = tok_start - span_start + offset
                    end_position = tok_end - span_start + offset
                else:
                    span_impossible = True
                if span_impossible:
                    negatives += 1
                else:
                    positives += 1
            feature = SquadFeature(
                unique_id=unique_id,
                example_index=None if is_training else example_index,
                doc_span_index=span_index,
                tok_start_to_orig_index=[alignment.tok_start_to_orig_index[k] for k in window],
                tok_end_to_orig_index=[alignment.tok_end_to_orig_index[k] for k in window],
                token_is_max_context=max_context,
                tokens=[sp_model.IdToPiece(i) for i in ids],
                input_ids=ids, input_mask=input_mask, segment_ids=segment_ids, p_mask=p_mask,
                paragraph_len=paragraph_len, start_position=start_position,
                end_position=end_position, is_impossible=bool(span_impossible))
            if output_fn is not None:
                output_fn(feature)
            features.append(feature)
            unique_id += 1
    if is_training:
        logging.info("SQuAD training features: %d positive, %d negative", positives, negatives)
    return features
