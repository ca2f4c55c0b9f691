"""Sentences → token codes for pretraining data: the token id with its word-start flag packed in.

A code is `id * 2 + is_word_start`. Instance building and masking then work on plain ints: the
id is `code >> 1`, the word-start flag (the original's `token_boundary`) is `code & 1`. The
word-start rules are the original's `_is_start_piece_sp` / `_is_start_piece_bert`, quirks kept.
"""

from __future__ import annotations

import sentencepiece as spm

from albert_tf import tokenization

# The original's set is Python's punctuation minus ' = < > (the apostrophe was lost to a quoting
# typo); pieces made only of a-z and these characters can continue a word.
SP_START_PUNCTUATION = frozenset('!"#$%&()*+,-./:;?@[\\]^_`{|}~')
_SP_CONTINUATION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz") | SP_START_PUNCTUATION


def is_start_piece_sp(piece: str) -> bool:
    """Word start in SentencePiece mode: "▁…", "<…", lone punctuation, or any digit/non-ASCII/'."""
    return (piece.startswith(tokenization.SPIECE_UNDERLINE) or piece.startswith("<")
            or piece in SP_START_PUNCTUATION
            or not all(ch.lower() in _SP_CONTINUATION_CHARS for ch in piece))


def is_start_piece_bert(piece: str) -> bool:
    return not piece.startswith("##")


def preprocess_line(line: str, lower: bool) -> str:
    """`tokenization.preprocess_text(line, lower=lower)`, with a fast path for ASCII lines.

    NFKD and combining-mark removal are the identity on ASCII, so only the whitespace squeeze
    and lower-casing remain; the result is the same string.
    """
    if line.isascii():
        out = " ".join(line.split())
        return out.lower() if lower else out
    return tokenization.preprocess_text(line, lower=lower)


class SentenceEncoder:
    """Turns preprocessed sentences into code lists, ids exactly as the original's tokenizer.

    Picklable for worker processes: the SentencePiece model travels as its serialized proto.
    """

    def __init__(self, tokenizer: tokenization.FullTokenizer):
        vocab_words = list(tokenizer.vocab.keys())
        self.vocab_size = len(vocab_words)
        if tokenizer.sp_model is not None:
            self._wordpiece = None
            self._model_proto = tokenizer.sp_model.serialized_model_proto()
            self._load_sp()
            to_id = self._sp.PieceToId
            unk = self._sp.unk_id()
            is_start = is_start_piece_sp
        else:
            self._wordpiece = tokenizer
            self._model_proto = None
            self._sp = None
            to_id = tokenizer.vocab.__getitem__
            unk = None
            is_start = is_start_piece_bert
        self._is_start = is_start
        self._to_id = to_id
        # What the original writes for a random replacement `vocab_words[k]`: its id.
        self.replacement_ids = [to_id(word) for word in vocab_words]
        source = tokenizer.spm_model_file or tokenizer.vocab_file or "the vocabulary"
        self.cls_id = self._special_id("[CLS]", to_id, unk, source)
        self.sep_id = self._special_id("[SEP]", to_id, unk, source)
        self.mask_id = self._special_id("[MASK]", to_id, unk, source)
        # The unknown piece's codes (both word-start flags), counted in the run summary.
        unk_id = unk if unk is not None else tokenizer.vocab.get("[UNK]")
        self.unk_codes = () if unk_id is None else (unk_id * 2, unk_id * 2 + 1)
        # Specials carry the start flag: the original sets token_boundary 1 for [CLS]/[SEP].
        self.cls_code = self.cls_id * 2 + 1
        self.sep_code = self.sep_id * 2 + 1
        if self._sp is not None:
            pieces = [self._sp.IdToPiece(i) for i in range(self._sp.GetPieceSize())]
            self._code_of_id = [i * 2 + int(is_start(p)) for i, p in enumerate(pieces)]
            # Ids whose piece text is not known from the id alone (unknown pieces) or that the
            # digit-comma fix-up splits: sentences holding one take the piece-by-piece path.
            self._slow_ids = frozenset(
                [unk] + [i for i, p in enumerate(pieces) if tokenization.is_digit_comma_piece(p)])

    @staticmethod
    def _special_id(token, to_id, unk, source):
        try:
            token_id = to_id(token)
        except KeyError:
            token_id = None
        if token_id is None or token_id == unk:
            raise tokenization.TokenizerError(f"{source}: has no {token} token")
        return token_id

    def _load_sp(self):
        self._sp = spm.SentencePieceProcessor()
        self._sp.LoadFromSerializedProto(self._model_proto)

    def __getstate__(self):
        state = dict(self.__dict__)
        if self._model_proto is not None:
            state["_sp"] = None
            state["_to_id"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._model_proto is not None:
            self._load_sp()
            self._to_id = self._sp.PieceToId

    def codes_of_pieces(self, pieces) -> list[int]:
        to_id, is_start = self._to_id, self._is_start
        return [to_id(p) * 2 + int(is_start(p)) for p in pieces]

    def encode(self, sentences: list[str]) -> list[list[int]]:
        """Codes per sentence (already preprocessed); an empty list where nothing tokenizes."""
        if self._sp is None:
            return [self.codes_of_pieces(self._wordpiece.tokenize(s)) for s in sentences]
        # One thread: the parallelism is in the worker processes.
        code_of_id, slow_ids = self._code_of_id, self._slow_ids
        out = []
        for sentence, ids in zip(sentences, self._sp.encode(sentences, out_type=int, num_threads=1)):
            if slow_ids.isdisjoint(ids):
                out.append(list(map(code_of_id.__getitem__, ids)))
            else:
                out.append(self.codes_of_pieces(
                    tokenization.encode_pieces(self._sp, sentence, return_unicode=False)))
        return out
