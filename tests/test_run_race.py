"""run_race.py end to end on the real RACE files with a tiny model and a few steps, and its
accuracies by level on a hand-computed case."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.tasks.race.config import RaceRunConfig
from albert_tf.tasks.race.task import RaceTask
from support.configs import READING_TINY
from support.entry_points import run_entry_point

TINY = AlbertConfig(**READING_TINY)


def _run_race(data_dir, config, out, tokenizer_flag):
    """One training step, evaluation and the test-split prediction of a tiny model."""
    done = run_entry_point("run_race.py", [
        f"--data_dir={data_dir / 'race'}", f"--albert_config_file={config}", tokenizer_flag,
        f"--output_dir={out}", "--max_seq_length=64", "--max_qa_length=16", "--train_step=1",
        "--warmup_step=0", "--save_checkpoints_steps=1", "--train_batch_size=4",
        "--learning_rate=1e-3", "--do_predict"])
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_run_race_reports_middle_high_and_all(data_dir, spm_model, tmp_path):
    config = tmp_path / "albert_config.json"
    TINY.to_json_file(config)
    out = tmp_path / "out"
    done = _run_race(data_dir, config, out, f"--spm_model_file={spm_model}")
    for split in ("train", "dev", "test"):  # each split's [UNK] rate is logged, with its folder
        assert f" tokens) in {data_dir / 'race' / 'RACE' / split}" in done.stderr
    results = (out / "eval_results.txt").read_text()
    for key in ("eval_accuracy", "middle_accuracy", "high_accuracy", "best eval_accuracy"):
        assert key in results
    predict = (out / "predict_results.txt").read_text()
    assert "middle_accuracy" in predict and "high_accuracy" in predict and "best = " in predict
    assert (out / "model.ckpt-best.index").exists()


def test_run_race_with_a_wordpiece_vocab_only(data_dir, tmp_path):
    """--vocab_file without --spm_model_file (a WordPiece model such as the Chinese ALBERTs)."""
    import glob
    import json

    from support.wordpiece_vocab import build_vocab

    texts = []
    for path in glob.glob(str(data_dir / "race" / "RACE" / "*" / "*" / "*.txt")):
        record = json.load(open(path, encoding="utf-8"))
        texts += [record["article"], *record["questions"], *sum(record["options"], [])]
    vocab = build_vocab(tmp_path / "vocab.txt", texts, words=200)
    config = tmp_path / "albert_config.json"
    AlbertConfig(**dict(READING_TINY, vocab_size=len(vocab))).to_json_file(config)
    out = tmp_path / "out"
    _run_race(data_dir, config, out, f"--vocab_file={tmp_path / 'vocab.txt'}")
    assert "eval_accuracy" in (out / "eval_results.txt").read_text()
    assert "best = " in (out / "predict_results.txt").read_text()
    # A vocabulary bigger than the model's table is refused before anything runs.
    AlbertConfig(**dict(READING_TINY, vocab_size=len(vocab) - 1)).to_json_file(config)
    done = run_entry_point("run_race.py", [
        f"--data_dir={data_dir / 'race'}", f"--albert_config_file={config}",
        f"--vocab_file={tmp_path / 'vocab.txt'}", f"--output_dir={tmp_path / 'out2'}",
        "--max_seq_length=64", "--max_qa_length=16"])
    assert done.returncode == 1
    assert "vocab.txt" in done.stderr.splitlines()[-1] and "vocab_size" in done.stderr


class _LongestChoice:
    """A stand-in model whose logit for a choice is its number of tokens."""

    def __call__(self, features, training=False):
        lengths = tf.reduce_sum(tf.cast(features["input_mask"], tf.float32), -1)
        return {"logits": tf.reshape(lengths, [-1, 4])}


def test_accuracies_by_level_on_a_hand_computed_case(spm_model, tmp_path):
    """Choices one token longer each ("the", "the the", ...): the stand-in always picks D, with
    logits [0, 1, 2, 3] up to a shift. Middle answers D, D, A (2/3 right), high D, B (1/2)."""
    answers = {"middle": ["D", "D", "A"], "high": ["D", "B"]}
    options = ["the", "the the", "the the the", "the the the the"]
    for level, keys in answers.items():
        folder = tmp_path / "RACE" / "dev" / level
        folder.mkdir(parents=True)
        (folder / "1.txt").write_text(json.dumps({
            "article": "tom saw a bird.", "questions": ["what?"] * len(keys),
            "options": [options] * len(keys), "answers": keys, "id": f"{level}1.txt"}))
    config = tmp_path / "albert_config.json"
    TINY.to_json_file(config)
    task = RaceTask(RaceRunConfig.from_flat(dict(
        data_dir=str(tmp_path), albert_config_file=str(config), spm_model_file=spm_model,
        output_dir=str(tmp_path / "out"), max_seq_length=32, max_qa_length=16)))
    result = task.accuracy_by_level(_LongestChoice(), "dev", batch_size=2)
    log_probs = np.array([0.0, 1, 2, 3]) - np.log(np.exp([0.0, 1, 2, 3]).sum())
    labels = [3, 3, 0, 3, 1]
    assert result["num_examples"] == 5
    assert result["middle_accuracy"] == pytest.approx(2 / 3)
    assert result["high_accuracy"] == pytest.approx(1 / 2)
    assert result["eval_accuracy"] == pytest.approx(3 / 5)  # over questions, not levels' mean
    assert result["eval_loss"] == pytest.approx(-log_probs[labels].mean(), abs=1e-6)
