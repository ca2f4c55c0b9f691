"""The text rules every Python tokenizer shares: input decoding, the original's
`preprocess_text` normalisation, and the error a tokenizer raises."""

from __future__ import annotations

import unicodedata

from albert_tf.errors import AlbertError


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
