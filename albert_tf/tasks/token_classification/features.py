"""Sentences → fixed-length windows of pieces, a keyed TFRecord cache, tf.data input.

Each word is tokenized on its own (SentencePiece models: after `preprocess_text`, as every
ALBERT feature; a word that gives no piece, e.g. an empty CoNLL token, becomes one unknown
piece, so every word has a first piece). A word's tag is predicted at its first piece.

A sentence of up to `max_seq_length - 2` pieces is one window `[CLS] pieces [SEP]`; a longer one
is split into windows starting every `doc_stride` pieces until one reaches the end (SQuAD's
document windows), so every piece is in a window. A word's first piece may sit in several; its
tag comes from the one where it has the most context, min(pieces before it, pieces after it) in
that window, the earlier window on a tie. Training sees every labelled first piece of every
window. The serving signature (`export.py`) makes the same windows in the graph.

Records: `input_ids`, `input_mask`, `segment_ids`, `label_ids` (a word's tag id at its first
piece, -1 elsewhere and in a test file without tags), `word_ids` (the word's index in its
sentence at its first piece, -1 elsewhere), `is_max_context` (1 at a first piece whose tag this
window gives) [S], and `example_index` (the sentence's index in its file).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.data import feature_cache, schema
from albert_tf.data.feature_cache import file_digest
# The windows of words (one home: tokenization.word_windows), re-exported under their names here.
from albert_tf.tokenization.word_windows import (WordPieces, home_window,  # noqa: F401
                                                 sentence_windows, windows)

CACHE_FORMAT_VERSION = 1
SEQUENCE_KEYS = ("input_ids", "input_mask", "segment_ids", "label_ids", "word_ids",
                 "is_max_context")


def to_example(record: dict) -> tf.train.Example:
    values = {key: schema.int_feature(record[key]) for key in SEQUENCE_KEYS}
    values["example_index"] = schema.int_feature([record["example_index"]])
    return tf.train.Example(features=tf.train.Features(feature=values))


def feature_spec(max_seq_length: int) -> dict:
    spec = {key: tf.io.FixedLenFeature([max_seq_length], tf.int64) for key in SEQUENCE_KEYS}
    spec["example_index"] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def sentence_records(sentences, labels, pieces: WordPieces, max_seq_length: int, stride: int):
    """Every record of `sentences` in order (tags mapped to ids by `labels`)."""
    index = {label: i for i, label in enumerate(labels)}
    for number, sentence in enumerate(sentences):
        label_ids = None if sentence.tags is None else [index[t] for t in sentence.tags]
        yield from sentence_windows(number, [pieces(w) for w in sentence.tokens], label_ids,
                                    max_seq_length, stride, pieces.cls_id, pieces.sep_id)


def record_arrays(records) -> dict:
    """Records as int32 arrays, one row each, as `input_fn_builder` reads them back from their
    file: for sentences held in memory, which need no file."""
    records = list(records)
    arrays = {key: np.array([r[key] for r in records], np.int32) for key in SEQUENCE_KEYS}
    arrays["example_index"] = np.array([r["example_index"] for r in records], np.int32)
    return arrays


def cache_key(split, source_file, max_seq_length, stride, tokenizer, do_lower_case,
              labels) -> dict:
    """What a cached feature file depends on; any change means the cache is stale."""
    return {
        "format_version": CACHE_FORMAT_VERSION, "task": "ner", "split": split,
        "source_sha256": file_digest(source_file), "max_seq_length": int(max_seq_length),
        "doc_stride": int(stride), "do_lower_case": bool(do_lower_case), "labels": list(labels),
        **feature_cache.tokenizer_identity(tokenizer.spm_model_file, tokenizer.vocab_file),
    }


def cached_features(sentences, labels, pieces, max_seq_length, stride, path, key) -> int:
    """Reuses `path` when its recorded key equals `key`, else (re)writes it; the record count."""
    def build(tmp):
        count = 0
        with tf.io.TFRecordWriter(tmp) as writer:
            for record in sentence_records(sentences, labels, pieces, max_seq_length, stride):
                writer.write(to_example(record).SerializeToString())
                count += 1
        return count
    return int(feature_cache.cached(path, key, build)["num_records"])


def input_fn_builder(path, max_seq_length: int, training: bool, shuffle_buffer: int = 1000,
                     seed: int | None = None):
    """batch_size → tf.data.Dataset of int32 record dicts (training: repeated, shuffled, whole
    batches only)."""
    spec = feature_spec(max_seq_length)

    def input_fn(batch_size: int) -> tf.data.Dataset:
        dataset = tf.data.TFRecordDataset(path)
        if training:
            dataset = dataset.repeat().shuffle(shuffle_buffer, seed=seed)
        dataset = dataset.map(lambda record: schema.decode(record, spec),
                              num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(batch_size, drop_remainder=training).prefetch(tf.data.AUTOTUNE)
    return input_fn
