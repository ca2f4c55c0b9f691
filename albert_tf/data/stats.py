"""Statistics of pretraining records, the same for generated instances and for TFRecord files.

`instance_observations` is the one definition of what is measured per record; the run summary
(`RecordStatistics`) and the comparison of two TFRecord files (`two_sample`) both use it.
Records of one document are not independent (they share the document's text and its per-pass
target length), so comparisons cluster records by source document (`DocumentMatcher`).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

REPLACEMENTS = ("mask", "random", "kept")
OBSERVED = ("masked_per_instance", "masked_run_lengths", "replacements", "sentence_order_labels",
            "segment_a_lengths", "segment_b_lengths")


def instance_observations(input_ids, len_a: int, positions, label_ids, label: int,
                          mask_id: int) -> dict[str, list[int]]:
    """What one record contributes to each statistic.

    `input_ids` is unpadded and after masking; `positions`/`label_ids` are the real predictions.
    Replacements are 0 = [MASK], 1 = random token, 2 = kept (a random token equal to the
    original counts as kept, in both generators alike). Masked runs are maximal runs of
    consecutive masked positions.
    """
    runs = []
    replacements = []
    run = 0
    previous = -2
    for position, original in zip(positions, label_ids):
        token = input_ids[position]
        replacements.append(0 if token == mask_id else (2 if token == original else 1))
        if position == previous + 1:
            run += 1
        else:
            if run:
                runs.append(run)
            run = 1
        previous = position
    if run:
        runs.append(run)
    return {
        "masked_per_instance": [len(positions)],
        "masked_run_lengths": runs,
        "replacements": replacements,
        "sentence_order_labels": [label],
        "segment_a_lengths": [len_a],
        "segment_b_lengths": [len(input_ids) - len_a - 3],
    }


class RecordStatistics:
    """Histograms over records, for the run summary (picklable, mergeable)."""

    def __init__(self):
        self.instances = 0
        self.tokens = 0  # real tokens ([CLS] and [SEP] included)
        self.masked = 0
        self._histograms = {name: collections.Counter() for name in OBSERVED}
        self._pending: dict[str, list] = {name: [] for name in OBSERVED}  # counted lazily, in bulk

    def add(self, input_ids, len_a: int, positions, label_ids, label: int, mask_id: int) -> None:
        self.instances += 1
        self.tokens += len(input_ids)
        self.masked += len(positions)
        pending = self._pending
        for name, values in instance_observations(input_ids, len_a, positions, label_ids, label,
                                                  mask_id).items():
            pending[name].extend(values)

    @property
    def histograms(self) -> dict[str, collections.Counter]:
        for name, values in self._pending.items():
            if values:
                self._histograms[name].update(values)
                values.clear()
        return self._histograms

    def merge(self, other: "RecordStatistics") -> None:
        self.instances += other.instances
        self.tokens += other.tokens
        self.masked += other.masked
        mine, theirs = self.histograms, other.histograms
        for name in OBSERVED:
            mine[name].update(theirs[name])

    def __getstate__(self):
        self.histograms  # count the pending values before pickling
        return self.__dict__

    def as_dict(self) -> dict:
        def hist(counter):
            return {str(k): counter[k] for k in sorted(counter)}

        h = self.histograms
        replaced = sum(h["replacements"].values()) or 1
        labels = sum(h["sentence_order_labels"].values()) or 1
        return {
            "instances": self.instances,
            "tokens": self.tokens,
            "masked_tokens": self.masked,
            "masked_fraction": self.masked / self.tokens if self.tokens else 0.0,
            "masked_per_instance": hist(h["masked_per_instance"]),
            "masked_run_length_histogram": hist(h["masked_run_lengths"]),
            "replacement_shares": {k: h["replacements"][i] / replaced for i, k in enumerate(REPLACEMENTS)},
            "sentence_order_labels": hist(h["sentence_order_labels"]),
            "sentence_order_swapped_fraction": h["sentence_order_labels"][1] / labels,
            "segment_a_length_histogram": hist(h["segment_a_lengths"]),
            "segment_b_length_histogram": hist(h["segment_b_lengths"]),
        }


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
    """Parses pretraining TFRecords with the training input pipeline's spec (`schema`)."""
    import tensorflow as tf

    from albert_tf.data import schema

    spec = schema.pretraining_features(max_seq_length, max_predictions_per_seq)
    parsed = ParsedRecords([], [], [], [], [])
    dataset = tf.data.TFRecordDataset(list(paths)).batch(1024).map(lambda x: tf.io.parse_example(x, spec))
    for batch in dataset.as_numpy_iterator():
        lengths = batch["input_mask"].sum(axis=1)
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
    from albert_tf.data import two_sample

    def clusters(records):
        return matcher.clusters(records) if matcher else np.arange(len(records))

    obs_a, obs_b = records_a.observations(mask_id), records_b.observations(mask_id)
    clusters_a, clusters_b = clusters(records_a), clusters(records_b)
    return {name: two_sample.homogeneity([o[name] for o in obs_a], clusters_a,
                                         [o[name] for o in obs_b], clusters_b)
            for name in OBSERVED}
