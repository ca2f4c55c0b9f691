"""BERT's WordPiece tokenizer, the path `FullTokenizer` takes without a SentencePiece model.

The released Chinese ALBERT models use it. Basic tokenization (cleaning, CJK splitting,
lower-casing with accent stripping, punctuation splitting) is followed by greedy
longest-match-first WordPiece with "##" continuation pieces, as in BERT's tokenization.py.
The vocab file reader and `WordpiecePieces` (a vocabulary behind SentencePiece's calls, for
SQuAD's features) live here too.
"""

from __future__ import annotations

import collections
import unicodedata

from albert_tf import io_utils
from albert_tf.tokenization.text_rules import TokenizerError, convert_to_unicode

UNK_TOKEN = "[UNK]"
MAX_INPUT_CHARS_PER_WORD = 200

# CJK Unified Ideographs and their extensions/compatibility blocks. Hangul, kana and
# full-width Latin are deliberately not in it: they are written with spaces.
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def is_whitespace(char: str) -> bool:
    """Space, tab, newline, carriage return or a Zs space separator."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
    """Cc/Cf characters other than tab, newline and carriage return (counted as whitespace)."""
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char: str) -> bool:
    """All non-alphanumeric ASCII symbols (e.g. "$", "^", "`") and every Unicode P* character."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(code: int) -> bool:
    return any(start <= code <= end for start, end in CJK_RANGES)


def whitespace_tokenize(text: str) -> list[str]:
    return text.strip().split()


def clean_text(text: str) -> str:
    """Drops NUL, U+FFFD and control characters; every whitespace character becomes a space."""
    out = []
    for char in text:
        if ord(char) in (0, 0xFFFD) or is_control(char):
            continue
        out.append(" " if is_whitespace(char) else char)
    return "".join(out)


def space_cjk(text: str) -> str:
    return "".join(f" {char} " if is_cjk(ord(char)) else char for char in text)


def strip_accents(text: str) -> str:
    """NFD, then nonspacing marks (category Mn) removed."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def split_punctuation(token: str) -> list[str]:
    pieces: list[str] = []
    start_new = True
    for char in token:
        if is_punctuation(char):
            pieces.append(char)
            start_new = True
        else:
            if start_new:
                pieces.append("")
            pieces[-1] += char
            start_new = False
    return pieces


class BasicTokenizer:
    """Cleaning, CJK splitting, optional lower-casing + accent stripping, punctuation splitting."""

    def __init__(self, do_lower_case: bool = True):
        self.do_lower_case = do_lower_case

    def tokenize(self, text: str) -> list[str]:
        text = space_cjk(clean_text(text))
        tokens: list[str] = []
        for token in whitespace_tokenize(text):
            if self.do_lower_case:
                token = strip_accents(token.lower())
            tokens.extend(split_punctuation(token))
        return whitespace_tokenize(" ".join(tokens))


class WordpieceTokenizer:
    """Greedy longest-match-first sub-words; a word that cannot be covered becomes `[UNK]`."""

    def __init__(self, vocab, unk_token: str = UNK_TOKEN,
                 max_input_chars_per_word: int = MAX_INPUT_CHARS_PER_WORD):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text: str) -> list[str]:
        output: list[str] = []
        for word in whitespace_tokenize(text):
            output.extend(self._word_pieces(word))
        return output

    def _word_pieces(self, word: str) -> list[str]:
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces: list[str] = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.vocab:
                    pieces.append(candidate)
                    start = end
                    break
            else:
                return [self.unk_token]
        return pieces


class BertTokenizer:
    """Basic tokenization then WordPiece, as the original `FullTokenizer` without an SP model."""

    def __init__(self, vocab, do_lower_case: bool = True):
        self.vocab = vocab
        self.basic = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece = WordpieceTokenizer(vocab)

    def tokenize(self, text: str) -> list[str]:
        return [piece for token in self.basic.tokenize(text)
                for piece in self.wordpiece.tokenize(token)]


# What a WordPiece vocab must hold: the packing tokens, and the piece of an unknown word.
WORDPIECE_SPECIAL_TOKENS = ("[CLS]", "[SEP]", UNK_TOKEN)


def load_vocab(vocab_file: str, required=()) -> "collections.OrderedDict[str, int]":
    """Token → id from a vocab file; first field per line; ids by first occurrence (as the original).

    A duplicated line does not take an id, so later ids shift (BERT uses line numbers instead).
    Checked here, once: a missing or empty file, a line that is not UTF-8 (the original dropped
    its bytes, so a GBK or Latin-1 vocab loaded with shifted ids) and a token of `required`
    (`WORDPIECE_SPECIAL_TOKENS` for a WordPiece tokenizer) that is absent are a `TokenizerError`
    naming the file (and the line, or the token).
    """
    vocab: "collections.OrderedDict[str, int]" = collections.OrderedDict()
    with io_utils.open_input(vocab_file, "vocab file", TokenizerError) as reader:
        for number, raw in enumerate(reader, start=1):  # lines end at "\n" only, as tf.gfile's
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise TokenizerError(
                    f"{vocab_file}:{number}: not UTF-8 (byte 0x{raw[error.start]:02x} at column "
                    f"{error.start + 1}); a vocab file is UTF-8 text, one token a line") from None
            token = line.strip().split()[0] if line.strip() else " "
            if token not in vocab:
                vocab[token] = len(vocab)
    if not vocab.keys() - {" "}:  # nothing, or blank lines only
        raise TokenizerError(f"{vocab_file}: empty vocab file (expected one token a line)")
    for token in required:
        if token not in vocab:
            raise TokenizerError(f"{vocab_file}: has no {token} token (a WordPiece vocab needs "
                                 f"{', '.join(required)}), {len(vocab)} tokens read")
    return vocab


class WordpiecePieces:
    """A WordPiece vocabulary behind the SentencePiece calls that SQuAD's features make
    (`EncodeAsPieces`, `PieceToId`, `IdToPiece`, `GetPieceSize`), for the WordPiece (Chinese)
    models. A word's first piece carries SentencePiece's word mark "▁" and a continuation loses
    its "##", so the character alignment that maps pieces back to the raw paragraph sees words
    and sub-words exactly as it sees SentencePiece pieces. Ids are `FullTokenizer`'s."""

    WORD_MARK = "\u2581"

    def __init__(self, vocab_file, do_lower_case: bool = True):
        self.vocab = load_vocab(vocab_file, WORDPIECE_SPECIAL_TOKENS)
        self.tokens = {index: token for token, index in self.vocab.items()}
        self.basic = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece = WordpieceTokenizer(self.vocab)
        self.unk_id = self.vocab[UNK_TOKEN]

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
