"""Held-out sets scored after pretraining (the paper kit's Table 5, the demo): balanced (as many
label-0 as label-1 pairs, so chance is 50 % and a model that always answers one label scores
exactly that), and for SOP, order alone.

In SOP mode the original generator still pairs a one-sentence chunk with a segment of another
document (label 1, as a swap): a few percent of the pairs, more with short sequences. Those are
NSP negatives, which an NSP-trained model gets right, so they would credit it on the SOP task.
The SOP set reads the task as order alone; so the SOP set keeps the pairs whose two segments come
from the same held-out document (in order, or swapped) and drops the others. The generator's
label-1 share is above one half (its random-document pairs add to the swaps or NSP negatives);
each set keeps the first pairs of the smaller label's count of both labels.

A segment's document is found by one of its 8-token runs (its unmasked ids), looked up in the
held-out documents tokenized as the generator tokenizes them.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.io_utils import atomic_output
from albert_tf.pretraining_data.options import PretrainingDataOptions
from albert_tf.pretraining_data.sentence_tokens import SentenceEncoder

RUN = 8  # tokens: long enough that a run is (nearly always) unique to one document


def unmasked(features: dict) -> dict:
    """A pretraining batch with its masked positions holding their original ids again."""
    ids = np.array(features["input_ids"])
    positions = np.asarray(features["masked_lm_positions"])
    labels = np.asarray(features["masked_lm_ids"])
    real = np.asarray(features["masked_lm_weights"]) > 0
    rows = np.nonzero(real)[0]
    ids[rows, positions[real]] = labels[real]
    return {**features, "input_ids": ids}


def segments(features: dict, row: int) -> tuple[list, list]:
    """(A ids, B ids) of one unmasked record: [CLS] A [SEP] B [SEP] then padding."""
    ids, mask = features["input_ids"][row], features["input_mask"][row]
    length = int(mask.sum())
    len_a = int(((features["segment_ids"][row] == 0) & (mask == 1)).sum()) - 2
    return list(ids[1:1 + len_a]), list(ids[len_a + 2:length - 1])


def _key(segment: list) -> tuple:
    return tuple(int(i) for i in segment[:RUN])


def documents_of(keys: set, documents, options: PretrainingDataOptions) -> dict:
    """{key: set of document indices} for the wanted id runs, the documents tokenized as the
    generator does (its preprocessing and `SentenceEncoder`)."""
    encoder = SentenceEncoder(options.make_tokenizer())
    lengths = sorted({len(k) for k in keys})
    found = {k: set() for k in keys}
    for index, lines in enumerate(documents):
        sentences = encoder.encode([options.preprocess(line) for line in lines])
        ids = [code >> 1 for sentence in sentences for code in sentence]
        for n in lengths:
            for start in range(len(ids) - n + 1):
                run = tuple(ids[start:start + n])
                if run in found:
                    found[run].add(index)
    return found


def read_pairs(source: str, options: PretrainingDataOptions, limit: int):
    """(serialized record, label, A ids, B ids) of `source`'s first `limit` records."""
    spec = schema.pretraining_features(options.max_seq_length, options.max_predictions_per_seq)
    raw = tf.data.TFRecordDataset(source).take(limit)
    for serialized, batch in tf.data.Dataset.zip(
            (raw, raw.map(lambda r: schema.decode(r, spec)))).batch(256):
        batch = unmasked({k: v.numpy() for k, v in batch.items()})
        for row, record in enumerate(serialized.numpy()):
            yield (record, int(batch["next_sentence_labels"][row][0]), *segments(batch, row))


def balanced_count(count_0: int, count_1: int, max_examples: int, multiple: int) -> int:
    """Pairs of each label to keep: as many as the smaller label has, at most max_examples / 2
    in all, and (when there are that many) a multiple of `multiple` in all, so batches of that
    size read the whole set once."""
    each = min(count_0, count_1, max_examples // 2)
    if 2 * each >= multiple:
        each -= each % (multiple // 2) if multiple % 2 == 0 else 0
    return each


def heldout_records(source: str, output: str, options: PretrainingDataOptions, max_examples: int,
                    multiple: int = 1, documents=None) -> dict:
    """Writes the held-out set made of `source`'s records to `output`: without random-document
    pairs when `documents` (the held-out documents) are given (SOP), balanced, at most
    `max_examples` (see `balanced_count`). Returns the counts."""
    pairs = list(read_pairs(source, options, 4 * max_examples))
    dropped = 0
    if documents is not None:
        keys = {_key(seg) for _, label, a, b in pairs if label == 1 for seg in (a, b)}
        where = documents_of(keys, documents, options)
        kept = [p for p in pairs if p[1] == 0 or where[_key(p[2])] & where[_key(p[3])]]
        dropped, pairs = len(pairs) - len(kept), kept
    by_label = {0: [i for i, p in enumerate(pairs) if p[1] == 0],
                1: [i for i, p in enumerate(pairs) if p[1] == 1]}
    each = balanced_count(len(by_label[0]), len(by_label[1]), max_examples, multiple)
    chosen = sorted(by_label[0][:each] + by_label[1][:each])  # the file's order
    with atomic_output(output) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for index in chosen:
            writer.write(pairs[index][0])
    return {"read": len(pairs) + dropped, "random_document_pairs_dropped": dropped,
            "label_1_share_before_balancing": (len(by_label[1]) / len(pairs)) if pairs else 0.0,
            "kept": len(chosen)}
