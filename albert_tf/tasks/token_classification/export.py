"""SavedModel export of a token classifier (and the call its TFLite files are converted from).

* `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [B, S] (any S up to the
  model's positions) → `tag_ids` [B, S] int32, `probabilities` [B, S, C] and `tags` [B, S]
  (the tag names of `tag_ids`): a tag for every position; the caller knows its first pieces.
* `serve_text`: raw UTF-8 `text` [B]; its words are the parts `str.split()` gives. Each word is
  tokenized on its own in the graph (the tokenizer model is embedded), the pieces are split into
  the same windows as run_ner.py's features (`--max_seq_length`, `--doc_stride`; a word's tag
  from its first piece in the window where it has the most context), so a word gets the tag
  run_ner.py gives the same token. Outputs, padded per row: `words`, `tags` [B, W] strings
  (""), `tag_ids` [B, W] (-1), `probabilities` [B, W, C] (0), `word_starts`/`word_ends`
  [B, W] character offsets (-1), and the entities decoded from the tags by conlleval's chunk
  rules (`metrics.py`): `entity_labels`, `entity_texts` [B, E] (""), `entity_starts`,
  `entity_ends` [B, E] (-1): character offsets (code points) into the text, end exclusive, so
  `text[start:end]` in Python is the entity text.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf import tokenization
from albert_tf.labels import placeholders
from albert_tf.run_config import window_stride
from albert_tf.serving import reference
from albert_tf.serving.head_export import HeadExport, numpy_outputs, text_labels
from albert_tf.serving.saved_model import inference_call, serving_root, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.tasks.token_classification.metrics import split_tag
from albert_tf.text import optional as text_optional
from albert_tf.text import text_preprocessor
from albert_tf.tokenization.word_windows import SPLIT_PATTERN

# Prefix codes of the chunk rules; OTHER: any prefix the rules do not name.
O, B, I, E, S, DOT, OTHER = range(7)
_CODES = {"O": O, "B": B, "I": I, "E": E, "S": S, ".": DOT}


def tag_tables(label_names) -> tuple[list, list, list]:
    """(prefix code per tag, type id per tag, type names with "" first) for the graph."""
    parts = [split_tag(name) for name in label_names]
    types = [""] + sorted({kind for _, kind in parts} - {""})
    return ([_CODES.get(prefix, OTHER) for prefix, _ in parts],
            [types.index(kind) for _, kind in parts], types)


def _any(code, *values):
    return tf.reduce_any(tf.stack([tf.equal(code, v) for v in values]), 0)


def chunk_ends(prev, prev_type, tag, tag_type):
    """`metrics.chunk_ends` on tensors of prefix codes and type ids."""
    return (_any(prev, E, S) | (_any(prev, B, I) & _any(tag, B, S, O))
            | (~_any(prev, O, DOT) & tf.not_equal(prev_type, tag_type)))


def chunk_starts(prev, prev_type, tag, tag_type):
    """`metrics.chunk_starts` on tensors of prefix codes and type ids."""
    return (_any(tag, B, S) | (_any(prev, E, S, O) & _any(tag, E, I))
            | (~_any(tag, O, DOT) & tf.not_equal(prev_type, tag_type)))


def _strings(name):
    return tf.TensorSpec([None], tf.string, name=name)


def _ids(name):
    return tf.TensorSpec([None, None], tf.int32, name=name)


class TokenServing:
    """The serving functions of one token classifier (and, for `serve_text`, its tokenizer)."""

    def __init__(self, model, max_seq_length: int, doc_stride: int, label_names,
                 spm_model_file=None, vocab_file=None, do_lower_case: bool = True):
        self.model = model
        self._model_call = inference_call(model)
        self.max_seq_length, self.doc_stride = int(max_seq_length), int(doc_stride)
        self.label_names = [str(name) for name in label_names]
        if len(self.label_names) != model.num_labels:
            raise ValueError(f"{len(self.label_names)} tags for a model with "
                             f"{model.num_labels} outputs")
        self.prefixes, self.types, self.type_names = tag_tables(self.label_names)
        self.preprocessor = None
        if (spm_model_file or vocab_file) and not text_optional.available():
            logging.warning("%s", text_optional.skipped("the token classifier's serve_text "
                                                        "signature"))
        else:
            self.preprocessor = text_preprocessor(max_seq_length, do_lower_case,
                                                  spm_model_file, vocab_file)
        self.unk_id = None
        if spm_model_file:
            self.unk_id = tokenization.load_sentencepiece(spm_model_file).unk_id()
        elif self.preprocessor is not None:
            self.unk_id = self.preprocessor.unk_id

    def _model(self, ids, mask, segments):
        return self._model_call({"input_ids": ids, "input_mask": mask, "segment_ids": segments})

    def serve_ids(self, input_ids, input_mask, segment_ids):
        outputs = self._model(input_ids, input_mask, segment_ids)
        tag_ids = tf.cast(outputs["predictions"], tf.int32)
        return {"tag_ids": tag_ids, "probabilities": outputs["probabilities"],
                "tags": tf.gather(tf.constant(self.label_names), tag_ids)}

    # ------------------------------------------------------------------------------ serve_text
    def _pieces(self, words):
        """[N] words → [N, (pieces)] ids; a word without pieces gets one unknown piece."""
        pieces = self.preprocessor.tokenize_strings(words)
        empty = tf.cast(tf.equal(pieces.row_lengths(), 0), tf.int64)
        unknown = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(self.unk_id, tf.int32)), empty)
        return tf.concat([pieces, unknown], axis=1)

    def _windows(self, flat, counts, word_row, batch):
        """The model inputs of every window and, per word, (window, position) of its tag."""
        seq = self.max_seq_length
        length, stride = (tf.constant(v, tf.int64) for v in (seq - 2, self.doc_stride))
        n = tf.math.unsorted_segment_sum(counts, word_row, batch)          # pieces per text
        text_start = tf.cumsum(n, exclusive=True)
        first = tf.cumsum(counts, exclusive=True) - tf.gather(text_start, word_row)
        n_windows = tf.where(n > length, (n - length + stride - 1) // stride + 1,
                             tf.ones_like(n))
        window_first = tf.cumsum(n_windows, exclusive=True)
        row = tf.repeat(tf.range(batch), n_windows)
        k = tf.range(tf.reduce_sum(n_windows)) - tf.gather(window_first, row)
        start = k * stride
        size = tf.minimum(length, tf.gather(n, row) - start)[:, None]
        j = tf.range(seq, dtype=tf.int64)[None, :]
        padded = tf.concat([flat, tf.zeros([1], flat.dtype)], 0)
        index = tf.clip_by_value(tf.gather(text_start, row)[:, None] + start[:, None] + j - 1,
                                 0, tf.size(flat, out_type=tf.int64))
        ids = tf.where((j >= 1) & (j <= size), tf.gather(padded, index), tf.zeros_like(index,
                                                                                    flat.dtype))
        ids = tf.where(j == 0, self.preprocessor.cls_id, ids)
        ids = tf.where(j == size + 1, self.preprocessor.sep_id, ids)
        mask = tf.cast(j <= size + 1, tf.int32)
        # Each word's home window: most context on its shorter side, the earlier on a tie.
        most = tf.reduce_max(n_windows)
        ks = tf.range(most)[None, :]
        at = first[:, None]
        starts = ks * stride
        sizes = tf.minimum(length, tf.gather(n, word_row)[:, None] - starts)
        inside = (ks < tf.gather(n_windows, word_row)[:, None]) & (at >= starts) & \
            (at < starts + sizes)
        score = tf.minimum(at - starts, starts + sizes - 1 - at)
        home = tf.argmax(tf.where(inside, score * most + (most - 1 - ks), tf.constant(-1, tf.int64)), axis=1)
        where = tf.stack([tf.gather(window_first, word_row) + home, first - home * stride + 1], 1)
        return ids, mask, where

    def _entities(self, tag_ids, words, text, char_starts, char_ends, byte_starts, byte_ends):
        word_row, batch = words.value_rowids(), words.nrows()
        prefix = tf.gather(tf.constant(self.prefixes), tag_ids)
        kind = tf.gather(tf.constant(self.types), tag_ids)
        index = tf.range(tf.size(tag_ids, out_type=tf.int64)) - tf.gather(words.row_starts(),
                                                                          word_row)
        first = tf.equal(index, 0)
        last = tf.equal(index, tf.gather(words.row_lengths(), word_row) - 1)
        prev_p = tf.where(first, O, tf.roll(prefix, 1, 0))
        prev_t = tf.where(first, 0, tf.roll(kind, 1, 0))
        next_p = tf.where(last, O, tf.roll(prefix, -1, 0))
        next_t = tf.where(last, 0, tf.roll(kind, -1, 0))
        starts = chunk_starts(prev_p, prev_t, prefix, kind)
        count = tf.cumsum(tf.cast(starts, tf.int64))
        ends = tf.where(chunk_ends(prefix, kind, next_p, next_t) & (count >= 1))[:, 0]
        begins = tf.gather(tf.where(starts)[:, 0], tf.gather(count, ends) - 1)
        row = tf.gather(word_row, ends)
        begins = tf.maximum(begins, tf.gather(words.row_starts(), row))  # never across texts
        spans = tf.gather(byte_starts, begins)
        values = {
            "entity_labels": (tf.gather(tf.constant(self.type_names), tf.gather(kind, ends)), ""),
            "entity_starts": (tf.gather(char_starts, begins), -1),
            "entity_ends": (tf.gather(char_ends, ends), -1),
            "entity_texts": (tf.strings.substr(tf.gather(text, row), spans,
                                               tf.gather(byte_ends, ends) - spans), "")}
        return {name: tf.RaggedTensor.from_value_rowids(v, row, nrows=batch).to_tensor(pad)
                for name, (v, pad) in values.items()}

    @staticmethod
    def _words(text):
        """(words [B, (W)], their byte starts and ends) of each text: `str.split()`'s words
        (`word_windows.SPLIT_PATTERN`). tensorflow-text's regex split reads a copy with each NUL
        as \x01 (it stops at a NUL; one byte for one keeps the offsets) and the words are cut
        from the text itself. (Its WhitespaceTokenizer ends a word before a multi-byte space
        with that space's first bytes: "a\u00a0b" gave "a\xc2".)"""
        found, starts, ends = text_optional.tensorflow_text().regex_split_with_offsets(
            tf.strings.regex_replace(text, r"\x00", "\x01"), SPLIT_PATTERN)
        cut = tf.strings.substr(tf.gather(text, found.value_rowids()), starts.flat_values,
                                ends.flat_values - starts.flat_values)
        return found.with_flat_values(cut), starts, ends

    def serve_text(self, text):
        text = checked_text(text=text)["text"]
        words, byte_starts, byte_ends = self._words(text)
        word_row, batch = words.value_rowids(), words.nrows()
        pieces = self._pieces(words.flat_values)
        ids, mask, where = self._windows(pieces.flat_values, pieces.row_lengths(), word_row,
                                         batch)
        logits = self._model(ids, mask, tf.zeros_like(ids))["logits"]
        word_logits = tf.gather_nd(logits, where)
        tag_ids = tf.argmax(word_logits, axis=-1, output_type=tf.int32)
        owner = tf.gather(text, word_row)
        byte_starts, byte_ends = byte_starts.flat_values, byte_ends.flat_values
        char_starts, char_ends = (tf.strings.length(tf.strings.substr(owner, tf.zeros_like(b), b), "UTF8_CHAR")
                                  for b in (byte_starts, byte_ends))
        per_word = {"words": (words.flat_values, ""),
                    "tags": (tf.gather(tf.constant(self.label_names), tag_ids), ""),
                    "tag_ids": (tag_ids, -1), "probabilities": (tf.nn.softmax(word_logits), 0.0),
                    "word_starts": (char_starts, -1), "word_ends": (char_ends, -1)}
        result = {name: words.with_flat_values(v).to_tensor(pad)
                  for name, (v, pad) in per_word.items()}
        result.update(self._entities(tag_ids, words, text, char_starts, char_ends,
                                     byte_starts, byte_ends))
        return result

    def module(self):
        """(root module, signatures) for `write_saved_model`."""
        functions = {"serving_default": tf.function(self.serve_ids, autograph=False, input_signature=[
            _ids("input_ids"), _ids("input_mask"), _ids("segment_ids")])}
        resources = {}
        if self.preprocessor is None:
            text_optional.note_no_tokenizer_file()
        else:
            functions["serve_text"] = tf.function(self.serve_text, autograph=False,
                                                  input_signature=[_strings("text")])
            resources.update(self.preprocessor.resources)
        root = serving_root(functions, resources)
        return root, {name: getattr(root, name) for name in functions}


def export_token_classifier(model, export_dir, max_seq_length: int, doc_stride: int,
                            label_names, spm_model_file=None, vocab_file=None,
                            do_lower_case: bool = True, version: int | None = None,
                            extras: dict | None = None) -> str:
    """Writes `<export_dir>/<version>/` (one past the highest numeric folder by default), with
    `extras` (its TFLite files) published together; returns its path."""
    serving = TokenServing(model, max_seq_length, doc_stride, label_names, spm_model_file,
                           vocab_file, do_lower_case)
    root, signatures = serving.module()
    path = write_saved_model(root, export_dir, signatures, version, extras=extras)
    logging.info("exported SavedModel to %s", path)
    return path


def tflite_call(model):
    """What the TFLite files compute: the three id inputs → the model's outputs."""
    def call(input_word_ids, input_mask, input_type_ids):
        return model({"input_ids": input_word_ids, "input_mask": input_mask,
                      "segment_ids": input_type_ids}, training=False)
    return call


def export_head(cls, inputs) -> HeadExport:
    """export_saved_model.py's export of a token classifier source
    (`AlbertTokenClassifier.SERVING`): run_ner.py's export (`serving_default` on ids, `serve_text`
    on raw text → tags per word), windows of `--max_seq_length` pieces half a window apart, as
    run_ner.py's default stride (an output_dir does not record its run's window: the same
    `--max_seq_length` gives run_ner's own windows). Tags are the source's names (labels.json,
    HF `id2label`), else LABEL_<i> as HF names them."""
    source = inputs.source
    model = inputs.load(cls(inputs.config, source.num_labels))
    labels = text_labels(source, model.num_labels) or placeholders(model.num_labels)
    length = inputs.max_seq_length
    serving = TokenServing(model, length, window_stride(None, length), labels,
                           inputs.spm_model_file, inputs.vocab_file, inputs.do_lower_case)
    root, signatures = serving.module()

    def check():  # (inputs, the Keras model's outputs) for the fresh-process comparison
        ids, mask, types_, _ = reference.sample_inputs(inputs.config, length=min(16, length))
        calls = {"serving_default": {"input_ids": ids, "input_mask": mask, "segment_ids": types_}}
        expected = {"serving_default": numpy_outputs(serving.serve_ids(
            *(tf.constant(v) for v in (ids, mask, types_))))}
        if "serve_text" in signatures:
            text = np.array(["John lives in Berlin .", "ALBERT shares its layers"])
            calls["serve_text"] = {"text": text}
            expected["serve_text"] = numpy_outputs(serving.serve_text(tf.constant(text)))
        return calls, expected

    return HeadExport("token_classifier", root, signatures, check, model, {"label_names": labels})
