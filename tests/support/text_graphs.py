"""What the raw-text graph tests (ONNX and OpenVINO, issue 48) share: the golden cases and the
texts they run, the checks of the graphs' ids against albert-tf's packing and the original's
golden ids, a tiny classifier whose outputs move with its inputs, the checks of an export's
text-in metadata, and the text runners' refusal of bytes that are not UTF-8."""

import json

import numpy as np
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier, AlbertTokenClassifier
from albert_tf.serving import onnx_export, onnx_text, runtime_text
from support.configs import GLUE_TINY
from support.glue_texts import glue_dev_texts
from support.hard_texts import HARD
from support.informative import spread_weights
from support.paths import FIXTURES

SPM = FIXTURES / "spm" / "spm.model"
DIGIT_COMMA = FIXTURES / "spm" / "spm_digitcomma.model"
# The token classifier's text files (ONNX and OpenVINO): 16 tokens, so windows of 14 pieces 7
# apart. Sentence 2 is 40 words of 2+ pieces: many windows. "\u0301" alone has no pieces (one
# unknown piece); the NUL goes in as the runner's stand-in.
TAGGER_LENGTH, TAGGER_LABELS = 16, ["O", "B-PER", "I-PER"]
TAGGER_TEXTS = ["Ada Lovelace met Charles Babbage in London .",
                " ".join(f"Zürich{i} Smith" for i in range(20)), "", " \u00a0\t\n ",
                "Café  CRÈME\u3000brûlée \u0301 x", "中文 한국어 ΟΔΟΣ",
                "1,000 people\u2003and 9,", "null\x00char here", "one\x1ftwo"]


def golden_cases(name: str) -> list[dict]:
    """The original's tokenization golden cases in fixtures/original/tokenization/`name`."""
    return json.loads((FIXTURES / "tokenization" / name).read_text(encoding="utf-8"))["cases"]


def paired_texts(extra=()):
    """The digit-comma model's golden cases, the last 872 GLUE dev texts (SST-2's), the hard
    cases and `extra`; every other text paired with the one 7 further on (the others with "").
    Returns (cases, texts, pairs)."""
    cases = golden_cases("tokenization_golden_digitcomma.json")
    texts = [c["text"] for c in cases] + glue_dev_texts()[-872:] + HARD + list(extra)
    pairs = [text if k % 2 else "" for k, text in enumerate(texts[7:] + texts[:7])]
    return cases, texts, pairs


def differing(got: dict, want: dict, texts: list[str]) -> dict:
    """{output name: the texts whose row differs} for each of onnx_text.OUTPUTS with a
    difference; {} when every row of every output is the same."""
    found = {}
    for name in onnx_text.OUTPUTS:
        rows = np.flatnonzero((np.asarray(got[name]) != np.asarray(want[name])).any(-1))
        if len(rows):
            found[name] = [texts[i] for i in rows]
    return found


def assert_uncased_golden_ids(ids, cases):
    """The single rows (every other one, from paired_texts at length 64) hold the original's
    lower-cased ids of each golden case (its first 61), digits before commas among them."""
    fixed = 0
    for row, case in enumerate(cases[::2]):
        golden = case["preprocess_text(lower=True)+tokenize"]["ids"][:61]
        assert ids[2 * row][1:len(golden) + 1].tolist() == golden
        fixed += "," in case["text"]
    assert fixed > 10  # digits before commas: the fix-up's pieces


def assert_cased_golden_ids(got: dict, texts: list[str], cases):
    """The first 40 golden cases' rows hold the original's cased ids, between [CLS] and [SEP]."""
    ids, mask = got["input_word_ids"], got["input_mask"]
    for case in cases[:40]:
        row = texts.index(case["text"])
        assert ids[row][1:mask[row].sum() - 1].tolist() == case[
            "preprocess_text(lower=False)+tokenize"]["ids"]


def check_uncased_pairs(run, extra=()):
    """`run(spm, lower, length, texts, pairs)` (a graph's outputs by name) on paired_texts(extra)
    with the digit-comma model, lower-cased, at 64: every row albert-tf's packing, the single
    rows the original's golden ids. Returns (texts, got, want)."""
    cases, texts, pairs = paired_texts(extra)
    got = run(str(DIGIT_COMMA), True, 64, texts, pairs)
    want = runtime_text.pack_texts(texts, pairs, 64, spm_model_file=str(DIGIT_COMMA))
    assert differing(got, want, texts) == {}
    assert_uncased_golden_ids(got["input_word_ids"], cases)  # single rows: the original's ids
    return texts, got, want


def check_cased_singles(run):
    """`run` (as for check_uncased_pairs) on the fixture model's golden cases and the hard
    cases, cased, single texts at 128: every row albert-tf's packing, the golden cases the
    original's own ids."""
    cases = golden_cases("tokenization_golden.json")
    texts = [c["text"] for c in cases] + HARD
    got = run(str(SPM), False, 128, texts, [""] * len(texts))
    want = runtime_text.pack_texts(texts, None, 128, spm_model_file=str(SPM), do_lower_case=False)
    assert differing(got, want, texts) == {}
    assert_cased_golden_ids(got, texts, cases)  # against the original's own ids


def spread_classifier():
    """A built 3-label GLUE_TINY classifier (length 16) with spread weights (std 0.3)."""
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), 3)
    model({"input_ids": np.zeros((1, 16), np.int32),
           "input_mask": np.ones((1, 16), np.int32), "segment_ids": np.zeros((1, 16), np.int32)})
    return spread_weights(model, std=0.3)


def assert_text_metadata(meta: dict, text_files: dict, note: str):
    """An export's <head>.json says text_in, names its text files and the note
    runtime_text.NOTES[note], and its float32 text file agreed with the Keras model on the 20
    check texts."""
    assert meta["text_in"] is True and meta["text_inputs"] == ["text_a", "text_b"]
    assert meta["text_files"] == text_files
    assert meta["text_in_note"] == runtime_text.NOTES[note]
    checked = meta["agreement"]["text"]["float32"]
    assert checked["texts"] == 20 and checked["argmax_agreement"] == 1.0
    assert checked["max_abs_diff"] <= onnx_export.FLOAT32_ATOL


def export_checked(export, folder, files: list[str], suffix: str, note: str):
    """`export` (onnx_export.export_onnx or openvino_export.export_openvino) writes
    spread_classifier() at length 16, float32 and dynamic_int8, with the fixture spm.model and
    labels a, b, c, into `folder`: the folder then holds exactly `files` (sorted), the export
    names its float32 text file, and classifier.json its text files (classifier.text.<kind>
    .`suffix`), runtime_text.NOTES[note] and its check (assert_text_metadata)."""
    written = export(spread_classifier(), folder, 16, "float32,dynamic_int8", name="classifier",
                     spm_model_file=str(SPM), label_names=["a", "b", "c"])
    assert sorted(p.name for p in folder.iterdir()) == files
    assert written["text.float32"] == str(folder / f"classifier.text.float32.{suffix}")
    assert_text_metadata(json.loads((folder / "classifier.json").read_text()),
                         {"float32": f"classifier.text.float32.{suffix}",
                          "dynamic_int8": f"classifier.text.dynamic_int8.{suffix}"}, note)


def assert_refuses_non_utf8(runner):
    """`runner` (a text runner without its model) refuses bytes that are not UTF-8, naming the
    text, the byte and its offset, in texts and in pairs."""
    with pytest.raises(InputError, match=r"^text 1 is not UTF-8 \(byte 0xe9 at offset 3\)$"):
        runner(["fine", "caf\xe9".encode("latin-1")])
    with pytest.raises(InputError, match=r"^text pair 0 is not UTF-8 \(byte 0xff"):
        runner(["fine"], [b"\xff"])


def assert_tagger_text_export(folder, written: dict, files: list[str], text_file: str,
                              labels: list[str], note: str):
    """A token classifier's export (float32, 16 tokens: windows 7 apart) with its text file:
    the folder's `files`, the path returned, and its json: text inputs and per-word outputs,
    stride, labels, `note`, and the text file checked at export on the check texts' 223 words
    (labels equal, within `FLOAT32_ATOL`)."""
    assert sorted(p.name for p in folder.iterdir()) == files
    assert written["text.float32"] == str(folder / text_file)
    meta = json.loads((folder / "token_classifier.json").read_text())
    assert meta["text_in"] is True and meta["text_inputs"] == ["text_a"]
    assert meta["text_outputs"] == ["words", "tags", "tag_ids", "probabilities",
                                    "word_starts", "word_ends"]
    assert meta["text_files"] == {"float32": text_file}
    assert meta["doc_stride"] == 7 and meta["label_names"] == labels
    assert meta["text_in_note"] == note
    checked = meta["agreement"]["text"]["float32"]
    words = sum(len(t.split()) for t in onnx_export.CHECK_TEXTS)
    assert checked["texts"] == 10 and checked["rows"] == words == 223
    assert checked["argmax_agreement"] == 1.0
    assert checked["max_abs_diff"] <= onnx_export.FLOAT32_ATOL


def spread_tagger():
    """A tiny token classifier of `TAGGER_LABELS` whose tags move with its inputs."""
    model = AlbertTokenClassifier(AlbertConfig(**GLUE_TINY), len(TAGGER_LABELS),
                                  dropout_prob=0.0)
    model({"input_ids": np.zeros((1, TAGGER_LENGTH), np.int32)})
    spread_weights(model, std=0.3)
    return model
