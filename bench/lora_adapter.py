"""The LoRA adapter a run ships (`lora_adapter`, float16) against its float32 checkpoint
(docs/compression.md): the file's size on ALBERT-base's shapes, and, given a LoRA run's folder
and a TSV of texts, the largest change of the probabilities and whether every label stays.

    python bench/lora_adapter.py [--folder=<a LoRA run's output_dir> --texts=dev.tsv
        --text_column=sentence --label_column=label --max_seq_length=64]

The sizes: `preset("albert_base_v2")` and the demo's model, each with a 2-class head and
`models.lora.enable_lora(model, 8)` (the word table's rank-1 adapter; then without it), the
adapter file as a run writes it
(`weights.lora_adapter.write_adapter`) beside the float32 `tf.train.Checkpoint` of the same
weights. The folder is copied (model files, lora.json, the checkpoint it serves) to a temporary
one, where the adapter is written (`weights.lora_base.keep_adapter`): the folder stays as it is.
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import shutil
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_tf.config import AlbertConfig, preset  # noqa: E402
from albert_tf.demo.stages import DemoOptions, model_config  # noqa: E402
from albert_tf.labels import LabelFile  # noqa: E402
from albert_tf.models import AlbertClassifier  # noqa: E402
from albert_tf.models.lora import enable_lora, trained_part  # noqa: E402
from albert_tf.tasks.classification.text_classifier import TextClassifier  # noqa: E402
from albert_tf.weights.loading import load  # noqa: E402
from albert_tf.weights.lora_adapter import ADAPTER_NAME, write_adapter  # noqa: E402
from albert_tf.weights.lora_base import keep_adapter  # noqa: E402
from albert_tf.weights.model_folder import find_checkpoint  # noqa: E402


def _size(prefix) -> int:
    return sum(os.path.getsize(path) for path in glob.glob(f"{prefix}.*"))


def sizes(work: str) -> None:
    demo = DemoOptions()
    for name, config in (("albert_base_v2", preset("albert_base_v2")),
                         ("demo", model_config(demo, demo.vocab_size))):
        for word_rank in (1, 0):
            model = AlbertClassifier(config, 2)
            enable_lora(model, 8, word_rank)
            entry = write_adapter(model, os.path.join(work, f"{name}{word_rank}"), 0)
            full = tf.train.Checkpoint(model=trained_part(model)).write(
                os.path.join(work, f"{name}{word_rank}_fp32"))
            print(f"{name} rank=8 word_rank={word_rank} numbers={entry['numbers']} "
                  f"float16_bytes={entry['bytes']} float32_checkpoint_bytes={_size(full)}")


def _copy(folder: str, work: str) -> str:
    copy = os.path.join(work, "folder")
    os.makedirs(copy)
    served = os.path.basename(find_checkpoint(folder))
    for name in os.listdir(folder):
        if name.endswith((".json", ".model", ".txt")) or name.startswith(served + "."):
            shutil.copy(os.path.join(folder, name), copy)
    return copy


def compare(args, work: str) -> None:
    copy = _copy(args.folder, work)
    config = AlbertConfig.from_json_file(os.path.join(copy, "albert_config.json"))
    model = AlbertClassifier(config, len(LabelFile.read(copy).names))
    entry = keep_adapter(copy, lambda prefix: load(model, prefix) and model)
    with open(args.texts, encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file, delimiter="\t", quoting=csv.QUOTE_NONE))
    texts = [row[args.text_column] for row in rows]
    gold = [row[args.label_column] for row in rows] if args.label_column else None
    results = {}
    for name, path in (("float32", copy), ("float16", os.path.join(copy, ADAPTER_NAME))):
        clf = TextClassifier.from_pretrained(path, max_seq_length=args.max_seq_length)
        results[name] = clf.predict(texts, batch_size=64)
    (labels32, probs32), (labels16, probs16) = results["float32"], results["float16"]
    changed = sum(a != b for a, b in zip(labels32, labels16))
    print(f"adapter: {entry['numbers']} numbers, {entry['bytes']} bytes ({entry['dtype']}, "
          f"from {entry['from']} at step {entry['step']})")
    print(f"texts={len(texts)} max_abs_probability_change={np.abs(probs32 - probs16).max():.3g} "
          f"labels_changed={changed}")
    if gold:
        for name, (labels, _) in results.items():
            print(f"{name} accuracy={np.mean([a == b for a, b in zip(labels, gold)]):.4f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", help="a LoRA run's output_dir (a classifier's)")
    parser.add_argument("--texts", help="a TSV of texts with a header row")
    parser.add_argument("--text_column", default="sentence")
    parser.add_argument("--label_column", default="label", help="empty: no accuracy")
    parser.add_argument("--max_seq_length", type=int, default=64)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        sizes(work)
        if args.folder:
            compare(args, work)
    print(f"load_avg={' '.join(f'{x:.1f}' for x in os.getloadavg())} cpus={os.cpu_count()}")


if __name__ == "__main__":
    main()
