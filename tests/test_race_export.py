"""The multiple-choice (RACE) export: run_race's features built in the graph from raw passage,
question and options, and a RACE output_dir exported by export_saved_model answering as
`run_race.py --do_predict` on the same folder."""

import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.serving import runtimes
from albert_tf.serving.lite import interpreter_runner
from albert_tf.source_export import export_source
from albert_tf.tasks.race import data
from albert_tf.tasks.race.serving import RaceServing, choice_texts
from albert_tf.tokenization import FullTokenizer
from support.race_folder import predicted_race_folder, raw_questions


def test_choice_texts_fill_every_gap_or_append():
    got = choice_texts(tf.constant(["a _ b _ c", "why?", "_", "ends _"]),
                       tf.constant(["x", "y", "z", "w"])).numpy().tolist()
    assert got == [b"a x b x c", b"why? y", b"z", b"ends w"]


@pytest.mark.parametrize("max_seq_length,max_qa_length", [(64, 16), (48, 40)])
def test_features_are_run_races_ids(data_dir, spm_model, max_seq_length, max_qa_length):
    """Every dev question (cloze ones among them) of the real RACE files: ids, mask and
    segments equal data.convert_example's, passage and question+option both truncated; a
    question given 3 options of 4 (the 4th left empty) gets the features of those 3."""
    root = data_dir / "race"
    rows = raw_questions(root, "dev")
    assert sum("_" in question for _, question, *_ in rows) >= 5
    serving = RaceServing(None, max_seq_length, max_qa_length, spm_model, do_lower_case=True)
    options = [list(r[2]) for r in rows]
    options[0][3] = ""
    features, present = serving.features(tf.constant([r[0] for r in rows]),
                                         tf.constant([r[1] for r in rows]), tf.constant(options))
    tokenizer = FullTokenizer(None, True, spm_model)
    want = [data.convert_example(e, tokenizer, max_seq_length, max_qa_length)
            for e in data.read_race_examples(root, "dev")]
    assert present.numpy().sum() == 4 * len(rows) - 1
    for name in ("input_ids", "input_mask", "segment_ids"):
        rows_want = np.array([getattr(f, name) for f in want]).reshape(-1, max_seq_length)
        np.testing.assert_array_equal(features[name].numpy(), np.delete(rows_want, 3, 0))
    cut = np.array([getattr(f, "input_mask") for f in want]).sum(-1)
    assert (cut == max_seq_length).any()  # truncation was exercised


def test_a_race_folder_exports_what_run_race_predicts(data_dir, spm_model, tmp_path):
    """run_race.py --do_predict on a folder holding a (spread, untrained) RACE checkpoint, then
    export_saved_model on that folder alone: it exports as multiple choice (its labels.json
    says so), and serve_text on the test split's raw questions gives predict_results.txt's
    accuracy and loss (its probabilities' -log p(answer)), per level too; the TFLite row scorer
    gives the same probabilities."""
    out, predicted = predicted_race_folder(data_dir / "race", spm_model, tmp_path)

    result = export_source(str(out), tmp_path / "exports", str(tmp_path / "albert_config.json"),
                           spm_model, max_seq_length=64, max_qa_length=16, verify=False,
                           tflite="float32",
                           onnx="float32" if runtimes.available("onnxruntime") else None)
    assert result["heads"] == ["multiple_choice"]
    rows = raw_questions(data_dir / "race", "test")
    served = tf.saved_model.load(result["multiple_choice"]).signatures["serve_text"](
        passage=tf.constant([r[0] for r in rows]), question=tf.constant([r[1] for r in rows]),
        options=tf.constant([r[2] for r in rows]))
    probabilities = served["probabilities"].numpy()
    answers = np.array(["ABCD".index(r[3]) for r in rows])
    choice = served["choice"].numpy()
    np.testing.assert_array_equal(choice, probabilities.argmax(-1))
    assert [x.decode() for x in served["letter"].numpy()] == ["ABCD"[c] for c in choice]
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-6)
    assert probabilities.std() > 1e-3  # the model tells the options apart
    correct = choice == answers
    assert int(predicted["num_examples"]) == len(rows)
    assert float(predicted["eval_accuracy"]) == pytest.approx(correct.mean(), abs=1e-9)
    loss = -np.log(probabilities[np.arange(len(rows)), answers]).mean()
    assert float(predicted["eval_loss"]) == pytest.approx(loss, abs=1e-5)
    for level in data.LEVELS:
        at = np.array([r[4] == level for r in rows])
        assert float(predicted[f"{level}_accuracy"]) == pytest.approx(correct[at].mean())

    # The TFLite file scores (passage, option) rows; its softmax per question is the same.
    lite = result["tflite"]["multiple_choice"]
    meta = json.loads(open(lite["metadata"]).read())
    assert meta["outputs"] == ["score"]
    tokenizer = FullTokenizer(None, True, spm_model)
    features = [data.convert_example(e, tokenizer, 64, 16)
                for e in data.read_race_examples(data_dir / "race", "test")]
    ids = {name: np.array([getattr(f, key) for f in features], np.int32).reshape(-1, 64)
           for name, key in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                             ("input_type_ids", "segment_ids"))}
    runners = {"tflite": interpreter_runner(lite["float32"])}
    if "onnx" in result:  # the same row scorer for onnxruntime ([onnx] extra; CI has it)
        runners["onnx"] = runtimes.runner(result["onnx"]["multiple_choice"]["float32"])
    elif os.environ.get("ALBERT_TF_CI"):
        pytest.fail("onnxruntime missing: pip install -e .[onnx]")
    for fmt, run in runners.items():
        scores = run(**ids)["score"].reshape(-1, 4)
        row_probabilities = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        np.testing.assert_allclose(row_probabilities, probabilities, atol=1e-5, err_msg=fmt)
    assert math.isclose(float(predicted["best"]), correct.mean())


def test_serve_text_takes_ragged_options_and_refuses_mismatched_rows(spm_model):
    """A stand-in scorer whose score is the row's number of pieces: an empty option is no
    option (probability 0, never chosen), a question without options chooses -1 and no
    letter, and options of another batch size than the passages is one error naming it."""
    def longest(features, training=False):
        return {"logits": tf.reduce_sum(tf.cast(features["input_mask"], tf.float32), -1)}

    serving = RaceServing(longest, 32, 16, spm_model)
    out = serving.serve_text(tf.constant(["a cat sat.", "dogs run.", "x"]),
                             tf.constant(["who?", "what?", "why?"]),
                             tf.constant([["a", "a b c", "", "a b"], ["", "", "", "a b c d e"],
                                          ["", "", "", ""]]))
    probabilities = out["probabilities"].numpy()
    assert probabilities[0, 2] == 0 and probabilities[1, :3].tolist() == [0, 0, 0]
    np.testing.assert_allclose(probabilities[:2].sum(-1), 1.0, atol=1e-6)
    assert probabilities[2].tolist() == [0, 0, 0, 0]
    assert out["choice"].numpy().tolist() == [1, 3, -1]
    assert [x.decode() for x in out["letter"].numpy()] == ["B", "D", ""]
    # Option B's row has as many more pieces as its text has, by the Python tokenizer.
    tokenizer = FullTokenizer(None, True, spm_model)
    more = len(tokenizer.tokenize("who? a b c")) - len(tokenizer.tokenize("who? a"))
    assert more >= 2
    assert probabilities[0, 1] / probabilities[0, 0] == pytest.approx(math.exp(more), rel=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same batch size: options"):
        serving.serve_text(tf.constant(["a", "b"]), tf.constant(["q", "q"]),
                           tf.constant([["x", "y"]]))
