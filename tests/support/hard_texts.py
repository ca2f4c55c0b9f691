"""Made-up texts that are hard to tokenize exactly: odd whitespace, control characters, literal
[CLS], accents and combining marks, Greek final sigma, case rules, compatibility forms, CJK and
Hangul, emoji sequences, digits before commas, the URL whose pieces tie on score, long texts.
The raw-text graphs (ONNX, OpenVINO) are checked on them."""

HARD = ["", " ", "\u00a0\u3000", "a\u00a0b\u3000c\td\ne\rf\x0bg\x0ch\x85i", "zero\u200bwidth",
        "ctrl\x01\x07\x1b\x7fend", "[CLS] [MASK] [SEP]", "Café CRÈME Brûlée Ñ", "e\u0301 \u0301",
        "¨a ´b", "ΟΔΟΣ", "ΣΑΣ ΣΑΣ.", "Σ", "ΑΣ'Σ", "ΑΣ'ΣΒ", "ΑΣΣ", "\U0001d6ba\U0001d6f4 ΑΣ",
        "İstanbul ıİ", "Straße", "ǅ ﬁ ½ x² ①", "Ｆｕｌｌ ｶﾀｶﾅ", "中文，。", "한국어 가나다",
        "😀 👍🏽 👨‍👩‍👧", "1,000", "$1,999, or 2,000,", "year 1990, and 2000,", "9, 10, 11,",
        "https://www.example.org/path?x=1&y=2#frag", "www www.www", "a" * 300, "word " * 80]
