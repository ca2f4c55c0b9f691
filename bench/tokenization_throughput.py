"""Tokenization throughput: the Python tokenizer against the in-graph AlbertPreprocessor.

    python bench/tokenization_throughput.py [--corpus=...] [--max_sentences=20000]

Both paths tokenize the same real sentences (default: the Brown corpus, one sentence a line, from
../shared/data/pretrain) the way the original callers do, `preprocess_text(lower=True)` then
SentencePiece with the digit-comma fix-up, and the run prints sentences/s for each, the ratio
in-graph/Python measured in this run, and how many sentences got different ids.
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from albert_tf import tokenization  # noqa: E402
from albert_tf.text import AlbertPreprocessor  # noqa: E402
from timing import best_of  # noqa: E402  (bench/, beside this file)

REPO = pathlib.Path(__file__).resolve().parents[1]
# ../shared beside the repository (a git worktree sits deeper, so the nearest ancestor's).
SHARED = pathlib.Path(os.environ.get("ALBERT_TF_SHARED") or next(
    (p / "shared" for p in REPO.parents if (p / "shared").is_dir()), REPO.parent / "shared"))

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus", str(SHARED / "data" / "pretrain" / "misc" / "brown_untagged.txt"),
                    "Text file, one sentence per line.")
flags.DEFINE_string("spm_model_file", str(SHARED / "fixtures" / "original" / "spm" / "spm.model"),
                    "SentencePiece model.")
flags.DEFINE_integer("max_sentences", 20000, "Sentences used (0: all).")
flags.DEFINE_integer("batch_size", 256, "In-graph batch size.")
flags.DEFINE_integer("max_seq_length", 128, "Packing length for the full-layer measurement.")
flags.DEFINE_integer("repeats", 3, "Timed passes per path; the best is reported.")


def read_sentences(path: str, limit: int) -> list[str]:
    with open(path, "rb") as handle:
        lines = [line.decode("utf-8", "ignore").strip() for line in handle]
    lines = [line for line in lines if line]
    return lines[:limit] if limit else lines


def main(argv) -> None:
    del argv
    sentences = read_sentences(FLAGS.corpus, FLAGS.max_sentences)
    count = len(sentences)
    tokenizer = tokenization.FullTokenizer(None, True, FLAGS.spm_model_file)

    def python_ids():
        return [tokenizer.convert_tokens_to_ids(
            tokenizer.tokenize(tokenization.preprocess_text(s, lower=True))) for s in sentences]

    layer = AlbertPreprocessor(FLAGS.spm_model_file, FLAGS.max_seq_length, do_lower_case=True)
    tokenize = tf.function(layer.tokenize,
                           input_signature=[tf.TensorSpec([None], tf.string)])
    batches = [tf.constant(sentences[i:i + FLAGS.batch_size])
               for i in range(0, count, FLAGS.batch_size)]

    def graph_ids():
        return [tokenize(batch) for batch in batches]

    dataset = tf.data.Dataset.from_tensor_slices(sentences).batch(FLAGS.batch_size).map(
        layer, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    def graph_packed():
        for _ in dataset:
            pass

    want = python_ids()
    got = [ids for batch in graph_ids() for ids in batch.to_list()]
    differing = sum(a != b for a, b in zip(want, got))
    graph_packed()  # warm-up / tracing

    python_s = best_of(python_ids, FLAGS.repeats)
    graph_s = best_of(graph_ids, FLAGS.repeats)
    packed_s = best_of(graph_packed, FLAGS.repeats)
    print(f"corpus {FLAGS.corpus} ({count} sentences), model {FLAGS.spm_model_file}, "
          f"batch {FLAGS.batch_size}, {os.cpu_count()} CPUs")
    print(f"python  FullTokenizer (preprocess+tokenize+ids): {count / python_s:10.0f} sentences/s")
    print(f"graph   AlbertPreprocessor.tokenize (ragged ids): {count / graph_s:10.0f} sentences/s")
    print(f"graph   tf.data map(AlbertPreprocessor) packed S={FLAGS.max_seq_length}: "
          f"{count / packed_s:10.0f} sentences/s")
    print(f"ratio in-graph/python: tokenize {python_s / graph_s:.2f}x, "
          f"tf.data packed {python_s / packed_s:.2f}x")
    print(f"sentences whose ids differ between the paths: {differing} of {count}")


if __name__ == "__main__":
    app.run(main)
