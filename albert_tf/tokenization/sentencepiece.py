"""SentencePiece mode, as the English models use it: loading a model, and pieces and ids with the
original's digit-comma fix-up. The original's quirks are kept on purpose, each behind a named
function, because released checkpoints and TFRecords were made with them."""

from __future__ import annotations

import os

import sentencepiece as spm

from albert_tf import io_utils
from albert_tf.tokenization.text_rules import TokenizerError, convert_to_unicode

SPIECE_UNDERLINE = "\u2581"


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
    """Loads a SentencePiece model (a gs:// path through tf.io.gfile) with clear errors."""
    model_file = os.fspath(model_file)
    with io_utils.open_input(model_file, "SentencePiece model file", TokenizerError) as reader:
        proto = reader.read()
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except Exception as error:  # sentencepiece raises RuntimeError/OSError depending on version
        raise TokenizerError(f"{model_file}: not a valid SentencePiece model ({error})") from None
    return processor
