"""Python tokenizers that give exactly the ids of the original ALBERT `tokenization.py`.

SentencePiece mode is what the English models use; the WordPiece path (vocab file only) serves
the released Chinese models. The original's quirks are kept on purpose, each behind a named
function, because released checkpoints and TFRecords were made with them.
"""

from __future__ import annotations

from albert_tf.errors import AlbertError
import collections
import os
import unicodedata

import sentencepiece as spm

SPIECE_UNDERLINE = "\u2581"


class TokenizerError(AlbertError, ValueError):
    """A tokenizer file that is missing, corrupt or inconsistent, or input that is not text."""


def convert_to_unicode(text) -> str:
    """Text passes through; bytes are decoded as UTF-8 (undecodable bytes dropped, as the original)."""
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise TokenizerError(f"expected str or bytes, got {type(text).__name__}: {text!r:.80}")


def preprocess_text(inputs, remove_space: bool = True, lower: bool = False) -> str:
    """The original's normalisation: squeeze spaces, NFKD, drop combining marks, lower-case.

    Accents are stripped whatever `lower` says, and there is no quote normalisation.
    """
    outputs = convert_to_unicode(inputs)
    if remove_space:
        outputs = " ".join(outputs.strip().split())
    outputs = unicodedata.normalize("NFKD", outputs)
    outputs = "".join(c for c in outputs if not unicodedata.combining(c))
    if lower:
        outputs = outputs.lower()
    return outputs


def is_digit_comma_piece(piece: str) -> bool:
    """The pieces the original's fix-up re-encodes: longer than one character, digit + ","."""
    return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


def split_digit_comma_python3(sp_model: spm.SentencePieceProcessor, piece: str) -> list[str]:
    """Quirk kept on purpose: the original's digit-comma fix-up as it behaves under Python 3.

    A piece such as "9," is re-encoded without the comma (and without "▁"), then "," follows as
    its own piece. The original meant to drop a leading "▁" that the re-encoding adds when the
    piece had none, but it compared text with the UTF-8 bytes of "▁", so under Python 3 that
    never happens and "9," becomes ["▁9", ","]. Released data and the golden files have it.
    """
    pieces = list(sp_model.EncodeAsPieces(piece[:-1].replace(SPIECE_UNDERLINE, "")))
    pieces.append(piece[-1])
    return pieces


def encode_pieces(sp_model: spm.SentencePieceProcessor, text, return_unicode: bool = True,
                  sample: bool = False) -> list[str]:
    """SentencePiece pieces of `text`, with the digit-comma fix-up (see `split_digit_comma_python3`)."""
    del return_unicode  # pieces are always text under Python 3
    text = convert_to_unicode(text)
    if sample:
        pieces = sp_model.SampleEncodeAsPieces(text, 64, 0.1)
    else:
        pieces = sp_model.EncodeAsPieces(text)
    result: list[str] = []
    for piece in pieces:
        if is_digit_comma_piece(piece):
            result.extend(split_digit_comma_python3(sp_model, piece))
        else:
            result.append(piece)
    return result


def encode_ids(sp_model: spm.SentencePieceProcessor, text, sample: bool = False) -> list[int]:
    return [sp_model.PieceToId(piece) for piece in encode_pieces(sp_model, text, sample=sample)]


def tokenize_sentencepiece_as_is(sp_model: spm.SentencePieceProcessor, text) -> list[str]:
    """Quirk kept on purpose: SentencePiece-mode `FullTokenizer.tokenize` does no preprocessing.

    The original ignores `do_lower_case` here and does not run `preprocess_text`, so upper case,
    accents and control characters (NUL, BEL, ZWSP, ...) reach SentencePiece unchanged and come
    out however its normaliser treats them. Every original caller preprocesses first; a caller
    that does not gets cased pieces, exactly like the original.
    """
    return encode_pieces(sp_model, text, return_unicode=False)


def load_sentencepiece(model_file: str) -> spm.SentencePieceProcessor:
    """Loads a SentencePiece model through tf.io.gfile (so gs:// paths work) with clear errors."""
    import tensorflow as tf

    model_file = os.fspath(model_file)
    if not tf.io.gfile.exists(model_file):
        raise TokenizerError(f"SentencePiece model file not found: {model_file}")
    with tf.io.gfile.GFile(model_file, "rb") as reader:
        proto = reader.read()
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except Exception as error:  # sentencepiece raises RuntimeError/OSError depending on version
        raise TokenizerError(f"{model_file}: not a valid SentencePiece model ({error})") from None
    return processor


def load_vocab(vocab_file: str) -> "collections.OrderedDict[str, int]":
    """Token → id from a vocab file; first field per line; ids by first occurrence (as the original).

    A duplicated line does not take an id, so later ids shift (BERT uses line numbers instead).
    """
    import tensorflow as tf

    if not tf.io.gfile.exists(vocab_file):
        raise TokenizerError(f"vocab file not found: {vocab_file}")
    vocab: "collections.OrderedDict[str, int]" = collections.OrderedDict()
    with tf.io.gfile.GFile(vocab_file, "rb") as reader:
        for raw in reader:
            line = convert_to_unicode(raw)
            token = line.strip().split()[0] if line.strip() else " "
            if token not in vocab:
                vocab[token] = len(vocab)
    return vocab


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
            from albert_tf import wordpiece

            self.sp_model = None
            self.vocab = load_vocab(vocab_file)
            self._wordpiece = wordpiece.BertTokenizer(self.vocab, do_lower_case=do_lower_case)
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


class WordpiecePieces:
    """A WordPiece vocabulary behind the SentencePiece calls that SQuAD's features make
    (`EncodeAsPieces`, `PieceToId`, `IdToPiece`, `GetPieceSize`), for the WordPiece (Chinese)
    models. A word's first piece carries SentencePiece's word mark "▁" and a continuation loses
    its "##", so the character alignment that maps pieces back to the raw paragraph sees words
    and sub-words exactly as it sees SentencePiece pieces. Ids are `FullTokenizer`'s."""

    WORD_MARK = "\u2581"

    def __init__(self, vocab_file, do_lower_case: bool = True):
        from albert_tf import wordpiece

        self.vocab = load_vocab(vocab_file)
        if wordpiece.UNK_TOKEN not in self.vocab:
            raise TokenizerError(f"vocab file {vocab_file} has no {wordpiece.UNK_TOKEN}")
        self.tokens = {index: token for token, index in self.vocab.items()}
        self.basic = wordpiece.BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece = wordpiece.WordpieceTokenizer(self.vocab)
        self.unk_id = self.vocab[wordpiece.UNK_TOKEN]

    def EncodeAsPieces(self, text) -> list[str]:  # noqa: N802 - SentencePiece's name
        pieces = []
        for word in self.basic.tokenize(convert_to_unicode(text)):
            for sub in self.wordpiece.tokenize(word):
                pieces.append(sub[2:] if sub.startswith("##") else self.WORD_MARK + sub)
        return pieces

    def PieceToId(self, piece: str) -> int:  # noqa: N802
        if piece in self.vocab and piece.startswith("["):  # [CLS], [SEP], [UNK]...
            return self.vocab[piece]
        token = piece[1:] if piece.startswith(self.WORD_MARK) else "##" + piece
        return self.vocab.get(token, self.unk_id)

    def IdToPiece(self, index: int) -> str:  # noqa: N802
        token = self.tokens[int(index)]
        if token.startswith("##"):
            return token[2:]
        return token if token.startswith("[") else self.WORD_MARK + token

    def GetPieceSize(self) -> int:  # noqa: N802
        return len(self.vocab)

