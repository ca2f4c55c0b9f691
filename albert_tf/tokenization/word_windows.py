"""A sentence's words as windows of pieces, the rule run_ner.py's features and every runner of a
token classifier's ids-in files share (`tasks.token_classification.features`,
`serving.predictor`): each word tokenized on its own (`WordPieces`), windows of
`max_seq_length - 2` pieces `stride` apart (`windows`), and a word's tag taken at its first
piece in the window where it has the most context (`home_window`)."""

from __future__ import annotations

from albert_tf.tokenization.text_rules import preprocess_text
from albert_tf.tokenization.wordpiece import UNK_TOKEN


class WordPieces:
    """Piece ids of one word, as the Python tokenizer gives them (memoised: words repeat)."""

    def __init__(self, tokenizer, do_lower_case: bool = True):
        self.tokenizer = tokenizer
        self.do_lower_case = do_lower_case
        self.spm = tokenizer.sp_model is not None
        self.unk_id = (tokenizer.sp_model.unk_id() if self.spm
                       else tokenizer.vocab[UNK_TOKEN])
        self.cls_id, self.sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
        self._memo = {}

    def __call__(self, word: str) -> list[int]:
        ids = self._memo.get(word)
        if ids is None:
            text = (preprocess_text(word, lower=self.do_lower_case) if self.spm
                    else word)
            ids = self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(text))
            ids = self._memo[word] = list(ids) or [self.unk_id]
        return ids


def windows(num_pieces: int, length: int, stride: int) -> list[tuple[int, int]]:
    """(start, number of pieces) of each window over `num_pieces` pieces."""
    starts = [0]
    while starts[-1] + length < num_pieces:
        starts.append(starts[-1] + stride)
    return [(start, min(length, num_pieces - start)) for start in starts]


def home_window(position: int, spans) -> int:
    """The window whose tag a piece at `position` takes: most context on its shorter side,
    the earlier window on a tie."""
    best, best_score = -1, -1
    for k, (start, length) in enumerate(spans):
        if start <= position < start + length:
            score = min(position - start, start + length - 1 - position)
            if score > best_score:
                best, best_score = k, score
    return best


def sentence_windows(example_index: int, word_ids: list, label_ids, max_seq_length: int,
                     stride: int, cls_id: int, sep_id: int) -> list[dict]:
    """The records (dicts of int lists) of one sentence: `word_ids` holds each word's piece
    ids, `label_ids` each word's tag id (None: no tags)."""
    pieces, first = [], []
    for ids in word_ids:
        first.append(len(pieces))
        pieces.extend(ids)
    spans = windows(len(pieces), max_seq_length - 2, stride)
    home = [home_window(p, spans) for p in first]
    records = []
    for k, (start, length) in enumerate(spans):
        ids = [cls_id] + pieces[start:start + length] + [sep_id]
        padding = max_seq_length - len(ids)
        record = {"input_ids": ids + [0] * padding,
                  "input_mask": [1] * len(ids) + [0] * padding,
                  "segment_ids": [0] * max_seq_length,
                  "label_ids": [-1] * max_seq_length, "word_ids": [-1] * max_seq_length,
                  "is_max_context": [0] * max_seq_length, "example_index": example_index}
        for word, position in enumerate(first):
            if start <= position < start + length:
                at = position - start + 1
                record["word_ids"][at] = word
                record["is_max_context"][at] = int(home[word] == k)
                if label_ids is not None:
                    record["label_ids"][at] = label_ids[word]
        records.append(record)
    return records
