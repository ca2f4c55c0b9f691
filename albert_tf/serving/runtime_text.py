"""Raw text and the ONNX / OpenVINO files: which files take strings, the measurement behind
it, and the checks on the texts a caller sends.

Issue 48 asks for files that take strings, tokenized by the runtime's own ops exactly as
albert-tf's tokenizer does (`tokenization.text_rules.preprocess_text`, then SentencePiece with
the original's digit-comma fix-up, then packing).

- ONNX: a classifier's and an encoder's export with a SentencePiece model also writes
  `<head>.text.<kind>.onnx` beside each ids file, taking `text_a` (+ `text_b`) strings
  (`serving.onnx_text`: the normalisation as a per-character table, onnxruntime-extensions'
  SentencepieceTokenizer, its pieces searched again with the wheel's tie-break, the
  digit-comma fix-up as an id table, the packing). On the original's 224 golden cases, the
  1,688 GLUE dev sentences and 69 made-up hard cases, with the fixture model and one holding
  digit-comma pieces, cased and uncased, single and pair (15,848 packed rows,
  bench/onnx_tokenizer_probe.py), its ids, mask and segment ids are albert-tf's on every text
  but those holding a NUL: onnxruntime-extensions' string ops read a string up to its first
  NUL ("null\\x00char" loses "char"); `runtimes.OnnxTextRunner` sends U+FDD0 in its place,
  which SentencePiece reads as the same unknown character. A token classifier's text-in file
  (`serving.onnx_tagger`) runs the same normalisation and SentencePiece on each
  whitespace-separated word, its windows and each word's tag in the graph. SQuAD and
  multiple-choice heads keep ids-in files only.
- WordPiece (a `vocab_file`, the original's Chinese models): a classifier's, a token
  classifier's and an encoder's ONNX and OpenVINO exports write the same text files
  (`serving.onnx_wordpiece`: the basic
  tokenizer as per-code-point tables, the greedy longest match over a perfect hash of the
  vocabulary, all in standard numeric ops; the code points from onnxruntime-extensions'
  character split, or from openvino-tokenizers' `StringTensorUnpack` bytes:
  `serving.openvino_wordpiece`); bench/text_graph_probe.py --wordpiece counts their exact rows.
  Earlier, onnxruntime-extensions' HfJsonTokenizer with NFKD, StripAccents and Lowercase
  normalizers gave other ids on 939 of 1,912 texts (upper case kept, "[CLS]" read as a
  special token, whitespace-only text not empty).
- OpenVINO: the same export with a unigram SentencePiece model also writes
  `<head>.text.<kind>.xml` (+ `.bin`) beside each ids file (`serving.openvino_text`: the ONNX
  graph's steps, the numbers in standard ops that OpenVINO's ONNX frontend reads, the strings
  in openvino-tokenizers' ops). On the same texts and configurations
  (bench/openvino_tokenizer_probe.py, 15,848 packed rows, in a process that imported
  TensorFlow first) its ids, mask and segment ids are albert-tf's on every row, the golden
  cases the original's, and the NUL texts too through `runtimes.OpenVinoTextRunner`'s
  stand-in (numpy's str arrays drop a trailing NUL). openvino-tokenizers' own chain (NFKD, a
  regex for the marks, case folding, SentencepieceTokenizer: `openvino_sentencepiece_ids`)
  is not that: on the 224 golden cases and 1,688 GLUE dev sentences its ids differ on 2 texts,
  both holding "https://www.example.org/path?x=1&y=2#frag" ("www" comes out "ww" + "w" where
  the wheel gives "w" + "ww", a tie of equal scores broken the other way), and with
  digit-comma pieces ("9,", "000,") on 77 more (the original's fix-up has no op), which is
  why the file searches the op's pieces again and fixes them up in standard ops.

A text that is not UTF-8 is refused (`require_utf8`) where the original would drop the bytes.
"""

from __future__ import annotations

import numpy as np

from albert_tf import tokenization
from albert_tf.serving import runtimes
from albert_tf.serving.runtimes import require_utf8
from albert_tf.tokenization import pack_pair

# What a WordPiece text file tokenizes otherwise (serving.wordpiece_tables).
_MARKS = ("uncased, two spacing marks with a combining class (25: viramas, Hangul tone marks, "
          "musical symbols) in one word in falling class order keep their order, where NFD "
          "swaps them")
NOTES = {
    "onnx": ("takes ids: text-in files (<head>.text.<kind>.onnx) are written for a classifier's, "
             "a token classifier's and an encoder's export with a SentencePiece model or a "
             "WordPiece vocab_file; this head (SQuAD's question and paragraph, "
             "multiple-choice options) is tokenized with the tokenizer file beside it"),
    "onnx_text": ("the text_files take text_a and text_b strings ([''] for single texts) and "
                  "tokenize inside the file (register onnxruntime-extensions' ops: "
                  "onnxruntime_extensions.get_library_path()): albert-tf's ids on 1,981 "
                  "measured texts (cased and uncased, single and pair, digit-comma pieces) but "
                  "after a NUL: the string ops stop at it, so send U+FDD0 in its place, as "
                  "serving.runtimes.OnnxTextRunner does; the ids files (files) take "
                  "input_word_ids, input_mask and input_type_ids"),
    "onnx_wordpiece": ("the text_files take text_a and text_b strings ([''] for single texts) "
                       "and run the WordPiece vocab_file's tokenizer inside the file (register "
                       "onnxruntime-extensions' ops): albert-tf's FullTokenizer ids and packing "
                       "on 2,575 measured texts (cased and uncased, single and pair); a NUL is "
                       "dropped, as the tokenizer drops it: send U+FDD0 in its place (the "
                       "string ops stop at a NUL), as serving.runtimes.OnnxTextRunner does, so "
                       "a U+FDD0 of the text itself is dropped too; " + _MARKS + "; the ids "
                       "files (files) take input_word_ids, input_mask and input_type_ids"),
    "openvino_wordpiece": ("the text_files take text_a and text_b strings ([''] for single "
                           "texts) and run the WordPiece vocab_file's tokenizer inside the "
                           "file (import openvino_tokenizers before reading it): albert-tf's "
                           "FullTokenizer ids and packing on 2,575 measured texts (cased and "
                           "uncased, single and pair); send U+FDD0 for a NUL, as "
                           "serving.runtimes.OpenVinoTextRunner does (both are dropped); "
                           + _MARKS + "; the ids files (files) take input_word_ids, "
                           "input_mask and input_type_ids"),
    "onnx_tagger": ("the text_files take text_a strings (sentences; words are the parts "
                    "str.split() gives) and give per word, padded per row: words, tags (''), "
                    "tag_ids (-1), probabilities (0), word_starts and word_ends (code-point "
                    "offsets, -1), as the SavedModel's serve_text (not its entities); windows "
                    "of max_seq_length - 2 pieces doc_stride apart, each word tagged at its "
                    "first piece in the window where it has the most context (register "
                    "onnxruntime-extensions' ops; send U+FDD0 for a NUL, as "
                    "serving.runtimes.OnnxTextRunner does); the ids files (files) take "
                    "input_word_ids, input_mask and input_type_ids"),
    "openvino": ("takes ids: text-in files (<head>.text.<kind>.xml) are written for a "
                 "classifier's, a token classifier's and an encoder's export with a unigram "
                 "SentencePiece model or a WordPiece vocab_file; this head (SQuAD's question "
                 "and paragraph, multiple-choice options) is tokenized with the tokenizer file "
                 "beside it"),
    "openvino_text": ("the text_files take text_a and text_b strings ([''] for single texts) "
                      "and tokenize inside the file (import openvino_tokenizers before reading "
                      "it: it registers the string ops): albert-tf's ids on 1,981 measured "
                      "texts (cased and uncased, single and pair, digit-comma pieces); send "
                      "U+FDD0 for a NUL (numpy's str arrays drop a trailing one), as "
                      "serving.runtimes.OpenVinoTextRunner does; the ids files (files) take "
                      "input_word_ids, input_mask and input_type_ids"),
    "openvino_tagger": ("the text_files take text_a strings (sentences; words are the parts "
                        "str.split() gives) and give per word, padded per row: words, tags "
                        "(''), tag_ids (-1), probabilities (0), word_starts and word_ends "
                        "(code-point offsets, -1), as the SavedModel's serve_text (not its "
                        "entities) and the ONNX text files; windows of max_seq_length - 2 "
                        "pieces doc_stride apart, each word tagged at its first piece in the "
                        "window where it has the most context (import openvino_tokenizers "
                        "before reading it; send U+FDD0 for a NUL, as "
                        "serving.runtimes.OpenVinoTextRunner does); the ids files (files) "
                        "take input_word_ids, input_mask and input_type_ids"),
}


def text_in_note(fmt: str) -> str:
    """Why a file of format `fmt` ("onnx", "openvino") takes ids, for its `<head>.json`."""
    return NOTES[fmt]


def as_text(texts, what: str = "text"):
    """One text or a list of them (a pair's may hold None) as `require_utf8` checks them."""
    if texts is None or isinstance(texts, str):
        return texts
    if isinstance(texts, (bytes, bytearray, np.bytes_)):
        return require_utf8([texts], what)[0]
    return require_utf8(list(texts), what)


def _openvino_tokenizer(spm_model_file: str, lower: bool):
    """The compiled OpenVINO graph: strings → (row of each piece, id) with NFKD, marks dropped,
    case folding (when `lower`), whitespace squeezed and trimmed, then SentencepieceTokenizer."""
    ov = runtimes.load("openvino", "raw text in OpenVINO")
    pipeline = runtimes.load("openvino_tokenizers.tokenizer_pipeline", "raw text in OpenVINO",
                             "openvino")
    opset = runtimes.load("openvino.opset14", "raw text in OpenVINO", "openvino")
    text = opset.parameter(ov.PartialShape(["?"]), ov.Type.string, name="text")
    x = pipeline._get_opset_factory("opset15").create("StringTensorUnpack", text.outputs()).outputs()
    steps = [pipeline.NormalizeUnicode("NFKD"),
             pipeline.RegexNormalizationStep.strip_accents_regex()]
    if lower:
        steps.append(pipeline.CaseFoldStep())
    steps += [pipeline.RegexNormalizationStep(r"\s+", " "),
              pipeline.RegexNormalizationStep(r"^ | $", "")]
    for step in steps:
        x = step.get_ov_subgraph(x)
    packed = pipeline._get_opset_factory("opset15").create("StringTensorPack", x).outputs()
    with open(spm_model_file, "rb") as reader:
        model = opset.constant(np.frombuffer(reader.read(), np.uint8))
    tokens = pipeline._get_factory().create(
        "SentencepieceTokenizer", [model.output(0), *packed],
        {"add_bos": False, "add_eos": False, "reverse": False, "alpha": 1, "nbest_size": 1})
    rows, ids, _ = tokens.outputs()
    return ov.Core().compile_model(ov.Model([rows, ids], [text], "tokenizer"), "CPU")


def openvino_sentencepiece_ids(spm_model_file: str, texts, lower: bool = True) -> list:
    """The ids of each text as openvino-tokenizers' ops give them (see the module)."""
    texts = require_utf8(texts)
    compiled = _openvino_tokenizer(spm_model_file, lower)
    rows, ids = compiled([np.array(texts)]).values()
    result = [[] for _ in texts]
    for (row, _), value in zip(np.asarray(rows), np.asarray(ids)):
        result[int(row)].append(int(value))
    return result


def pack_texts(texts, text_pairs, max_seq_length: int, spm_model_file=None, vocab_file=None,
               do_lower_case: bool = True) -> dict:
    """The three int32 [B, S] inputs of raw texts, tokenized as `serving.lite` does."""
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case, spm_model_file)

    def tokens(text):
        if spm_model_file:  # SentencePiece mode tokenizes as-is: normalise first
            text = tokenization.preprocess_text(text, lower=do_lower_case)
        return tokenizer.tokenize(text)
    texts = require_utf8(texts)
    pairs = [None] * len(texts) if text_pairs is None else require_utf8(text_pairs, "text pair")
    ids = np.zeros((len(texts), max_seq_length), np.int32)
    mask, types = np.zeros_like(ids), np.zeros_like(ids)
    for row, (text_a, text_b) in enumerate(zip(texts, pairs)):
        pieces, segments = pack_pair(tokens(text_a), tokens(text_b) if text_b else [],
                                     max_seq_length)
        piece_ids = tokenizer.convert_tokens_to_ids(pieces)
        ids[row, :len(piece_ids)], mask[row, :len(piece_ids)] = piece_ids, 1
        types[row, :len(segments)] = segments
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def argmax_agreement(got: dict, want: dict) -> float | None:
    """The share of rows whose most probable class agrees between two runs' outputs."""
    for name in ("probabilities", "logits"):
        if name in want and np.ndim(want[name]) >= 2 and np.shape(want[name])[-1] > 1:
            return round(float(np.mean(np.argmax(got[name], -1) == np.argmax(want[name], -1))), 6)
    return None


def text_agreement(files: dict, open_runner, texts, text_pairs=None, max_seq_length=None,
                   kind: str = "dynamic_int8", **tokenizer) -> dict | None:
    """{texts, argmax_agreement} of the `kind` int8 file against the float32 one on raw
    `texts` (a dev set's), or None without both files, texts or a class output.
    `tokenizer`: spm_model_file / vocab_file / do_lower_case. Each text runs alone: dynamic
    int8 quantizes a call's activations with one scale, so a text's answer would otherwise
    depend on the texts batched with it."""
    if not texts or "float32" not in files or kind not in files:
        return None
    reference, quantized = open_runner(files["float32"]), open_runner(files[kind])
    inputs = pack_texts(texts, text_pairs, max_seq_length or reference.max_seq_length,
                        **tokenizer)
    agree = 0.0
    for row in range(len(texts)):
        one = {k: v[row:row + 1] for k, v in inputs.items()}
        share = argmax_agreement(quantized(**one), reference(**one))
        if share is None:
            return None
        agree += share
    return {"texts": len(texts), "batch": 1, "argmax_agreement": round(agree / len(texts), 6)}
