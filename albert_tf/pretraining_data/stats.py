"""Statistics of pretraining records for the run summary.

`instance_observations` is the one definition of what is measured per record: the summary
(`RecordStatistics`) uses it, and so do the tests that compare generators' TFRecord files.
"""

from __future__ import annotations

import collections

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
