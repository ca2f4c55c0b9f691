"""How much of a text becomes `[UNK]` (`<unk>`), and whether the casing is why.

Every script that tokenizes reports the rate (create_pretraining_data's summary, the
fine-tuning logs per file, the export check) and warns in one line above `WARN_RATE`. The
usual cause in Korean (and other text that Unicode NFD changes) is a casing mismatch: BERT's
lower-casing also strips accents through NFD, which splits each Hangul syllable into jamo, so a
vocabulary holding composed syllables sees `[UNK]` (and the reverse: a vocabulary built
lower-cased holds jamo, and text kept composed misses it). `casing_cause` tells which.
"""

from __future__ import annotations

import itertools
import unicodedata

from absl import logging

WARN_RATE = 0.05
SAMPLE = 10_000  # the examples of a file whose texts are counted (the rate settles long before)


def count_unk(tokenizer, texts) -> tuple[int, int]:
    """(`[UNK]` tokens, all tokens) of `texts` through a `FullTokenizer`.

    Counted by id: SentencePiece returns text it cannot cover as itself (a Korean word stays a
    piece of its own), which only its id, `<unk>`'s, shows unknown."""
    sp_model = getattr(tokenizer, "sp_model", None)
    unk = total = 0
    for text in texts:
        pieces = tokenizer.tokenize(text)
        total += len(pieces)
        if sp_model is not None:
            unk_id = sp_model.unk_id()
            unk += sum(1 for piece in pieces if sp_model.PieceToId(piece) == unk_id)
        else:
            unk += sum(1 for piece in pieces if piece == "[UNK]")
    return unk, total


def _changed_by_nfd(char: str) -> bool:
    lowered = char.lower()
    return unicodedata.normalize("NFD", lowered) != lowered


def casing_cause(texts, vocab, do_lower_case: bool) -> str | None:
    """A sentence naming the flag when casing explains `[UNK]`s in `texts` against `vocab`
    (WordPiece pieces, `##` continuations included), else None."""
    chars = {c for text in itertools.islice(texts, 2000) for c in text if _changed_by_nfd(c)}
    if not chars:
        return None
    stems = {piece[2:] if piece.startswith("##") else piece for piece in vocab}
    composed = sum(1 for c in chars if c in stems)
    decomposed = sum(1 for c in chars
                     if all(p in stems for p in unicodedata.normalize("NFD", c.lower())
                            if not unicodedata.combining(p)))
    if do_lower_case and composed > decomposed:
        return ("lower-casing is the cause: its NFD accent stripping splits characters such as "
                "Hangul syllables, which the vocabulary holds composed; pass --nodo_lower_case "
                "(or record do_lower_case=false in the vocabulary's tokenizer_config.json)")
    if not do_lower_case and decomposed > composed:
        return ("casing is the cause: the vocabulary was built lower-cased (NFD-decomposed, "
                "e.g. Hangul as jamo) and --nodo_lower_case keeps the text composed; pass "
                "--do_lower_case")
    return None


def describe(unk: int, total: int, where: str) -> str:
    rate = unk / total if total else 0.0
    return f"[UNK] rate {100 * rate:.2f} % ({unk} of {total} tokens) in {where}"


def report(unk: int, total: int, where: str, cause: str | None = None) -> float:
    """Logs the rate in one line (a warning above `WARN_RATE`, with its cause when known);
    returns the rate."""
    rate = unk / total if total else 0.0
    line = describe(unk, total, where)
    if rate > WARN_RATE:
        logging.warning("%s: above %d %%%s", line, int(100 * WARN_RATE),
                        f"; {cause}" if cause else "; is this the model's vocabulary?")
    else:
        logging.info("%s", line)
    return rate


def report_texts(tokenizer, texts, where: str, do_lower_case: bool) -> float:
    """Counts and reports `texts` (raw, before the tokenizer's casing) through `tokenizer`."""
    texts = list(texts)
    unk, total = count_unk(tokenizer, texts)
    cause = None
    if total and unk / total > WARN_RATE and getattr(tokenizer, "sp_model", None) is None:
        cause = casing_cause(texts, tokenizer.vocab, do_lower_case)
    return report(unk, total, where, cause)


def report_sample(tokenizer, items, texts_of, where: str, do_lower_case: bool) -> float:
    """Reports the texts (`texts_of(item)`) of the first `SAMPLE` of `items`, a file's examples."""
    sample = items[:SAMPLE]
    texts = [text for item in sample for text in texts_of(item) if text]
    if len(sample) < len(items):
        where += f" (first {len(sample)} of {len(items)})"
    return report_texts(tokenizer, texts, where, do_lower_case)


def vocabulary_check(tokenizer, do_lower_case: bool) -> float:
    """The export check: a WordPiece vocabulary's own words (up to 5,000, specials and `##`
    pieces left out) through the export's casing. Each should come back as itself; `[UNK]`s
    here mean the casing destroys what the vocabulary holds (Hangul under NFD lower-casing)."""
    words = [w for w in tokenizer.vocab if not w.startswith("##") and
             not (w.startswith("[") and w.endswith("]")) and w.strip()][:5000]
    return report_texts(tokenizer, words, "the vocabulary's own words with the export's casing",
                        do_lower_case)
