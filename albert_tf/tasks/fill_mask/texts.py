"""Masked raw text to model ids, and the candidates' records, TensorFlow-free.

`[MASK]` is found in the raw text wherever it stands, as Hugging Face's fill-mask pipeline does:
the text is split on the literal `[MASK]`, each piece is tokenized on its own (SentencePiece
models: after `preprocess_text`, as every task does) and the mask id goes between them. So
"capital is[MASK]." gives the pieces of "capital is", [MASK], the pieces of "." — the mask is
never glued to a neighbouring piece. The in-graph `fill_mask` signature (`export.py`) does the
same with TensorFlow ops.
"""

from __future__ import annotations

from albert_tf.errors import UsageError
from albert_tf.tokenization import preprocess_text

MASK = "[MASK]"
SPIECE_UNDERLINE = "\u2581"


class FillMaskError(UsageError):
    """Fill-mask input that cannot be served (the message names the text or argument)."""


def check_top_k(top_k) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise FillMaskError(f"top_k must be an integer of at least 1, got {top_k!r}")
    return top_k


def checked_texts(texts) -> list[str]:
    """`texts` as a list of str, each holding at least one `[MASK]`."""
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    if not texts:
        raise FillMaskError("texts: no texts")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise FillMaskError(f"texts[{i}]: expected a str, got {type(text).__name__}")
        if MASK not in text:
            raise FillMaskError(f"texts[{i}] {text!r:.120} holds no {MASK}: fill-mask predicts "
                                f"the word at each {MASK}")
    return texts


class MaskedTextTokenizer:
    """Masked text → ids with a `FullTokenizer` (SentencePiece or WordPiece), and ids → text."""

    def __init__(self, tokenizer, do_lower_case: bool, max_seq_length: int):
        self.tokenizer = tokenizer
        self.spm = tokenizer.sp_model is not None
        self.do_lower_case = bool(do_lower_case)
        self.max_seq_length = int(max_seq_length)
        vocab = tokenizer.vocab
        for piece in ("[CLS]", "[SEP]", MASK):
            if piece not in vocab:
                where = tokenizer.spm_model_file or tokenizer.vocab_file
                raise FillMaskError(f"the tokenizer ({where}) has no {piece} piece")
        self.cls_id, self.sep_id, self.mask_id = (vocab[p] for p in ("[CLS]", "[SEP]", MASK))

    def piece_ids(self, text: str) -> list[int]:
        """The ids of a text without masks, as the tasks tokenize it."""
        if self.spm:
            text = preprocess_text(text, lower=self.do_lower_case)
        return self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(text))

    def ids(self, text: str, where: str) -> list[int]:
        """[CLS] pieces [MASK] pieces ... [SEP]; a text longer than max_seq_length is refused."""
        ids = [self.cls_id]
        for i, part in enumerate(text.split(MASK)):
            if i:
                ids.append(self.mask_id)
            ids.extend(self.piece_ids(part))
        ids.append(self.sep_id)
        if len(ids) > self.max_seq_length:
            raise FillMaskError(f"{where} {text!r:.80}: {len(ids)} pieces with [CLS] and [SEP], "
                                f"more than max_seq_length={self.max_seq_length}")
        return ids

    def piece(self, token_id: int) -> str:
        return self.tokenizer.convert_ids_to_tokens([int(token_id)])[0]

    def token_str(self, token_id: int) -> str:
        """A candidate as a word: SentencePiece's word-start mark dropped."""
        piece = self.piece(token_id)
        return piece.replace(SPIECE_UNDERLINE, " ").strip() if self.spm else piece

    def sequence(self, ids: list[int], position: int, token_id: int) -> str:
        """The text of `ids` (without [CLS] and [SEP]) with `token_id` at `position`; the other
        masks stay `[MASK]`."""
        pieces = []
        for i, value in enumerate(ids[1:-1], start=1):
            value = token_id if i == position else value
            piece = MASK if value == self.mask_id else self.piece(value)
            if self.spm:
                pieces.append(f"{SPIECE_UNDERLINE}{piece}" if piece == MASK else piece)
            else:
                pieces.append(piece)
        if self.spm:
            return " ".join("".join(pieces).replace(SPIECE_UNDERLINE, " ").split())
        return " ".join(pieces).replace(" ##", "")


def candidates(tokenizer: MaskedTextTokenizer, ids: list[int], position: int, top_ids,
               top_scores) -> list[dict]:
    """Hugging Face fill-mask's records of one mask: score, token (the id), token_str,
    sequence."""
    return [{"score": float(score), "token": int(token), "token_str": tokenizer.token_str(token),
             "sequence": tokenizer.sequence(ids, position, int(token))}
            for token, score in zip(top_ids, top_scores)]
