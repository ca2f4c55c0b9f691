"""Issue 51's acceptance figures on a pretrained model (the demo's: `python -m albert_tf.demo`
writes albert_demo/pretrain/model and albert_demo/corpus/heldout.txt).

    python bench/fill_mask_and_embeddings.py --pretrained=albert_demo/pretrain/model \
        --heldout=albert_demo/corpus/heldout.txt --stsb=../shared/data/glue/STS-B \
        --output_dir=/tmp/issue51 [--epochs=1] [--train_batch_size=32]

Fill-mask: 50 held-out sentences, each with one word masked (the first word from the third on
that the whole sentence tokenizes as one piece), go through `FillMask.predict`, the command
`python -m albert_tf.fill_mask` (a new process) and the `fill_mask` signature of
export_saved_model.py's encoder export; the run counts the sentences whose top-5 ids all three
agree on, and compares top-1 accuracy with `pretraining_metrics`' masked_lm_accuracy (what
run_pretraining.py --do_eval reports) on the same positions.
Embeddings: STS-B dev Spearman x100 of the mean-pooled pretrained model, then of
`run_embeddings.py --embedding_loss=contrastive` trained on STS-B train's pairs scored >= 2.5
(in-batch negatives, temperature 0.05) for --epochs. Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

for _name, _value in (("TF_CPP_MIN_LOG_LEVEL", "3"), ("KERAS_BACKEND", "tensorflow")):
    os.environ.setdefault(_name, _value)
REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from absl import app, flags, logging  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_tf.source_export import export_source  # noqa: E402
from albert_tf.tasks.embeddings import EmbeddingsRunConfig, TextEncoder, run_embeddings  # noqa: E402
from albert_tf.tasks.embeddings.pairs import read_pairs  # noqa: E402
from albert_tf.tasks.fill_mask import FillMask  # noqa: E402
from albert_tf.tasks.pretraining.objective import pretraining_metrics  # noqa: E402

flags.DEFINE_string("pretrained", None, "A pretraining output_dir (the demo's pretrain/model).")
flags.DEFINE_string("heldout", None, "Held-out text, one sentence a line (the demo's heldout.txt).")
flags.DEFINE_string("stsb", None, "GLUE's STS-B folder (train.tsv, dev.tsv).")
flags.DEFINE_string("output_dir", None, "A new folder for the export and the trained model.")
flags.DEFINE_integer("epochs", 1, "Contrastive training epochs on STS-B train.")
flags.DEFINE_integer("train_batch_size", 32, "Pairs per batch (in-batch negatives).")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
FLAGS = flags.FLAGS


def masked_sentences(fill, path, count=50):
    lines = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
    return fill.single_word_masks((line.split() for line in lines
                                   if len(line.split()) >= 6 and "[MASK]" not in line), count)


def fill_mask_figures(out):
    fill = FillMask.from_pretrained(FLAGS.pretrained)
    rows = masked_sentences(fill, FLAGS.heldout)
    texts = [t for t, _, _ in rows]
    python_top = [[r["token"] for r in masks[0]] for masks in fill.predict(texts, top_k=5)]
    done = subprocess.run([sys.executable, "-m", "albert_tf.fill_mask",
                           f"--init_checkpoint={FLAGS.pretrained}", "--top_k=5", *texts],
                          capture_output=True, text=True, cwd=REPO, check=True)
    cli_top = [[r["token"] for r in json.loads(line)["masks"][0]]
               for line in done.stdout.splitlines()]
    export = export_source(FLAGS.pretrained, os.path.join(out, "exports"))
    served = tf.saved_model.load(export["encoder"]).signatures["fill_mask"]
    saved_top = served(text=tf.constant(texts), top_k=tf.constant(5))["ids"].numpy()[:, 0]
    agree = sum(a == b == c.tolist() for a, b, c in zip(python_top, cli_top, saved_top))
    labels = [label for _, _, label in rows]
    width = max(len(ids) for _, ids, _ in rows)
    features = {
        "input_ids": np.array([ids + [0] * (width - len(ids)) for _, ids, _ in rows], np.int32),
        "input_mask": np.array([[1] * len(ids) + [0] * (width - len(ids)) for _, ids, _ in rows],
                               np.int32),
        "masked_lm_positions": np.array([[ids.index(fill.tokenizer.mask_id)] for _, ids, _ in rows],
                                        np.int32),
        "masked_lm_ids": np.array(labels, np.int32)[:, None],
        "masked_lm_weights": np.ones((len(rows), 1), np.float32),
        "next_sentence_labels": np.zeros((len(rows), 1), np.int32)}
    features["segment_ids"] = 0 * features["input_ids"]
    correct, total = (float(v) for v in pretraining_metrics(
        fill.model(features, training=False), features)["masked_lm_accuracy"])
    top1 = sum(top[0] == label for top, label in zip(python_top, labels))
    return {"sentences": len(rows), "top5_agree_class_cli_savedmodel": agree,
            "fill_mask_top1_correct": int(top1), "masked_lm_accuracy_correct": int(correct),
            "masked_lm_accuracy_total": int(total)}


def embedding_figures(out):
    dev = read_pairs(os.path.join(FLAGS.stsb, "dev.tsv"))
    start = time.perf_counter()
    before = TextEncoder.from_pretrained(FLAGS.pretrained).evaluate(dev.texts_a, dev.texts_b,
                                                                    dev.scores)
    result = run_embeddings(EmbeddingsRunConfig(
        init_checkpoint=FLAGS.pretrained, output_dir=os.path.join(out, "embedder"),
        train_file=os.path.join(FLAGS.stsb, "train.tsv"),
        dev_file=os.path.join(FLAGS.stsb, "dev.tsv"), do_train=True, do_eval=True,
        num_train_epochs=FLAGS.epochs, train_batch_size=FLAGS.train_batch_size,
        learning_rate=FLAGS.learning_rate))
    return {"stsb_dev_spearman_pretrained_mean_pooled": round(before["spearman"], 2),
            "stsb_dev_spearman_contrastive": round(result["eval_spearman"], 2),
            "gain": round(result["eval_spearman"] - before["spearman"], 2),
            "train_pairs": result["train_pairs"], "train_steps": result["train_steps"],
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)
    os.makedirs(FLAGS.output_dir, exist_ok=False)
    print(json.dumps({"fill_mask": fill_mask_figures(FLAGS.output_dir),
                      "embeddings": embedding_figures(FLAGS.output_dir)}, indent=2))


if __name__ == "__main__":
    flags.mark_flags_as_required(["pretrained", "heldout", "stsb", "output_dir"])
    app.run(main)
