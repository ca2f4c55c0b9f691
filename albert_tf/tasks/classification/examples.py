"""What every example source yields (`InputExample`), and the text rule its texts go through."""

from __future__ import annotations

import dataclasses

from albert_tf import tokenization


@dataclasses.dataclass
class InputExample:
    guid: str
    text_a: str
    text_b: str | None = None
    label: str | float | None = None
    source: str = ""  # "file:line", for error messages further down the pipeline


def process_text(text, use_spm: bool, do_lower_case: bool) -> str:
    """As the original's processors: with a SentencePiece model every text (and GLUE label) goes
    through `preprocess_text`; a WordPiece tokenizer lower-cases by itself, so text only becomes
    `str`."""
    if use_spm:
        return tokenization.preprocess_text(text, lower=do_lower_case)
    return tokenization.convert_to_unicode(text)
