"""Statistics of pretraining TFRecord files, for tests that compare two generators.

Records of one document are not independent (they share the document's text and its per-pass
target length), so comparisons cluster records by source document (`DocumentMatcher`).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from albert_tf.pretraining_data.stats import OBSERVED, RecordStatistics, instance_observations


@dataclasses.dataclass
class ParsedRecords:
    """Pretraining records as arrays (unpadded lists per record)."""

    input_ids: list
    len_a: list
    masked_lm_positions: list
    masked_lm_ids: list
    labels: list

    def __len__(self):
        return len(self.input_ids)

    def observations(self, mask_id: int) -> list[dict[str, list[int]]]:
        return [instance_observations(ids, la, pos, lab, label, mask_id) for ids, la, pos, lab, label
                in zip(self.input_ids, self.len_a, self.masked_lm_positions, self.masked_lm_ids, self.labels)]

    def statistics(self, mask_id: int) -> RecordStatistics:
        stats = RecordStatistics()
        for ids, la, pos, lab, label in zip(self.input_ids, self.len_a, self.masked_lm_positions,
                                            self.masked_lm_ids, self.labels):
            stats.add(ids, la, pos, lab, label, mask_id)
        return stats


def read_tfrecords(paths, max_seq_length: int, max_predictions_per_seq: int) -> ParsedRecords:
    """Parses pretraining TFRecord files with the training input pipeline's spec (`schema`)."""
    import tensorflow as tf

    return parse_records(tf.data.TFRecordDataset(list(paths)), max_seq_length, max_predictions_per_seq)


def parse_records(records, max_seq_length: int, max_predictions_per_seq: int) -> ParsedRecords:
    """Parses serialized pretraining Examples (a tf.data dataset of strings, or a list of bytes)."""
    import tensorflow as tf

    from albert_tf.data import schema

    if not isinstance(records, tf.data.Dataset):
        records = tf.data.Dataset.from_tensor_slices(tf.constant(list(records), dtype=tf.string))
    spec = schema.pretraining_features(max_seq_length, max_predictions_per_seq)
    parsed = ParsedRecords([], [], [], [], [])
    for batch in records.batch(1024).map(lambda x: tf.io.parse_example(x, spec)).as_numpy_iterator():
        lengths = batch["input_mask"].sum(axis=1)
        # segment 0 covers [CLS] A [SEP] and the padding
        len_a = (batch["segment_ids"] == 0).sum(axis=1) - (max_seq_length - lengths) - 2
        masked = batch["masked_lm_weights"].sum(axis=1).astype(np.int64)
        for k in range(len(lengths)):
            n, m = int(lengths[k]), int(masked[k])
            parsed.input_ids.append(batch["input_ids"][k, :n].tolist())
            parsed.len_a.append(int(len_a[k]))
            parsed.masked_lm_positions.append(batch["masked_lm_positions"][k, :m].tolist())
            parsed.masked_lm_ids.append(batch["masked_lm_ids"][k, :m].tolist())
            parsed.labels.append(int(batch["next_sentence_labels"][k, 0]))
    return parsed


class DocumentMatcher:
    """Finds the source document of a record from the unmasked k-grams of its segment A.

    Segment A always comes from the record's own document (B may come from a random one). Text
    shared by several documents votes for each of them; the most voted (then lowest) wins.
    """

    def __init__(self, corpus_ids: list[list[int]], k: int = 4):
        self.k = k
        index: dict = {}
        for doc, ids in enumerate(corpus_ids):
            for j in range(len(ids) - k + 1):
                docs = index.setdefault(tuple(ids[j:j + k]), [])
                if not docs or docs[-1] != doc:
                    docs.append(doc)
        self._index = index

    def match(self, input_ids, len_a: int, positions) -> int:
        """Document index, or -1 when no k-gram of A survives masking."""
        masked = set(positions)
        votes: collections.Counter = collections.Counter()
        run: list = []
        for position in range(1, len_a + 1):
            if position in masked:
                run = []
                continue
            run.append(input_ids[position])
            if len(run) >= self.k:
                votes.update(self._index.get(tuple(run[-self.k:]), ()))
        if not votes:
            return -1
        best = max(votes.values())
        return min(doc for doc, count in votes.items() if count == best)

    def clusters(self, records: ParsedRecords) -> np.ndarray:
        """Cluster id per record: its document, or a cluster of its own when unmatched."""
        ids = np.array([self.match(r, la, p) for r, la, p in
                        zip(records.input_ids, records.len_a, records.masked_lm_positions)])
        unmatched = ids < 0
        ids[unmatched] = ids.max(initial=0) + 1 + np.arange(unmatched.sum())
        return ids


def compare(records_a: ParsedRecords, records_b: ParsedRecords, mask_id: int,
            matcher: DocumentMatcher | None = None) -> dict:
    """Two-sample test per statistic (name → `two_sample.TestResult`), clustered by document
    when a `matcher` is given (else every record is its own cluster)."""
    from support import two_sample

    def clusters(records):
        return matcher.clusters(records) if matcher else np.arange(len(records))

    obs_a, obs_b = records_a.observations(mask_id), records_b.observations(mask_id)
    clusters_a, clusters_b = clusters(records_a), clusters(records_b)
    return {name: two_sample.homogeneity([o[name] for o in obs_a], clusters_a,
                                         [o[name] for o in obs_b], clusters_b)
            for name in OBSERVED}
