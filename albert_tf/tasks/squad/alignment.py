"""Character alignment between a raw SQuAD paragraph and its SentencePiece pieces.

Preprocessing (NFKD, accent stripping, lower-casing, space squeezing) changes the text, so piece
offsets cannot be read off directly. As the original, we align the raw characters with the
"piece text" (pieces joined, `▁` → space) by a banded longest-common-subsequence, then map each
piece's first/last character back to the raw text with a nearest-mapped-neighbour rule.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from albert_tf.tokenization import SPIECE_UNDERLINE, preprocess_text


@dataclasses.dataclass
class ParagraphAlignment:
    """Per piece: raw-text start/end character offsets; per piece-text char: its piece index;
    raw char ↔ piece-text char maps (None where unmatched)."""

    pieces: list
    tok_start_to_orig_index: list
    tok_end_to_orig_index: list
    chartok_to_tok_index: list
    orig_to_chartok_index: list
    chartok_to_orig_index: list


def piece_text_offsets(pieces):
    """(piece text, first char of each piece, last char of each piece, piece of each char)."""
    starts, ends, owner = [], [], []
    count = 0
    for index, piece in enumerate(pieces):
        text = piece.replace(SPIECE_UNDERLINE, " ")
        owner.extend([index] * len(text))
        starts.append(count)
        count += len(text)
        ends.append(count - 1)
    return "".join(pieces).replace(SPIECE_UNDERLINE, " "), starts, ends, owner


def _banded_lcs(raw, raw_normalised, piece_text, band):
    """Score of the LCS ending at (n−1, m−1) and the back-pointers {(i, j): 0 up, 1 left, 2 diag}.

    Cells outside the band read as 0 (the original zero-fills a dense table before each run).
    """
    n, m = len(raw), len(piece_text)
    scores: dict = {}
    moves: dict = {}
    get = scores.get
    for i in range(n):
        char = raw_normalised[i]
        for j in range(max(i - band, 0), min(i + band, m)):
            best = 0.0
            if i > 0:
                moves[(i, j)] = 0
                best = get((i - 1, j), 0.0)
            if j > 0:
                left = get((i, j - 1), 0.0)
                if left > best:
                    best = left
                    moves[(i, j)] = 1
            diagonal = get((i - 1, j - 1), 0.0) if i > 0 and j > 0 else 0.0
            if char == piece_text[j] and diagonal + 1 > best:
                best = diagonal + 1
                moves[(i, j)] = 2
            scores[(i, j)] = best
    return get((n - 1, m - 1), 0.0), moves


def convert_index(index: list, pos: int, upper: Optional[int] = None, is_start: bool = True) -> int:
    """index[pos], or when unmapped a value derived from the nearest mapped neighbours.

    `upper` (the raw length) is given in the piece → raw direction: an unmapped tail then maps to
    the end of the raw text.
    """
    if index[pos] is not None:
        return index[pos]
    size = len(index)
    rear = pos
    while rear < size - 1 and index[rear] is None:
        rear += 1
    front = pos
    while front > 0 and index[front] is None:
        front -= 1
    if index[front] is None and index[rear] is None:
        raise ValueError(f"no mapped position around {pos}")
    if index[front] is None:
        if index[rear] >= 1:
            return 0 if is_start else index[rear] - 1
        return index[rear]
    if index[rear] is None:
        if upper is not None and index[front] < upper - 1:
            return index[front] + 1 if is_start else upper - 1
        return index[front]
    gap = index[rear] > index[front] + 1
    if is_start:
        return index[front] + 1 if gap else index[rear]
    return index[rear] - 1 if gap else index[front]


def align_paragraph(paragraph_text: str, pieces: list, do_lower_case: bool):
    """The alignment, or None when it fails (the original then drops the example: it logs
    "MISMATCH DETECTED" when nothing matched or the LCS covers < 80 % of the raw text)."""
    piece_text, starts, ends, owner = piece_text_offsets(pieces)
    n, m = len(paragraph_text), len(piece_text)
    normalised = [preprocess_text(c, lower=do_lower_case, remove_space=False)
                  for c in paragraph_text]
    band = abs(n - m) + 5
    for _ in range(2):
        score, moves = _banded_lcs(paragraph_text, normalised, piece_text, band)
        if score > 0.8 * n:
            break
        band *= 2
    orig_to_chartok: list = [None] * n
    chartok_to_orig: list = [None] * m
    i, j = n - 1, m - 1
    while i >= 0 and j >= 0 and (i, j) in moves:
        move = moves[(i, j)]
        if move == 2:
            orig_to_chartok[i], chartok_to_orig[j] = j, i
            i, j = i - 1, j - 1
        elif move == 1:
            j -= 1
        else:
            i -= 1
    if all(v is None for v in orig_to_chartok) or score < 0.8 * n:
        return None
    tok_start = [convert_index(chartok_to_orig, s, n, is_start=True) for s in starts]
    tok_end = [convert_index(chartok_to_orig, e, n, is_start=False) for e in ends]
    return ParagraphAlignment(list(pieces), tok_start, tok_end, owner, orig_to_chartok,
                              chartok_to_orig)


def answer_token_span(alignment: ParagraphAlignment, start: int, answer_text: str):
    """Piece indices of the answer characters [start, start + len(text) − 1]."""
    end = start + len(answer_text) - 1
    start_char = convert_index(alignment.orig_to_chartok_index, start, is_start=True)
    end_char = convert_index(alignment.orig_to_chartok_index, end, is_start=False)
    tok_start = alignment.chartok_to_tok_index[start_char]
    tok_end = alignment.chartok_to_tok_index[end_char]
    if tok_start > tok_end:
        raise ValueError(f"answer maps to an empty piece span ({tok_start} > {tok_end})")
    return tok_start, tok_end
