"""run_classifier.py on your own data: a 3-class CSV task of real passages (Austen, Melville,
Whitman, from ../shared/data) with string labels and a test file without labels, through
train / eval / predict / export with a tiny model, and the export serving label names."""

import csv
import json
import re

import numpy as np
import pytest

from support.configs import GLUE_TINY
from support.entry_points import run_entry_point
from support.serving import export_on_features, run_fresh

SEQ = 32
SOURCES = {"austen": "austen-emma.txt", "melville": "melville-moby_dick.txt",
           "whitman": "whitman-leaves.txt"}

QUERY = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops of serve_text
model = tf.saved_model.load(sys.argv[1])
out = model.signatures["serve_text"](text_a=tf.constant(json.load(open(sys.argv[2]))))
answer = {k: v.numpy().tolist() for k, v in out.items()}
answer["labels"] = [label.decode("utf-8") for label in answer["labels"]]
json.dump(answer, open(sys.argv[3], "w"))
"""


def _passages(path, count, skip=40):
    """`count` paragraphs of 15-80 words, after the first `skip` (past the front matter),
    with their line breaks (multi-line CSV fields)."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text)]
    chosen = [p for p in paragraphs[skip:] if 15 <= len(p.split()) <= 80]
    return chosen[:count]


@pytest.fixture(scope="module")
def data(data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("custom")
    rows = {label: _passages(data_dir / "pretrain" / "nltk_gutenberg" / name, 30)
            for label, name in SOURCES.items()}
    splits = {"train": [], "dev": [], "test": []}
    for label, passages in rows.items():
        assert len(passages) == 30
        splits["train"] += [(p, label) for p in passages[:20]]
        splits["dev"] += [(p, label) for p in passages[20:25]]
        splits["test"] += [(p, label) for p in passages[25:]]
    for split, items in splits.items():
        with open(root / f"{split}.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)  # RFC 4180: quotes, commas, line breaks in fields
            if split == "test":
                writer.writerow(["passage_id", "passage"])
                writer.writerows([(f"p{i}", text) for i, (text, _) in enumerate(items)])
            else:
                writer.writerow(["passage", "author"])
                writer.writerows(items)
    (root / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    return root, splits


def _run(root, spm_model, *extra, output="output"):
    args = ["--task_name=csv",
            f"--train_file={root / 'train.csv'}", f"--dev_file={root / 'dev.csv'}",
            f"--test_file={root / 'test.csv'}", "--text_a_column=passage",
            "--label_column=author", "--id_column=passage_id",
            f"--albert_config_file={root / 'albert_config.json'}",
            f"--spm_model_file={spm_model}", f"--output_dir={root / output}",
            f"--max_seq_length={SEQ}", "--train_batch_size=8", "--eval_batch_size=16",
            "--predict_batch_size=16", "--learning_rate=1e-3", "--seed=1", *extra]
    return run_entry_point("run_classifier.py", args)


@pytest.fixture(scope="module")
def run_dir(data, spm_model):
    root, _ = data
    done = _run(root, spm_model, "--do_train", "--do_eval", "--do_predict",
                f"--export_dir={root / 'export'}", "--train_step=4",
                "--save_checkpoints_steps=4", "--warmup_step=1")
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def test_labels_eval_results_and_predictions(run_dir, data):
    output = run_dir / "output"
    assert json.loads((output / "labels.json").read_text()) == ["austen", "melville", "whitman"]
    block = dict(line.split(" = ", 1) for line in
                 (output / "eval_results.txt").read_text().split("=" * 50)[0].strip().splitlines())
    assert {"eval_accuracy", "eval_macro_f1", "eval_loss", "global_step"} <= set(block)
    # The one evaluation's numbers, recomputed from the export (the same checkpoint) on the dev
    # features the run wrote: macro F1 is the mean of the 3 authors' F1 (0 for one never hit).
    (features,) = output.glob("*_eval.tf_record")
    probabilities, labels = export_on_features(run_dir / "export" / "1", features)
    predicted = probabilities.argmax(-1)
    f1 = [2 * np.sum((labels == c) & (predicted == c))
          / max(np.sum(labels == c) + np.sum(predicted == c), 1) for c in range(3)]
    assert float(block["eval_macro_f1"]) == pytest.approx(np.mean(f1), abs=1e-6)
    assert float(block["eval_accuracy"]) == pytest.approx((predicted == labels).mean(), abs=1e-6)
    probabilities = [line.split("\t") for line in
                     (output / "test_results.tsv").read_text().splitlines()]
    assert len(probabilities) == 15 and all(len(row) == 3 for row in probabilities)
    rows = list(csv.reader(open(output / "test_predictions.tsv", newline=""), delimiter="\t"))
    assert rows[0] == ["id", "label"]
    assert [r[0] for r in rows[1:]] == [f"p{i}" for i in range(15)]
    names = ["austen", "melville", "whitman"]
    assert [r[1] for r in rows[1:]] == [
        names[max(range(3), key=lambda c: float(p[c]))] for p in probabilities]


def test_export_serves_label_names(run_dir, data, tmp_path):
    _, splits = data
    export = run_dir / "export" / "1"
    texts = [text for text, _ in splits["test"][:4]]
    (tmp_path / "request.json").write_text(json.dumps(texts))
    done = run_fresh(QUERY, export, tmp_path / "request.json", tmp_path / "answer.json")
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads((tmp_path / "answer.json").read_text())
    assert {"probabilities", "predictions", "labels"} <= set(answer)
    names = ["austen", "melville", "whitman"]
    assert answer["labels"] == [names[i] for i in answer["predictions"]]
    # The served predictions are the run's own for the same rows.
    rows = list(csv.reader(open(run_dir / "output" / "test_predictions.tsv", newline=""),
                           delimiter="\t"))[1:5]
    assert [r[1] for r in rows] == [names[i] for i in answer["predictions"]]


def test_bad_label_and_changed_labels_are_one_line(run_dir, data, spm_model):
    root, _ = data
    # A dev label never seen in training.
    (root / "dev_bad.csv").write_text('passage,author\n"Call me Ishmael.",melville\n'
                                      '"A new author here.",dickens\n', encoding="utf-8")
    done = _run(root, spm_model, "--do_eval", f"--dev_file={root / 'dev_bad.csv'}",
                "--nodo_train")
    lines = done.stderr.strip().splitlines()[-1:]
    assert done.returncode == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert lines[0].startswith(f"error: {root / 'dev_bad.csv'}:3: column 'author'")
    assert "'dickens' was never seen in training" in lines[0]
    # labels.json of a trained output_dir must match the run's labels.
    done = _run(root, spm_model, "--do_predict", "--label_list=whitman,melville,austen")
    lines = done.stderr.strip().splitlines()[-1:]
    assert done.returncode == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert "labels.json" in lines[0] and "--label_list" in lines[0]


def test_predict_only_reuses_labels_json(run_dir, data, spm_model):
    root, _ = data
    before = (run_dir / "output" / "test_predictions.tsv").read_text()
    (run_dir / "output" / "test_predictions.tsv").unlink()
    # No training, no --label_list, no --train_file: the names come from labels.json.
    done = _run(root, spm_model, "--do_predict", "--train_file=")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (run_dir / "output" / "test_predictions.tsv").read_text() == before


def test_jsonl_pair_regression_in_process(data, spm_model, tmp_path):
    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import run_glue

    root, splits = data
    rows = [{"a": text, "b": splits["dev"][i][0], "y": float(len(text.split()) % 5)}
            for i, (text, _) in enumerate(splits["train"][:15])]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = GlueRunConfig.from_flat(dict(
        task_name="jsonl", train_file=str(tmp_path / "d.jsonl"), dev_file=str(tmp_path / "d.jsonl"),
        test_file=str(tmp_path / "d.jsonl"), text_a_column="a", text_b_column="b",
        label_column="y", task_type="regression", output_dir=str(tmp_path / "out"),
        albert_config_file=str(root / "albert_config.json"), spm_model_file=spm_model,
        max_seq_length=SEQ, do_train=True, do_eval=True, do_predict=True,
        export_dir=str(tmp_path / "export"), train_step=2, save_checkpoints_steps=2,
        train_batch_size=4, eval_batch_size=8, predict_batch_size=8, seed=1))
    run_glue(config)
    out = tmp_path / "out"
    assert not (out / "labels.json").exists()  # a regressor has no label names
    text = (out / "eval_results.txt").read_text()
    for key in ("eval_pearson", "eval_spearman", "eval_mse", "eval_loss"):
        assert f"\n{key} = " in "\n" + text
    rows = (out / "test_predictions.tsv").read_text().splitlines()
    assert rows[0] == "id\tlabel" and len(rows) == 16
    assert [r.split("\t")[0] for r in rows[1:]] == [str(i) for i in range(1, 16)]
    scores = [float(r.split("\t")[1]) for r in rows[1:]]
    results = [float(line) for line in (out / "test_results.tsv").read_text().splitlines()]
    assert scores == pytest.approx(results, abs=1e-5)


def test_missing_file_names_its_flag(data, spm_model, tmp_path):
    from albert_tf.errors import UsageError
    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import run_glue

    root, _ = data
    config = GlueRunConfig.from_flat(dict(
        task_name="tsv", train_file=str(tmp_path / "nowhere.tsv"), output_dir=str(tmp_path / "o"),
        albert_config_file=str(root / "albert_config.json"), spm_model_file=spm_model,
        max_seq_length=SEQ, do_train=True))
    with pytest.raises(UsageError, match=r"^--train_file=.*nowhere.tsv: no such file"):
        run_glue(config)
