"""What the raw-text probes (onnx_tokenizer_probe.py, openvino_tokenizer_probe.py, and the
texts for onnx_tagger_probe.py) share: their texts, and the comparison of a text → ids graph's
packed outputs with albert-tf's tokenizer + packing (serving/runtime_text.pack_texts).

`probe(build, run_batches)` runs the comparison: each model (the fixture spm.model, and
spm_digitcomma.model whose vocabulary holds pieces such as "9,"), cased and uncased, single
texts at max_seq_length 128 and pairs (each text with another, long pairs trimmed) at 64; the
golden cases also against the original's golden ids, unpacked (at 512); the texts holding
U+0000 apart. `build(spm, lower, length)` gives the runtime's graph, `run_batches(run, texts,
pairs)` its outputs in onnx_text.OUTPUTS' order.
"""
import csv
import json
import os
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.serving import onnx_text, runtime_text  # noqa: E402
from albert_tf.tokenization import vocab_builder  # noqa: E402

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "original"

HARD = [
    "", " ", "\t\n", "\u00a0", "\u3000\u3000", "a\u00a0b\u3000c\td\ne\rf\x0bg\x0ch", "x\x1cy\x85z",
    "line\u2028sep\u2029para", "zero\u200bwidth", "  lead and trail  ", "ctrl\x01\x07\x1b\x7fend",
    "[CLS]", "[MASK] and [SEP]", "[cls] lower", "<unk> <pad>", "▁▁piece", "Café CRÈME Brûlée",
    "ÀÉÎÕÜ àéîõü Ññ Çç", "e\u0301 a\u0300 combining", "\u0301\u0300 marks alone", "¨a ´b ¸c",
    "ΟΔΟΣ", "ΣΑΣ ΣΑΣ.", "Σ", "ΑΣ'Σ", "ΑΣ'ΣΒ", "ΑΣΣ", "Σ. ΑΣ, ΒΣ!", "\U0001d6ba\U0001d6f4 ΑΣ",
    "ὈΔΥΣΣΕΎΣ", "İstanbul ıi İI", "Straße STRASSE", "ǅ ǈ ǋ titlecase", "ﬁ ﬂ ﬃ ligatures",
    "½ ¼ ¾ x² ₃", "①②③ ⑩", "Ｆｕｌｌ ｗｉｄｔｈ", "ｶﾀｶﾅ half", "中文字符，标点。", "日本語のテキスト",
    "한국어 문장 가나다", "ㄱㄴㄷ jamo", "مرحبا", "שלום", "हिन्दी", "ไทย", "😀 👍🏽 🇺🇸 👨‍👩‍👧",
    "1,000", "1,000,000.5", "9, 10, 11,", "$1,999, or 2,000,", "a1,b2,c3,", "year 1990, and 2000,",
    "12,345 people, 67,890 cars", "https://www.example.org/path?x=1&y=2#frag",
    "www www.www", "Ω ℃ ℉ Å K", "ǲ ǳ", "ꙋ Ꙋ", "\ufeffbom", "\ufffd replacement",
    "tab\tsep\tvalues", "many     spaces", "\n\n\n", "a" * 300, "word " * 80,
    "Dvořák's Mötley Crüe Ærøskøbing Łódź", "Ёлка ЁЛКА", "ΆΈΉΊΌΎΏ άέήίόύώ ΐΰ",
]
NUL = ["a\x00b", "\x00", "end\x00"]


def glue_texts():
    texts = []
    with open(SHARED / "data" / "glue" / "MRPC" / "dev.tsv", encoding="utf-8", newline="") as r:
        for row in list(csv.reader(r, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            texts += row[3:5]
    with open(SHARED / "data" / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as r:
        texts += [line.split("\t")[0] for line in r.read().splitlines()[1:]]
    return texts


def differing(run_batches, run, spm, lower, texts, pairs, length, vocab=None):
    """The rows whose ids, mask or segment ids differ from albert-tf's (`vocab`: a WordPiece
    vocab_file instead of `spm`)."""
    got = run_batches(run, texts, pairs)
    want = runtime_text.pack_texts(texts, pairs, length, spm_model_file=spm, vocab_file=vocab,
                                   do_lower_case=lower)
    rows = np.zeros(len(texts), bool)
    for name, value in zip(onnx_text.OUTPUTS, got):
        rows |= (value != want[name]).any(-1)
    return [i for i in np.flatnonzero(rows)]


def probe(build, run_batches):
    total = 0
    for model_name, golden in (("spm.model", "tokenization_golden.json"),
                               ("spm_digitcomma.model", "tokenization_golden_digitcomma.json")):
        spm = str(FIXTURES / "spm" / model_name)
        cases = json.loads((FIXTURES / "tokenization" / golden).read_text("utf-8"))["cases"]
        texts = [c["text"] for c in cases] + glue_texts() + HARD
        shifted = texts[7:] + texts[:7]
        for lower in (True, False):
            start = time.time()
            runs = {length: build(spm, lower, length) for length in (64, 128, 512)}
            built = time.time() - start
            bad_single = differing(run_batches, runs[128], spm, lower, texts, [""] * len(texts),
                                   128)
            bad_pair = differing(run_batches, runs[64], spm, lower, texts, shifted, 64)
            # The golden cases against the original's own ids, unpacked.
            key = f"preprocess_text(lower={lower})+tokenize"
            ids, mask = run_batches(runs[512], [c["text"] for c in cases],
                                    [""] * len(cases))[:2]
            bad_golden = [c["text"] for c, row, m in zip(cases, ids, mask)
                          if row[1:int(m.sum()) - 1].tolist() != c[key]["ids"]]
            bad_nul = differing(run_batches, runs[128], spm, lower, NUL, [""] * len(NUL), 128)
            total += len(texts) * 2
            print(f"{model_name} lower={lower}: {len(texts)} texts; differ single "
                  f"{len(bad_single)}, pair {len(bad_pair)}, golden {len(bad_golden)} of "
                  f"{len(cases)}; NUL texts {len(bad_nul)} of {len(NUL)} "
                  f"(built in {built:.1f} s, {time.time() - start:.1f} s in all)")
            for i in bad_single[:5] + bad_pair[:5]:
                print("   ", repr(texts[i][:80]), "|", repr(shifted[i][:40]))
            for text in bad_golden[:5]:
                print("    golden", repr(text[:80]))
    print(f"{total} packed rows compared")


# What WordPiece alone meets: every ASCII punctuation character and Unicode P* (each its own
# word), CJK ideographs of every block (each its own word, compatibility ones normalised),
# words of 200 and 201 characters (past 200: [UNK]), controls and format characters (dropped),
# the final sigma around dropped and ignorable characters, marks of a kept combining class.
WORDPIECE_HARD = [
    "".join(chr(c) for c in range(33, 127)), "a!b\"c#d$e%f&g'h(i)j*k+l,m-n.o/p:q;r<s=t>u?v@w",
    "x[y\\z]^_`{|}~end", "«guillemets» „quotes“ ‹single› ¿qué? ¡sí! — – ‐ ‧ ※ ‼ ⁇ 〈〉《》「」『』【】",
    "中文字符，标点。我爱北京天安门！", "㐀㐁 𠀀𠀁 𪜀 𫝀 𫠠 豈更 丽丸 〇 々 ㄅ",
    "x" * 200, "y" * 201, "ab" * 100 + " z", "\x00a\x01b\x7fc\u200bd\u200de\ufeff",
    "ΑΣ\u200dΒ ΑΣ\u00ad ΑΣ\x00 Σ\u200b ΟΔΟΣ,ΣΑΣ.", "\U0001d16d\U0001d165 \U0001d165\U0001d16d",
    "ﬁne Ǆx İi ß ẞ ŉ ǰ", "\ud7a3 한글 ｶﾀｶﾅ ｆｕｌｌ", "a\u2028b\u2029c\x1cd\x85e\u0085",
    "emoji😀here 👍🏽ok", "\U000f0000\U0010fffd private", "\U00030000\U000e0100 planes",
]


def _lines(path, limit):
    with open(path, encoding="utf-8") as reader:
        rows = [line.strip() for line in reader if line.strip() and not line.startswith(" =")]
    return rows[:limit]


def tweets(limit=300):
    """Sentences of the Broad Twitter Corpus' dev file (its tokens joined with spaces)."""
    texts, words = [], []
    with open(SHARED / "data" / "ner" / "btc" / "dev.conll", encoding="utf-8") as reader:
        for line in reader:
            if line.strip():
                words.append(line.split("\t")[0])
            elif words:
                texts.append(" ".join(words))
                words = []
    return texts[:limit]


def cjk_texts(count=200, seed=48):
    """Made-up texts of CJK ideographs (every block, some compatibility ones) with Latin words."""
    rng = np.random.default_rng(seed)
    blocks = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0xF900, 0xFAFF),
              (0x2F800, 0x2FA1F), (0x4E00, 0x4FFF)]
    texts = []
    for k in range(count):
        chars = [chr(int(rng.integers(*blocks[int(rng.integers(len(blocks)))])))
                 for _ in range(int(rng.integers(1, 30)))]
        texts.append("".join(chars[:5]) + (" Word%d " % k) + "".join(chars[5:]))
    return texts


def wordpiece_texts():
    """The WordPiece probe's texts: its hard cases and the tokenizer probe's, the GLUE dev
    sentences, tweets, WikiText-2 lines and made-up CJK texts."""
    wiki = _lines(SHARED / "data" / "pretrain" / "wikitext-2_v1" / "valid.txt", 300)
    return WORDPIECE_HARD + HARD + glue_texts() + tweets() + wiki + cjk_texts()


def wordpiece_vocab(path, texts, lower, size=2000):
    """A vocab file learnt from every other text (vocab_builder: alphabet at 99.5 % coverage,
    so rarer characters are [UNK]) plus the CJK ideographs of every other CJK text."""
    words = vocab_builder.count_words(texts[::2], lower)
    tokens = vocab_builder.learn_wordpiece(words, size, character_coverage=0.995, min_count=2,
                                           max_piece_chars=10)
    tokens += sorted({c for t in cjk_texts()[::2] for c in t if ord(c) > 0x3000})
    with open(path, "w", encoding="utf-8") as writer:
        writer.write("\n".join(dict.fromkeys(tokens)) + "\n")
    return str(path)


def wordpiece_probe(build, run_batches, folder, texts=None, size=2000):
    """Counts the id-exact rows of a WordPiece text graph (`build(vocab_file, lower, length)`):
    single texts at 128, each text paired with another at 64, cased and uncased, each with a
    vocab learnt from the texts with that casing. {lower: (rows, exact rows)}."""
    texts = wordpiece_texts() if texts is None else list(texts)
    shifted = texts[7:] + texts[:7]
    found = {}
    for lower in (True, False):
        start = time.time()
        vocab = wordpiece_vocab(pathlib.Path(folder) / f"vocab.{lower}.txt", texts, lower, size)
        bad_single = differing(run_batches, build(vocab, lower, 128), None, lower, texts,
                               [""] * len(texts), 128, vocab)
        bad_pair = differing(run_batches, build(vocab, lower, 64), None, lower, texts, shifted,
                             64, vocab)
        found[lower] = (2 * len(texts), 2 * len(texts) - len(bad_single) - len(bad_pair))
        print(f"wordpiece lower={lower}: {len(texts)} texts; differ single {len(bad_single)}, "
              f"pair {len(bad_pair)} ({time.time() - start:.1f} s)")
        for i in bad_single[:5] + bad_pair[:5]:
            print("   ", repr(texts[i][:80]), "|", repr(shifted[i][:40]))
    return found
