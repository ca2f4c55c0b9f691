"""`FullTokenizer`, the original's entry point: SentencePiece when a model file is given, else
WordPiece over a vocab file."""

from __future__ import annotations

import os

from albert_tf.tokenization.sentencepiece import load_sentencepiece, tokenize_sentencepiece_as_is
from albert_tf.tokenization.text_rules import TokenizerError, convert_to_unicode
from albert_tf.tokenization.wordpiece import WORDPIECE_SPECIAL_TOKENS, BertTokenizer, load_vocab


class FullTokenizer:
    """The original `FullTokenizer`: SentencePiece when `spm_model_file` is given, else WordPiece.

    In SentencePiece mode `tokenize` neither lower-cases nor preprocesses (`do_lower_case` is
    ignored, as in the original); callers run `preprocess_text(text, lower=do_lower_case)` first.
    """

    def __init__(self, vocab_file=None, do_lower_case: bool = True, spm_model_file=None):
        self.do_lower_case = do_lower_case
        self.vocab_file = vocab_file
        self.spm_model_file = spm_model_file
        if spm_model_file:
            self.sp_model = load_sentencepiece(spm_model_file)
            self.vocab = {self.sp_model.IdToPiece(i): i for i in range(self.sp_model.GetPieceSize())}
            if vocab_file and os.path.exists(vocab_file):
                self._check_vocab_agrees(vocab_file)
        else:
            if not vocab_file:
                raise TokenizerError("FullTokenizer needs spm_model_file or vocab_file")
            self.sp_model = None
            self.vocab = load_vocab(vocab_file, WORDPIECE_SPECIAL_TOKENS)
            self._wordpiece = BertTokenizer(self.vocab, do_lower_case=do_lower_case)
        self.inv_vocab = {v: k for k, v in self.vocab.items()}

    def _check_vocab_agrees(self, vocab_file: str) -> None:
        vocab = load_vocab(vocab_file)
        if vocab.keys() == self.vocab.keys() and all(vocab[k] == self.vocab[k] for k in vocab):
            return
        diff = next((k for k in vocab if self.vocab.get(k) != vocab[k]), None)
        detail = ""
        if diff is not None:
            detail = (f"; piece {diff!r} is id {vocab[diff]} in the vocab file but "
                      f"{self.vocab.get(diff, 'absent')} in the model")
        raise TokenizerError(
            f"vocab file {vocab_file} disagrees with SentencePiece model {self.spm_model_file}: "
            f"{len(vocab)} vs {len(self.vocab)} pieces{detail}")

    @classmethod
    def from_scratch(cls, vocab_file, do_lower_case, spm_model_file):
        """The original's constructor name, for code written against its tokenization.py."""
        return cls(vocab_file, do_lower_case, spm_model_file)

    def tokenize(self, text) -> list[str]:
        if self.sp_model is not None:
            return tokenize_sentencepiece_as_is(self.sp_model, text)
        return self._wordpiece.tokenize(convert_to_unicode(text))

    def convert_tokens_to_ids(self, tokens) -> list[int]:
        if self.sp_model is not None:
            return [self.sp_model.PieceToId(token) for token in tokens]
        return [self.vocab[token] for token in tokens]

    def convert_ids_to_tokens(self, ids) -> list[str]:
        if self.sp_model is not None:
            return [self.sp_model.IdToPiece(int(i)) for i in ids]
        return [self.inv_vocab[int(i)] for i in ids]
