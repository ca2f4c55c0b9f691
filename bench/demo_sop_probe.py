"""Is there a sentence-order cue in the demo's records that carries over to held-out documents?
A logistic regression (scikit-learn) on simple features of each pair's two segments, fitted on
records/train.tfrecord and scored on records/heldout.tfrecord of a demo folder, beside the
held-out majority class and the bar 2 standard errors above it (the closing table's).

    python bench/demo_sop_probe.py --demo_dir=albert_demo [--features=first,bag,bag+first+len]

Features: `first` the first two pieces of A and of B, `bag` the set of pieces in A and, apart,
in B, `len` both segments' lengths. The masked positions are restored from the records' labels,
so the probe sees the text the model learns from. A fit far above the majority on the training
pairs but not on held-out ones is memorized order, not a learned cue.
"""

from __future__ import annotations

import argparse
import math
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import scipy.sparse as sparse  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402


def read_pairs(path: str) -> list[tuple[list, list, int]]:
    """(A piece ids, B piece ids, sentence-order label) of each record, masks undone."""
    pairs = []
    for record in tf.data.TFRecordDataset(path):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        ids = list(feature["input_ids"].int64_list.value)
        segments = list(feature["segment_ids"].int64_list.value)
        mask = list(feature["input_mask"].int64_list.value)
        for position, label, weight in zip(feature["masked_lm_positions"].int64_list.value,
                                           feature["masked_lm_ids"].int64_list.value,
                                           feature["masked_lm_weights"].float_list.value):
            if weight > 0:
                ids[position] = label
        length = sum(mask)
        len_a = sum(1 for s, m in zip(segments, mask) if s == 0 and m) - 2  # [CLS], [SEP]
        pairs.append((ids[1:1 + len_a], ids[len_a + 2:length - 1],
                      feature["next_sentence_labels"].int64_list.value[0]))
    return pairs


def features(pairs, kinds: set, vocab: int):
    rows, cols = [], []
    for i, (a, b, _) in enumerate(pairs):
        columns = []
        if "bag" in kinds:
            columns += sorted(set(a)) + [vocab + t for t in sorted(set(b))]
        if "first" in kinds:
            columns += [2 * vocab + t for t in a[:2]] + [4 * vocab + t for t in b[:2]]
        if "len" in kinds:
            columns += [6 * vocab + min(len(a), 127), 6 * vocab + 128 + min(len(b), 127)]
        rows += [i] * len(columns)
        cols += columns
    matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                               shape=(len(pairs), 6 * vocab + 256))
    return matrix, np.array([label for *_, label in pairs])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo_dir", default="albert_demo")
    parser.add_argument("--features", default="first,bag,bag+first+len")
    parser.add_argument("--C", type=float, default=0.1, help="inverse regularization strength")
    args = parser.parse_args()
    records = os.path.join(args.demo_dir, "records")
    train = read_pairs(os.path.join(records, "train.tfrecord"))
    heldout = read_pairs(os.path.join(records, "heldout.tfrecord"))
    vocab = 1 + max(t for a, b, _ in train + heldout for t in a + b)
    share = sum(label for *_, label in heldout) / len(heldout)
    majority = max(share, 1 - share)
    bar = majority + 2 * math.sqrt(majority * (1 - majority) / len(heldout))
    print(f"{len(train)} training pairs, {len(heldout)} held out: majority class "
          f"{majority:.3f}, +2 SE {bar:.3f}")
    for kinds in args.features.split(","):
        x_train, y_train = features(train, set(kinds.split("+")), vocab)
        x_heldout, y_heldout = features(heldout, set(kinds.split("+")), vocab)
        model = LogisticRegression(C=args.C, max_iter=2000).fit(x_train, y_train)
        print(f"{kinds:<16} train {model.score(x_train, y_train):.3f}  held-out "
              f"{model.score(x_heldout, y_heldout):.3f}")


if __name__ == "__main__":
    main()
