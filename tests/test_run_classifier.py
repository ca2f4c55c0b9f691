"""run_classifier.py end to end on real GLUE data (MRPC) with a tiny model: train, evaluate,
keep the best checkpoint, predict test, export, and query the export in a fresh process."""

import hashlib
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertClassifier
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.processors import get_processor, read_tsv
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY as TINY
from support.entry_points import run_entry_point
from support.flags import script_flag_defaults
from support.informative import assert_moves, assert_spread, spread_weights
from support.model_folders import assert_self_contained
from support.serving import export_on_features, run_fresh

SEQ = 32

# A separate interpreter: the export must serve without anything from the process that made it.
QUERY = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops of serve_text
export, request = sys.argv[1], json.load(open(sys.argv[2]))
model = tf.saved_model.load(export)
default = model.signatures["serving_default"](
    input=tf.constant([bytes.fromhex(h) for h in request["examples"]]))
serve = lambda a, b: model.signatures["serve_text"](text_a=tf.constant(a), text_b=tf.constant(b))
text = serve(request["text_a"], request["text_b"])
listed = lambda v: [x.decode() for x in v.numpy()] if v.dtype == tf.string else v.numpy().tolist()
# Wrong ways to ask, which must answer otherwise: the pair swapped, and without text_b.
wrong = {"swapped": serve(request["text_b"], request["text_a"]),
         "no_text_b": serve(request["text_a"], [""] * len(request["text_a"]))}
json.dump({"default": {k: listed(v) for k, v in default.items()},
           "text": {k: listed(v) for k, v in text.items()},
           "wrong": {k: v["probabilities"].numpy().tolist() for k, v in wrong.items()}},
          open(sys.argv[3], "w"))
"""


def _informative_checkpoint(path):
    """A TF1 checkpoint of an MRPC classifier with spread weights (support/informative.py): from
    the initializer's spread every test row got 0.52450 ± 2e-6, and the export tests that compare
    two serving paths could not tell a swapped, dropped or unlowered text_b from the right one."""
    model = AlbertClassifier(AlbertConfig(**TINY), 2)
    model({name: tf.zeros([1, SEQ], tf.int32)
           for name in ("input_ids", "input_mask", "segment_ids")})
    return save_tf1_checkpoint(spread_weights(model, seed=5), path)

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, data_dir, spm_model):
    root = tmp_path_factory.mktemp("mrpc")
    config = root / "albert_config.json"
    config.write_text(json.dumps(TINY))
    output = root / "output"
    start = _informative_checkpoint(root / "start" / "model.ckpt")
    args = [f"--data_dir={data_dir / 'glue'}", "--task_name=MRPC", f"--albert_config_file={config}",
            f"--spm_model_file={spm_model}", f"--output_dir={output}", f"--max_seq_length={SEQ}",
            f"--init_checkpoint={start}", "--do_train", "--do_eval", "--do_predict",
            f"--export_dir={root / 'export'}",
            "--threshold_to_export=0.5", "--tflite=float32,dynamic_int8", "--train_step=6",
            "--save_checkpoints_steps=3",
            "--train_batch_size=8", "--eval_batch_size=64", "--predict_batch_size=64",
            # --seed: its 6 steps leave the test rows' probabilities >= 1e-3 apart (asserted by the
            # tests that need it; seed 1 put two rows 8e-5 apart once each weight drew its own init).
            "--learning_rate=1e-3", "--warmup_step=2", "--seed=5"]
    done = run_entry_point("run_classifier.py", args)
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def _blocks(path):
    text = open(path).read()
    return [dict(line.split(" = ", 1) for line in block.strip().splitlines())
            for block in text.split("=" * 50) if block.strip()]


def _query_export(export, tmp_path, records, text_a, text_b) -> dict:
    """Both signatures of an export, queried in a fresh process; they must agree."""
    request, answer = tmp_path / "request.json", tmp_path / "answer.json"
    request.write_text(json.dumps({"examples": records, "text_a": text_a, "text_b": text_b}))
    done = run_fresh(QUERY, export, request, answer)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(answer.read_text())
    np.testing.assert_allclose(got["default"]["probabilities"], got["text"]["probabilities"],
                               atol=1e-5)
    assert got["default"]["predictions"] == got["text"]["predictions"]
    return got


def test_eval_results_and_best_checkpoint(run_dir):
    output = run_dir / "output"
    blocks = _blocks(output / "eval_results.txt")
    assert [b["global_step"] for b in blocks] == ["3", "6"]
    for block in blocks:
        assert set(block) == {"eval_accuracy", "eval_loss", "f1", "global_step", "loss", "best",
                              "best_eval_accuracy", "best_step"}
    last, best_step, best_value = open(output / "best_trial.txt").read().split(":")
    accuracies = [float(b["eval_accuracy"]) for b in blocks]
    # The best step's accuracy and loss, recomputed from the export (which serves the best
    # checkpoint) on the dev features the run wrote: over the 408 real examples only.
    probabilities, labels = export_on_features(run_dir / "export" / "1",
                                               output / "mrpc_eval.tf_record")
    (best_block,) = [b for b in blocks if b["global_step"] == best_step]
    assert len(labels) == 408
    accuracy = float((probabilities.argmax(-1) == labels).mean())
    loss = float(-np.log(probabilities[np.arange(len(labels)), labels]).mean())
    assert float(best_block["eval_accuracy"]) == pytest.approx(accuracy, abs=1e-6)
    assert float(best_block["eval_loss"]) == pytest.approx(loss, abs=1e-5)
    assert last == "6" and float(best_value) == pytest.approx(max(accuracies), abs=1e-6)
    assert int(best_step) == (3 if accuracies[0] >= accuracies[1] else 6)
    # `best` is the best before each evaluation (the original's); best_* after it (ours).
    assert [float(b["best_eval_accuracy"]) for b in blocks] == [accuracies[0], max(accuracies)]
    assert blocks[-1]["best_step"] == best_step
    assert json.loads((output / "eval_results.json").read_text())["best_step"] == int(best_step)
    best = open(output / "model.ckpt-best.data-00000-of-00001", "rb").read()
    assert best == open(output / f"model.ckpt-{best_step}.data-00000-of-00001", "rb").read()
    # Nothing was deleted or renamed.
    for step in (3, 6):
        assert (output / f"model.ckpt-{step}.index").exists()


def test_output_dir_is_usable_alone(run_dir, spm_model):
    """--init_checkpoint=<output_dir> needs no --albert_config_file or --spm_model_file."""
    assert_self_contained(run_dir / "output", TINY, spm_model, labels=["0", "1"])


def test_prediction_files(run_dir, data_dir):
    output = run_dir / "output"
    guids = [fields[0] for _, fields in read_tsv(str(data_dir / "glue" / "MRPC" / "test.tsv"))[1:]]
    probabilities = np.loadtxt(output / "test_results.tsv", delimiter="\t")
    assert probabilities.shape == (1725, 2)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, atol=1e-5)
    submit = open(output / "submit_results.tsv").read().splitlines()
    assert submit[0] == "index\tprediction" and len(submit) == 1726
    rows = [line.split("\t") for line in submit[1:]]
    assert [r[0] for r in rows] == guids
    assert [r[1] for r in rows] == [str(i) for i in probabilities.argmax(1)]
    assert open(output / "MRPC.tsv").read().splitlines() == submit  # the leaderboard name
    # Ours: the label names per test row under `id<TAB>label` (MRPC's names are "0"/"1").
    predictions = open(output / "test_predictions.tsv").read().splitlines()
    assert predictions[0] == "id\tlabel" and predictions[1:] == submit[1:]


def test_export_in_a_fresh_process(run_dir, data_dir, spm_model, tmp_path):
    (export,) = [p for p in (run_dir / "export").iterdir() if p.name.isdigit()]
    raw = read_tsv(str(data_dir / "glue" / "MRPC" / "test.tsv"))[1:9]
    text_a, text_b = [f[3] for _, f in raw], [f[4] for _, f in raw]
    processor = get_processor("mrpc")
    examples = processor.get_test_examples(str(data_dir / "glue"))[:8]
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    records = [F.feature_to_example(F.convert_single_example(e, ["0", "1"], SEQ, tokenizer), False)
               .SerializeToString().hex() for e in examples]
    got = _query_export(export, tmp_path, records, text_a, text_b)
    assert got["default"]["threshold"] == got["text"]["threshold"] == 0.5
    # The label names (MRPC's "0"/"1") of the predicted ids, as in labels.json.
    labels = json.loads((run_dir / "output" / "labels.json").read_text())
    assert labels == ["0", "1"]
    assert got["text"]["labels"] == [labels[i] for i in got["text"]["predictions"]]
    # The export serves the best checkpoint: the same numbers as test_results.tsv.
    expected = np.loadtxt(run_dir / "output" / "test_results.tsv", delimiter="\t")[:8]
    np.testing.assert_allclose(got["default"]["probabilities"], expected, atol=1e-5)
    # Those comparisons at 1e-5 tell inputs apart (support/informative.py): different rows, the
    # pair swapped and text_b dropped all move the probabilities by 1e-3 or more.
    assert_spread(expected, 1e-3)
    for what, probabilities in got["wrong"].items():
        assert_moves(expected, probabilities, 1e-3, what)


def test_tflite_files_classify_raw_text_as_the_export(run_dir, data_dir):
    from albert_tf.lite import LiteClassifier

    raw = read_tsv(str(data_dir / "glue" / "MRPC" / "test.tsv"))[1:9]
    text_a, text_b = [f[3] for _, f in raw], [f[4] for _, f in raw]
    expected = np.loadtxt(run_dir / "output" / "test_results.tsv", delimiter="\t")[:8]
    folder = run_dir / "export" / "tflite" / "1"  # versioned with the SavedModel export/1
    full = LiteClassifier.from_folder(folder, kind="float32")
    assert full.label_names == ["0", "1"] and full.max_seq_length == SEQ
    # Tolerances 10x the errors measured on 2026-11-29 (float32 1.9e-7, dynamic_int8 2.8e-3).
    np.testing.assert_allclose(full.predict(text_a, text_b), expected, atol=2e-6)
    small = LiteClassifier.from_folder(folder)  # dynamic_int8
    np.testing.assert_allclose(small.predict(text_a, text_b), expected, atol=3e-2)
    # They can tell: the rows differ by more than float32's tolerance, and a constant 0.5 (or
    # the pairs swapped, or text_b dropped) would be off by more than each tolerance.
    assert_spread(expected, 1e-3)
    assert np.abs(expected - 0.5).max() > 3 * 3e-2
    assert_moves(expected, full.predict(text_b, text_a), 1e-2, "swapped pairs")
    assert_moves(expected, full.predict(text_a), 3e-2, "text_a alone")
    assert sorted(os.listdir(folder)) == ["classifier.dynamic_int8.tflite",
                                          "classifier.float32.tflite", "classifier.json",
                                          "spm.model"]


def test_a_second_export_with_other_kinds_leaves_the_first_byte_identical(run_dir, data_dir,
                                                                         spm_model, tmp_path):
    """run_classifier --export_dir=<the same> --tflite=<other kinds> again (issue 27, item 2):
    a new version of both, export/2 and export/tflite/2; export 1's files unchanged."""
    def tree(folder):
        return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in folder.rglob("*") if p.is_file()}

    export = tmp_path / "export"
    shutil.copytree(run_dir / "export", export)
    before = tree(export)
    args = [f"--data_dir={data_dir / 'glue'}", "--task_name=MRPC",
            f"--albert_config_file={run_dir / 'albert_config.json'}",
            f"--spm_model_file={spm_model}", f"--output_dir={run_dir / 'output'}",
            f"--max_seq_length={SEQ}", f"--export_dir={export}", "--tflite=float16"]
    done = run_entry_point("run_classifier.py", args)
    assert done.returncode == 0, done.stderr[-3000:]
    after = tree(export)
    assert {k: v for k, v in after.items() if k in before} == before
    assert sorted(os.listdir(export / "tflite" / "2")) == ["classifier.float16.tflite",
                                                           "classifier.json", "spm.model"]
    assert (export / "2" / "saved_model.pb").exists()
    meta = json.loads((export / "tflite" / "2" / "classifier.json").read_text())
    assert list(meta["files"]) == ["float16"] and meta["label_names"] == ["0", "1"]


# The original run_classifier.py's flags and defaults; NaN for threshold_to_export means "not set".
ORIGINAL_FLAGS = {
    "data_dir": None, "albert_config_file": None, "task_name": None, "vocab_file": None,
    "spm_model_file": None, "output_dir": None, "cached_dir": None, "init_checkpoint": None,
    "albert_hub_module_handle": None, "do_lower_case": True, "max_seq_length": 512,
    "do_train": False, "do_eval": False, "do_predict": False, "train_batch_size": 32,
    "eval_batch_size": 8, "predict_batch_size": 8, "learning_rate": 5e-5, "train_step": 1000,
    "warmup_step": 0, "save_checkpoints_steps": 1000, "keep_checkpoint_max": 5,
    "iterations_per_loop": 1000, "use_tpu": False, "optimizer": "adamw", "tpu_name": None,
    "tpu_zone": None, "gcp_project": None, "master": None, "num_tpu_cores": 8,
    "export_dir": None, "threshold_to_export": "nan",
}


def test_every_original_flag_with_its_default():
    # The TPU and runtime flags come from albert_tf/cli.py, which every run_*.py script calls.
    defaults = script_flag_defaults("run_classifier.py")
    for name, value in ORIGINAL_FLAGS.items():
        assert name in defaults, name
        if value == "nan":
            value, defaults[name] = "nan", str(defaults[name])
        assert defaults[name] == value, (name, defaults[name], value)


# ---------------------------------------------------------------- WordPiece (Chinese) models
@pytest.fixture(scope="module")
def wordpiece_run(tmp_path_factory, fixtures_dir):
    """--vocab_file without --spm_model_file (the Chinese models' command line) on the fixtures'
    MRPC: train, evaluate, predict and export with a WordPiece vocabulary built from its text."""
    from support.wordpiece_vocab import build_vocab

    root = tmp_path_factory.mktemp("mrpc_wordpiece")
    data = fixtures_dir / "glue" / "data"
    texts = [f[i] for split in ("train", "dev", "test")
             for _, f in read_tsv(str(data / "MRPC" / f"{split}.tsv"))[1:] for i in (3, 4)]
    vocab = build_vocab(root / "vocab_chinese.txt", texts, words=60)
    config = root / "albert_config.json"
    config.write_text(json.dumps(dict(TINY, vocab_size=len(vocab))))
    args = [f"--data_dir={data}", "--task_name=mrpc", f"--albert_config_file={config}",
            f"--vocab_file={root / 'vocab_chinese.txt'}", "--do_lower_case",
            f"--output_dir={root / 'output'}", f"--max_seq_length={SEQ}", "--do_train",
            "--do_eval", "--do_predict", f"--export_dir={root / 'export'}", "--train_step=4",
            "--save_checkpoints_steps=2", "--train_batch_size=2", "--eval_batch_size=8",
            "--predict_batch_size=8", "--learning_rate=1e-3", "--warmup_step=1", "--seed=1"]
    done = run_entry_point("run_classifier.py", args)
    assert done.returncode == 0, done.stderr[-3000:]
    return root, data


def test_wordpiece_run_trains_evaluates_and_predicts(wordpiece_run):
    root, data = wordpiece_run
    output = root / "output"
    assert [b["global_step"] for b in _blocks(output / "eval_results.txt")] == ["2", "4"]
    assert (output / "model.ckpt-best.index").exists()
    test_rows = read_tsv(str(data / "MRPC" / "test.tsv"))[1:]
    probabilities = np.loadtxt(output / "test_results.tsv", delimiter="\t", ndmin=2)
    assert probabilities.shape == (len(test_rows), 2)
    assert json.loads((output / "labels.json").read_text()) == ["0", "1"]
    # The cached features hold the WordPiece ids of the Python tokenizer.
    tokenizer = tokenization.FullTokenizer(str(root / "vocab_chinese.txt"), True)
    example = get_processor("mrpc", use_spm=False).get_train_examples(str(data))[0]
    want = F.convert_single_example(example, ["0", "1"], SEQ, tokenizer).input_ids
    assert want in _input_ids(output / "mrpc_train.tf_record")


def _input_ids(path) -> list:
    return [list(tf.train.Example.FromString(raw.numpy()).features.feature["input_ids"]
                 .int64_list.value) for raw in tf.data.TFRecordDataset(str(path))]


def test_wordpiece_export_serves_text_in_a_fresh_process(wordpiece_run, tmp_path):
    root, data = wordpiece_run
    (export,) = [p for p in (root / "export").iterdir() if p.name.isdigit()]
    raw = read_tsv(str(data / "MRPC" / "test.tsv"))[1:]
    # Real rows and rows with CJK, accents and punctuation.
    text_a = [f[3] for _, f in raw] + ["我爱中国人，你好。", "Café naïve résumé!"]
    text_b = [f[4] for _, f in raw] + ["日本語のテキスト", "«Zürich», München & Köln."]
    tokenizer = tokenization.FullTokenizer(str(root / "vocab_chinese.txt"), True)
    from albert_tf.tasks.classification.examples import InputExample

    records = [F.feature_to_example(F.convert_single_example(
        InputExample(str(i), a, b, "0"), ["0", "1"], SEQ, tokenizer), False)
        .SerializeToString().hex() for i, (a, b) in enumerate(zip(text_a, text_b))]
    got = _query_export(export, tmp_path, records, text_a, text_b)
    assert got["text"]["labels"] == [["0", "1"][i] for i in got["text"]["predictions"]]
    expected = np.loadtxt(root / "output" / "test_results.tsv", delimiter="\t", ndmin=2)
    np.testing.assert_allclose(got["text"]["probabilities"][:len(raw)], expected, atol=1e-5)
