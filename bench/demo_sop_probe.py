"""Is there a sentence-order cue in the demo's records that carries over to held-out documents?
A logistic regression (scikit-learn) on simple features of each pair's two segments, fitted on
records/train.tfrecord and scored on records/heldout.tfrecord of a demo folder, beside the
held-out majority class and the bar 2 standard errors above it (the closing table's).

    python bench/demo_sop_probe.py --demo_dir=albert_demo [--features=first,bag,bag+first+len,ends-+len]
    python bench/demo_sop_probe.py --demo_dir=albert_demo --checkpoint=albert_demo/pretrain/model

Features: `first` the first two pieces of A and of B, `bag` the set of pieces in A and, apart,
in B, `len` both segments' lengths, `ends-` the first three and last two pieces of B minus
those of A (one weight a piece and place: a swap flips the sign, as it flips the label). The
masked positions are restored from the records' labels, so the probe sees the text the model
learns from. A fit far above the majority on the training pairs but not on held-out ones is
memorized order, not a learned cue.

Each held-out score is also split: the pairs whose two segments come from one document (in
order or swapped) and those whose B is another document's text (label 1 whatever the order),
found by looking up each segment's first six pieces in the documents of corpus/heldout.txt.
`--checkpoint` (a pretraining checkpoint or its folder, with its albert_config.json) splits the
pretrained model's held-out answers the same way.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import scipy.sparse as sparse  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf import tokenization  # noqa: E402
from albert_tf.config import AlbertConfig  # noqa: E402
from albert_tf.data.pretraining_dataset import dataset_fn  # noqa: E402
from albert_tf.demo import corpus  # noqa: E402
from albert_tf.models import AlbertPretrainer  # noqa: E402
from albert_tf.weights import loading  # noqa: E402


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
    rows, cols, vals = [], [], []
    for i, (a, b, _) in enumerate(pairs):
        row = {}

        def add(column, value=1.0):
            row[column] = row.get(column, 0.0) + value

        if "bag" in kinds:
            for t in set(a):
                add(t)
            for t in set(b):
                add(vocab + t)
        if "first" in kinds:
            for place, t in enumerate(a[:2]):
                add((2 + place) * vocab + t)
            for place, t in enumerate(b[:2]):
                add((4 + place) * vocab + t)
        if "len" in kinds:
            add(6 * vocab + min(len(a), 127))
            add(6 * vocab + 128 + min(len(b), 127))
        if "ends-" in kinds:  # B's pieces at each end minus A's
            for segment, sign in ((a, -1.0), (b, 1.0)):
                for place, t in list(enumerate(segment[:3])) + list(enumerate(segment[-2:], 3)):
                    add(6 * vocab + 256 + place * vocab + t, sign)
        rows += [i] * len(row)
        cols += list(row)
        vals += list(row.values())
    matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(len(pairs), 11 * vocab + 256))
    return matrix, np.array([label for *_, label in pairs])


def pair_kinds(pairs, demo_dir: str) -> np.ndarray:
    """True where a pair's segments come from one held-out document, False where B is another
    document's text: each segment's first six pieces looked up in corpus/heldout.txt."""
    spm = os.path.join(demo_dir, "spm", "spm")
    tokenizer = tokenization.FullTokenizer(vocab_file=spm + ".vocab", do_lower_case=True,
                                           spm_model_file=spm + ".model")
    streams = [" " + " ".join(str(t) for sentence in document for t in
                              tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence.lower())))
               + " " for document in corpus.read_documents(
                   os.path.join(demo_dir, "corpus", "heldout.txt"))]

    def homes(segment):
        key = " " + " ".join(str(t) for t in segment[:6]) + " "
        return {i for i, stream in enumerate(streams) if key in stream}

    return np.array([bool(homes(a) & homes(b)) or not (homes(a) and homes(b))
                     for a, b, _ in pairs])


def model_answers(checkpoint: str, path: str, count: int) -> np.ndarray:
    """The pretrained model's sentence-order answers on the first `count` records of `path`."""
    folder = checkpoint if os.path.isdir(checkpoint) else os.path.dirname(checkpoint)
    model = AlbertPretrainer(AlbertConfig.from_json_file(os.path.join(folder, "albert_config.json")))
    loading.load(model, checkpoint, require_head=True)
    first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(path))).numpy())
    lengths = first.features.feature
    data = dataset_fn([path], len(lengths["input_ids"].int64_list.value),
                      len(lengths["masked_lm_positions"].int64_list.value), 64, False)
    answers = [np.argmax(model(batch, training=False)["sentence_order_logits"], -1)
               for batch in data(tf.distribute.InputContext()).take(count // 64)]
    return np.concatenate(answers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo_dir", default="albert_demo")
    parser.add_argument("--features", default="first,bag,bag+first+len,ends-+len")
    parser.add_argument("--C", type=float, default=0.1, help="inverse regularization strength")
    parser.add_argument("--checkpoint", default="", help="also split this pretrained model's answers")
    args = parser.parse_args()
    records = os.path.join(args.demo_dir, "records")
    train = read_pairs(os.path.join(records, "train.tfrecord"))
    heldout = read_pairs(os.path.join(records, "heldout.tfrecord"))
    heldout = heldout[:len(heldout) // 64 * 64]  # the pairs the demo scores: whole batches
    vocab = 1 + max(t for a, b, _ in train + heldout for t in a + b)
    share = sum(label for *_, label in heldout) / len(heldout)
    majority = max(share, 1 - share)
    bar = majority + 2 * math.sqrt(majority * (1 - majority) / len(heldout))
    print(f"{len(train)} training pairs, {len(heldout)} held out: majority class "
          f"{majority:.3f}, +2 SE {bar:.3f}")
    same = pair_kinds(heldout, args.demo_dir)
    labels = np.array([label for *_, label in heldout])
    print(f"held out: {same.sum()} pairs from one document ({labels[same].mean():.3f} swapped), "
          f"{(~same).sum()} with another document's B (label 1)")
    if args.checkpoint:
        answers = model_answers(args.checkpoint, os.path.join(records, "heldout.tfrecord"),
                                len(heldout))
        right = answers == labels
        print(f"{'the model':<16} held-out {right.mean():.3f} (one document's pairs "
              f"{right[same].mean():.3f}, another's {right[~same].mean():.3f}; "
              f"answers 'swapped' to {answers.mean():.3f})")
    for kinds in args.features.split(","):
        x_train, y_train = features(train, set(kinds.split("+")), vocab)
        x_heldout, y_heldout = features(heldout, set(kinds.split("+")), vocab)
        model = LogisticRegression(C=args.C, max_iter=2000).fit(x_train, y_train)
        right = model.predict(x_heldout) == y_heldout
        print(f"{kinds:<16} train {model.score(x_train, y_train):.3f}  held-out "
              f"{right.mean():.3f} (one document's pairs {right[same].mean():.3f}, "
              f"another's {right[~same].mean():.3f})")


if __name__ == "__main__":
    main()
