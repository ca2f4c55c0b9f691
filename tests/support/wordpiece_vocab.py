"""A small WordPiece vocabulary for tests (no download): the special tokens, hand-picked CJK,
accented and punctuation entries, every character of the given texts (bare and as "##c"), and
their most frequent words, in the layout of the Chinese models' vocab_chinese.txt; and the hard
cases every WordPiece test tokenizes (HARD_TEXTS)."""

from __future__ import annotations

import collections

from albert_tf.tokenization import wordpiece

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# CJK (split per character, whatever the spacing), accents (stripped when lower-casing, kept
# otherwise), punctuation (ASCII symbols and Unicode P*), control and format characters
# (dropped), Unicode spaces, upper case, full-width letters, Greek final sigma, over-long words.
HARD_TEXTS = [
    "The quick brown foxes!", "Café naïve résumé.", "我爱中国人，你好。", "日本語のテキスト",
    "Hello,world's (abc)-abcbc", "ÜBER $5 % -- e.g. U.S.A.", "a\u200bb a\x00b a\tb\u2028c\u2029d",
    "Straße ＦＦ ｆ", "ΟΛΟΣ Ὁλος", "", " ", "x" * 200, "x" * 201, "ab\u0301c e\u0301",
    "fox\ufffd", "«quoted» „so“ ¿qué? ¡sí!", "中文English混合123", "\u3000全角\u00a0空格",
    "tab\tnew\nline\rcr", "un-affable unaffable", "Ǆ ǅ ǆ İstanbul", "é" * 3, "\x7f\x85\u200e",
    "smile 😀 ok", "e\u0301\u0327", "Zürich, München & Köln", "x\u0300\u0300y",
]

HAND_WRITTEN = ["中", "国", "人", "我", "爱", "你", "好", "日", "本", "，", "。", "！", "？", "、",
                "cafe", "naive", "resume", "uber", "strasse", "##s", "##es", "##ing", "##ed",
                "un", "##aff", "##able", "σ", "ς", "##ς", "ολος", "ｆ", "$", "%", "--", "e"]


def build_vocab(path, texts=(), words: int = 300, do_lower_case: bool = True) -> list[str]:
    """Writes the vocabulary to `path` (one token a line) and returns it."""
    basic = wordpiece.BasicTokenizer(do_lower_case=do_lower_case)
    counts = collections.Counter(token for text in texts for token in basic.tokenize(text))
    tokens = list(SPECIALS) + HAND_WRITTEN
    for char in sorted({c for token in counts for c in token} | set("abcdefghijklmnopqrstuvwxyz0123456789")):
        tokens += [char, "##" + char]
    tokens += [word for word, _ in counts.most_common(words)]
    vocab = list(dict.fromkeys(tokens))  # first occurrence, as load_vocab
    with open(path, "w", encoding="utf-8") as writer:
        writer.write("\n".join(vocab) + "\n")
    return vocab
