"""run_classifier.py --task_type=multi_label end to end on real tweets (the Broad Twitter Corpus in
../shared/data/ner/btc): each tweet's labels are the entity types it mentions (PER, ORG, LOC;
none for many), training on sections A/B/E/G and predicting held-out tweets of section H with a
tiny model. Quality is not judged (4 steps); the checks are that a label set is written per test
id, that eval_micro_f1 is the micro F1 of test_predictions.tsv against the gold sets computed
here independently, and that the export's serve_text chooses the CLI's labels."""

import csv
import json

import numpy as np

import pytest

from support.configs import GLUE_TINY
from support.entry_points import run_entry_point
from support.paths import DATA
from support.serving import run_fresh

SEQ = 32
LABELS = ["LOC", "ORG", "PER"]

QUERY = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops of serve_text
model = tf.saved_model.load(sys.argv[1])
out = model.signatures["serve_text"](text_a=tf.constant(json.load(open(sys.argv[2]))))
json.dump({"labels": [x.decode("utf-8") for x in out["labels"].numpy()],
           "probabilities": out["probabilities"].numpy().tolist(),
           "predictions": out["predictions"].numpy().tolist()}, open(sys.argv[3], "w"))
"""


def tweets(path, count, start=0):
    """(text, sorted entity types) of `count` tweets of a CoNLL file."""
    blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    out = []
    for block in blocks[start:start + count]:
        rows = [line.split("\t") for line in block.splitlines() if "\t" in line]
        words = [word for word, _ in rows if word.strip()]
        kinds = sorted({tag[2:] for _, tag in rows if tag != "O"})
        out.append((" ".join(words), kinds))
    return out


def write_tsv(path, rows, with_ids=True):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(["id", "text", "entities"] if with_ids else ["text", "entities"])
        for i, (text, kinds) in enumerate(rows):
            cells = [text, ",".join(kinds)]
            writer.writerow([f"t{i}", *cells] if with_ids else cells)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    btc = DATA / "ner" / "btc"
    if not btc.exists():
        pytest.skip(f"needs {btc} (the project's ../shared folder; absent in a plain clone)")
    root = tmp_path_factory.mktemp("multi_label")
    train, held_out = tweets(btc / "train.conll", 200), tweets(btc / "dev.conll", 60)
    assert any(not kinds for _, kinds in held_out) and any(len(k) > 1 for _, k in train)
    write_tsv(root / "train.tsv", train, with_ids=False)
    write_tsv(root / "held_out.tsv", held_out)
    (root / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    return root, held_out


def run(root, spm_model, *extra, output="output"):
    return run_entry_point("run_classifier.py", [
        "--task_name=tsv", "--task_type=multi_label", f"--train_file={root / 'train.tsv'}",
        f"--dev_file={root / 'held_out.tsv'}", f"--test_file={root / 'held_out.tsv'}",
        "--text_a_column=text", "--label_column=entities", "--id_column=id",
        f"--albert_config_file={root / 'albert_config.json'}", f"--spm_model_file={spm_model}",
        f"--output_dir={root / output}", f"--max_seq_length={SEQ}", "--train_batch_size=16",
        "--eval_batch_size=32", "--predict_batch_size=32", "--learning_rate=1e-3", "--seed=1",
        *extra])


@pytest.fixture(scope="module")
def trained(data, spm_model):
    """Trained 4 steps at threshold 0.5, each checkpoint evaluated, the best kept."""
    root, _ = data
    done = run(root, spm_model, "--do_train", "--do_eval", "--do_predict", "--train_step=4",
               "--save_checkpoints_steps=2", "--warmup_step=1")
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "output"


@pytest.fixture(scope="module")
def rethresholded(data, spm_model, trained):
    """The best checkpoint evaluated, predicted and exported at a threshold in the middle of one
    label's probabilities: a tiny model after 4 steps gives nearly the same probabilities to
    every tweet, so 0.5 chooses all or none; the widest gap of the middle half of the first
    label's splits them (and keeps each decision clear of rounding between batch sizes)."""
    root, _ = data
    values = sorted(float(line.split("\t")[0])
                    for line in (trained / "test_results.tsv").read_text().splitlines())
    middle = range(len(values) // 4, 3 * len(values) // 4)
    i = max(middle, key=lambda k: values[k + 1] - values[k])
    threshold = (values[i] + values[i + 1]) / 2
    done = run(root, spm_model, "--do_eval", "--do_predict", f"--threshold={threshold!r}",
               f"--init_checkpoint={trained / 'model.ckpt-best'}", f"--export_dir={root / 'export'}",
               "--tflite=float32", output="rethresholded")
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "rethresholded", threshold


def predictions(output):
    rows = list(csv.reader(open(output / "test_predictions.tsv", newline="",
                                encoding="utf-8"), delimiter="\t"))
    assert rows[0] == ["id", "label"]
    return {guid: [name for name in cell.split(",") if name] for guid, cell in rows[1:]}


def eval_blocks(output):
    text = (output / "eval_results.txt").read_text()
    return [dict(line.split(" = ", 1) for line in block.strip().splitlines())
            for block in text.split("=" * 50) if block.strip()]


def test_each_checkpoint_evaluated_and_the_best_kept(trained):
    blocks = eval_blocks(trained)
    assert [int(b["global_step"]) for b in blocks] == [2, 4]
    best = max(blocks, key=lambda b: float(b["eval_micro_f1"]))  # the first on a tie
    best_trial = (trained / "best_trial.txt").read_text().strip().split(":")
    assert int(best_trial[1]) == int(best["global_step"])
    assert {"eval_micro_f1", "eval_macro_f1", "eval_exact_match", "eval_loss", "eval_f1_LOC",
            "eval_f1_ORG", "eval_f1_PER"} <= set(best)
    assert json.loads((trained / "labels.json").read_text()) == {
        "labels": LABELS, "task_type": "multi_label", "threshold": 0.5, "label_separator": ","}


def test_a_label_set_per_test_id_and_micro_f1_from_the_predictions(rethresholded, data):
    output, threshold = rethresholded
    _, held_out = data
    predicted = predictions(output)
    assert list(predicted) == [f"t{i}" for i in range(len(held_out))]
    assert all(set(names) <= set(LABELS) for names in predicted.values())
    assert len({tuple(v) for v in predicted.values()}) > 1  # not all the same set
    # Micro F1 and exact match of the written sets against the gold sets, counted here.
    tp = fp = fn = 0
    for i, (_, gold) in enumerate(held_out):
        chosen = set(predicted[f"t{i}"])
        tp, fp, fn = tp + len(chosen & set(gold)), fp + len(chosen - set(gold)), \
            fn + len(set(gold) - chosen)
    micro = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    exact = sum(set(predicted[f"t{i}"]) == set(g) for i, (_, g) in enumerate(held_out)) / \
        len(held_out)
    (block,) = eval_blocks(output)
    assert tp and float(block["eval_micro_f1"]) == pytest.approx(micro, abs=1e-6)
    assert float(block["eval_exact_match"]) == pytest.approx(exact, abs=1e-6)
    probabilities = [line.split("\t") for line in
                     (output / "test_results.tsv").read_text().splitlines()]
    assert [[LABELS[c] for c in range(3) if float(row[c]) >= threshold]
            for row in probabilities] == list(predicted.values())


def test_serve_text_chooses_the_cli_labels(rethresholded, data, tmp_path):
    output, threshold = rethresholded
    root, held_out = data
    (tmp_path / "request.json").write_text(json.dumps([text for text, _ in held_out]))
    done = run_fresh(QUERY, root / "export" / "1", tmp_path / "request.json",
                     tmp_path / "answer.json")
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads((tmp_path / "answer.json").read_text())
    cli = [[float(v) for v in line.split("\t")]
           for line in (output / "test_results.tsv").read_text().splitlines()]
    assert np.allclose(answer["probabilities"], cli, atol=1e-5)
    # The tiny model gives every label nearly the same probability, so a label other than the
    # one the threshold was picked from may sit within rounding of it (batch 8 against the
    # export's one batch): every decision further from it than the two paths differ must agree.
    margin = float(np.max(np.abs(np.asarray(answer["probabilities"]) - np.asarray(cli))))
    clear = [all(abs(p - threshold) > margin for p in row) for row in cli]
    wanted = [",".join(names) for names in predictions(output).values()]
    assert sum(clear) >= 1
    assert [a for a, ok in zip(answer["labels"], clear) if ok] == [
        w for w, ok in zip(wanted, clear) if ok]
    assert all(len(row) == 3 for row in answer["probabilities"])
    assert (root / "export" / "tflite" / "1").is_dir()


BAD = [
    (("--threshold=1.5",), "error: --threshold must be between 0 and 1"),
    (("--threshold=0",), "error: --threshold must be between 0 and 1"),
    (("--long_document=windows", "--doc_stride=0"),
     "error: --doc_stride must be between 1 and --max_seq_length - 2 (30), got 0"),
    (("--long_document=windows", "--doc_stride=31"), "error: --doc_stride must be between 1"),
    (("--window_pooling=median",), "error: "),
    (("--long_document=all",), "error: "),
    (("--label_list=LOC,PER",), "label 'ORG' is not in --label_list (LOC, PER)"),
]


@pytest.mark.parametrize("extra,message", BAD)
def test_bad_flags_are_one_error_line(data, spm_model, extra, message):
    root, _ = data
    done = run(root, spm_model, "--do_train", "--train_step=1", *extra, output="bad")
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and lines[-1].startswith("error: "), done.stderr[-2000:]
    assert message in lines[-1], lines[-1]
    assert sum(line.startswith("error: ") for line in lines) == 1


def test_jsonl_lists_only_with_multi_label(data, spm_model, tmp_path):
    root, _ = data
    rows = [{"text": "Obama visits Paris", "labels": ["PER", "LOC"]},
            {"text": "nothing here", "labels": []},
            {"text": "BBC reports", "labels": "ORG"}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["--task_name=jsonl", f"--train_file={tmp_path / 'd.jsonl'}",
              "--label_column=labels", f"--albert_config_file={root / 'albert_config.json'}",
              f"--spm_model_file={spm_model}", f"--max_seq_length={SEQ}", "--do_train",
              "--train_step=1", "--train_batch_size=2"]
    done = run_entry_point("run_classifier.py", common + [f"--output_dir={tmp_path / 'one'}"])
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1, done.stderr[-2000:]
    assert last.startswith(f"error: {tmp_path / 'd.jsonl'}:1: key 'labels' (--label_column): "
                           "list is not a class label"), last
    assert "--task_type=multi_label" in last
    done = run_entry_point("run_classifier.py", common + [
        f"--output_dir={tmp_path / 'multi'}", "--task_type=multi_label"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((tmp_path / "multi" / "labels.json").read_text())["labels"] == \
        ["LOC", "ORG", "PER"]


def test_hf_conversion_carries_the_multi_label_problem_type(trained, data, tmp_path):
    from albert_tf import AlbertConfig
    from albert_tf.weights.readers import open_source
    from albert_tf.weights.writers.hf import write_hf

    root, _ = data
    write_hf(open_source(str(trained)), tmp_path / "hf",
             AlbertConfig.from_json_file(str(root / "albert_config.json")))
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["problem_type"] == "multi_label_classification"
    assert config["id2label"] == {str(i): name for i, name in enumerate(LABELS)}
    back = open_source(str(tmp_path / "hf"))
    assert back.problem_type == "multi_label_classification" and back.labels == LABELS


def test_a_label_holding_the_separator_is_refused_before_training(data, spm_model, tmp_path):
    # "economy,uk" written in test_predictions.tsv reads as two labels.
    root, _ = data
    rows = [{"text": "Rates rise in London", "labels": ["economy,uk"]},
            {"text": "Cup final ends in a draw", "labels": ["sport"]}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_entry_point("run_classifier.py", [
        "--task_name=jsonl", "--task_type=multi_label", f"--train_file={tmp_path / 'd.jsonl'}",
        "--label_column=labels", f"--albert_config_file={root / 'albert_config.json'}",
        f"--spm_model_file={spm_model}", f"--max_seq_length={SEQ}", "--do_train",
        "--train_step=1", "--train_batch_size=2", f"--output_dir={tmp_path / 'out'}"])
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and lines[-1] == (
        "error: label 'economy,uk' contains --label_separator ',': a predicted set holding it "
        "could not be told apart from two labels; rename the label or pass another "
        "--label_separator"), done.stderr[-2000:]
    assert not (tmp_path / "out" / "labels.json").exists()
    assert not list((tmp_path / "out").glob("model.ckpt-*"))


@pytest.mark.parametrize("flag, message", [
    ("--threshold=0.7", "--threshold is used only with --task_type=multi_label and this run "
                        "has --task_type=classification"),
    ("--label_separator=;", "--label_separator is used only with --task_type=multi_label"),
    ("--window_pooling=max", "--window_pooling is used only with --long_document=windows and "
                             "this run has --long_document=first"),
    ("--doc_stride=8", "--doc_stride is used only with --long_document=windows"),
])
def test_a_flag_a_single_label_run_would_ignore_is_an_error(tmp_path, flag, message):
    done = run_entry_point("run_classifier.py", [
        "--task_name=tsv", f"--train_file={tmp_path / 'train.tsv'}", "--do_train",
        f"--output_dir={tmp_path / 'out'}", flag])
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"error: {message}"), lines[0]


def test_text_classifier_arguments_it_would_ignore_are_refused():
    from albert_tf.errors import UsageError
    from albert_tf.tasks.classification.api_settings import ApiSettings

    with pytest.raises(UsageError, match="^threshold is used only with multi_label=True"):
        ApiSettings.resolve({"threshold": 0.7}, {}, 64)
    with pytest.raises(UsageError, match="^window_pooling is used only with long_document"):
        ApiSettings.resolve({"window_pooling": "max"}, {}, 64)
    with pytest.raises(UsageError, match="^doc_stride is used only with long_document"):
        ApiSettings.resolve({"doc_stride": 8}, {}, 64)
    assert ApiSettings.resolve({"threshold": 0.7, "multi_label": True}, {}, 64).threshold == 0.7
