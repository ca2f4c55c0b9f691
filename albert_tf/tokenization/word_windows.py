"""A sentence's words as windows of pieces, the rule run_ner.py's features and every runner of a
token classifier's ids-in files share (`tasks.token_classification.features`,
`serving.predictor`): each word tokenized on its own (`WordPieces`), windows of
`max_seq_length - 2` pieces `stride` apart (`windows`), and a word's tag taken at its first
piece in the window where it has the most context (`home_window`)."""

from __future__ import annotations

from albert_tf.tokenization.text_rules import preprocess_text
from albert_tf.tokenization.wordpiece import UNK_TOKEN

# What a sentence's words are split at, in every runner: Python's whitespace (`str.isspace`,
# what `str.split()` splits at), as an RE2 class for the graphs (a SavedModel's serve_text, a
# text-in ONNX file).
SPLIT_PATTERN = (r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}"
                 r"\x{2029}\x{202f}\x{205f}\x{3000}]+")


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


def text_windows(texts, pieces: WordPieces, max_seq_length: int, stride: int):
    """(the records of every text's windows in order, and per text the (record, position) of
    each whitespace-separated word's tag): what every runner of a token classifier's ids-in
    files feeds it, and where it reads each word's tag."""
    records, homes = [], []
    for row, text in enumerate(texts):
        words = text.split()
        found = sentence_windows(row, [pieces(w) for w in words], None, max_seq_length, stride,
                                 pieces.cls_id, pieces.sep_id) if words else []
        home = [None] * len(words)
        for k, record in enumerate(found, len(records)):
            for at, (word, best) in enumerate(zip(record["word_ids"], record["is_max_context"])):
                if word >= 0 and best:
                    home[word] = (k, at)
        records += found
        homes.append(home)
    return records, homes
