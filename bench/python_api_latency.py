"""Latency of `TextClassifier.predict` on one text, against the same call on the classifier's
exported SavedModel (`serve_text`), measured in the same run.

    python bench/python_api_latency.py [--repeats=30]

The model has the demo's shape (`albert_tf.demo`: 6 layers, H=128, E=64, 4 heads, I=512,
vocab_size 3000, max_seq_length 64), random pretrained weights and the fixtures' SentencePiece
model (../shared/fixtures), fine-tuned for one epoch on 16 short texts with `fit` (verbose=0).
The run prints the first `predict` (it builds the model, loads the checkpoint and traces the
model), the second, the median of `--repeats` more, the median of as many `serve_text` calls of
the export (interleaved with them, after 3 warm-up calls), and the ratios. Goals: second
predict <= 50 ms and <= 1.5x the SavedModel's call.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import tempfile
import time

for _name, _value in (("TF_CPP_MIN_LOG_LEVEL", "3"), ("KERAS_BACKEND", "tensorflow")):
    os.environ.setdefault(_name, _value)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from absl import app, flags, logging  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_tf import AlbertPretrainer  # noqa: E402
from albert_tf.demo.stages import DemoOptions, model_config  # noqa: E402
from albert_tf.tasks import TextClassifier  # noqa: E402
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint  # noqa: E402

flags.DEFINE_string("spm_model_file", None, "SentencePiece model (at most 3000 pieces: the "
                    "demo's vocab_size); default: ../shared/fixtures/original/spm/spm.model.")
flags.DEFINE_integer("repeats", 30, "Timed calls of each path after the second predict.")
FLAGS = flags.FLAGS


def fixtures_spm() -> str:
    """--spm_model_file, else the fixtures' model in $ALBERT_TF_SHARED or the nearest `shared`
    folder above this file (a git worktree sits deeper)."""
    if FLAGS.spm_model_file:
        return FLAGS.spm_model_file
    here = pathlib.Path(__file__).resolve()
    roots = ([pathlib.Path(os.environ["ALBERT_TF_SHARED"])] if os.environ.get("ALBERT_TF_SHARED")
             else [parent / "shared" for parent in here.parents])
    for root in roots:
        if (root / "fixtures" / "original" / "spm" / "spm.model").exists():
            return str(root / "fixtures" / "original" / "spm" / "spm.model")
    raise app.UsageError("no shared/fixtures/original/spm/spm.model found: pass --spm_model_file")


TEXT = "The battery lasts two days and the screen is bright even in the sun."
TRAIN = [("I loved every minute of it", "positive"), ("A waste of time and money", "negative"),
         ("Great sound and a clear screen", "positive"), ("It broke after a week", "negative"),
         ("The staff were kind and quick", "positive"), ("Cold food and a long wait", "negative"),
         ("Works exactly as described", "positive"), ("Never again, avoid it", "negative")] * 2


def model_folder(folder: pathlib.Path) -> pathlib.Path:
    """A released-style folder of the demo's shape: albert_config.json, a TF1 checkpoint of
    random pretrained weights, the SentencePiece model."""
    options = DemoOptions()
    config = model_config(options, options.vocab_size)
    config.to_json_file(str(folder / "albert_config.json"))
    shutil.copy(fixtures_spm(), folder / "30k-clean.model")
    save_tf1_checkpoint(AlbertPretrainer(config), str(folder / "model.ckpt-best"))
    return folder


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main(argv) -> None:
    del argv
    logging.set_verbosity(logging.WARNING)  # as in a notebook: the library's INFO lines off
    work = pathlib.Path(tempfile.mkdtemp(prefix="python_api_latency_"))
    try:
        (work / "model").mkdir()
        clf = TextClassifier.from_pretrained(
            model_folder(work / "model"), labels=["negative", "positive"],
            max_seq_length=DemoOptions().max_seq_length, output_dir=work / "out", seed=1)
        clf.fit([t for t, _ in TRAIN], [l for _, l in TRAIN], epochs=1, batch_size=8,
                learning_rate=1e-4, verbose=0)
        start = time.perf_counter()
        first = clf.predict([TEXT])
        first_ms = ms(start)
        start = time.perf_counter()
        second = clf.predict([TEXT])
        second_ms = ms(start)
        assert second[0] == first[0] and np.array_equal(second[1], first[1])

        serve = tf.saved_model.load(clf.export(work / "export")).signatures["serve_text"]
        text = tf.constant([TEXT])
        for _ in range(3):
            served = serve(text_a=text)
        difference = float(np.abs(served["probabilities"].numpy() - first[1]).max())
        api, saved = [], []
        for _ in range(FLAGS.repeats):  # interleaved: both see the same machine load
            start = time.perf_counter()
            clf.predict([TEXT])
            api.append(ms(start))
            start = time.perf_counter()
            serve(text_a=text)["labels"].numpy()
            saved.append(ms(start))
        api_ms, saved_ms = float(np.median(api)), float(np.median(saved))
        print(f"model: the demo's shape (6 layers, H=128, E=64, I=512, vocab 3000), "
              f"max_seq_length {DemoOptions().max_seq_length}, one text of {len(TEXT.split())} "
              f"words; {os.cpu_count()} CPUs, TensorFlow {tf.__version__}")
        print(f"TextClassifier.predict, 1st call (builds, loads, traces): {first_ms:8.1f} ms")
        print(f"TextClassifier.predict, 2nd call:                         {second_ms:8.1f} ms")
        print(f"TextClassifier.predict, median of {FLAGS.repeats} more:              "
              f"{api_ms:8.1f} ms")
        print(f"exported SavedModel serve_text, median of {FLAGS.repeats}:           "
              f"{saved_ms:8.1f} ms")
        print(f"ratio predict/SavedModel: 2nd call {second_ms / saved_ms:.2f}x, median "
              f"{api_ms / saved_ms:.2f}x (goals: 2nd call <= 50 ms and <= 1.5x)")
        print(f"largest probability difference predict/SavedModel: {difference:.1e}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
