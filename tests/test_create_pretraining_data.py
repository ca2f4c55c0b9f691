"""The command line: the original's flags and defaults, the original's command, clear errors."""

import ast
import json
import os
import pathlib
import subprocess
import sys

import tensorflow as tf

REPO = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = REPO / "create_pretraining_data.py"

# Every flag of the original script, with its default.
ORIGINAL_FLAGS = {
    "input_file": None, "output_file": None, "vocab_file": None, "spm_model_file": None,
    "input_file_mode": "r", "do_lower_case": True, "do_whole_word_mask": True,
    "do_permutation": False, "favor_shorter_ngram": True, "random_next_sentence": False,
    "max_seq_length": 512, "ngram": 3, "max_predictions_per_seq": 20, "random_seed": 12345,
    "dupe_factor": 40, "masked_lm_prob": 0.15, "short_seq_prob": 0.1,
}


def _defined_flags():
    flags = {}
    for node in ast.walk(ast.parse(SCRIPT.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith("DEFINE_")):
            flags[ast.literal_eval(node.args[0])] = ast.literal_eval(node.args[1])
    return flags


def _run(*args, cwd=REPO):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_original_flag_with_its_default():
    defined = _defined_flags()
    for name, default in ORIGINAL_FLAGS.items():
        assert name in defined, name
        assert defined[name] == default, name
    for added in ("exact_original", "num_workers", "undecodable_lines", "max_line_bytes"):
        assert added in defined


def test_the_original_command_line_runs(tmp_path, fixtures_dir):
    """run_info.json's command, unchanged but for paths: the default streaming mode."""
    folder = fixtures_dir / "create_pretraining_data"
    spm = fixtures_dir / "spm"
    outputs = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"]
    result = _run(f"--input_file={folder / 'input.txt'}", f"--output_file={outputs[0]},{outputs[1]}",
                  f"--vocab_file={spm / 'spm.vocab'}", f"--spm_model_file={spm / 'spm.model'}",
                  "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2",
                  "--masked_lm_prob=0.15", "--ngram=3", "--random_seed=12345")
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert summary == json.loads((tmp_path / "a.tfrecord.summary.json").read_text())
    assert summary["documents"] == 93 and summary["sentences"] == 4757
    assert 4000 < summary["instances"] < 5000
    counts = [sum(1 for _ in tf.data.TFRecordDataset(str(p))) for p in outputs]
    assert sum(counts) == summary["instances"] and abs(counts[0] - counts[1]) <= 1
    assert "progress:" in result.stderr and "instances (" in result.stderr and "ETA" in result.stderr


def test_bad_command_lines_fail_clearly(tmp_path, fixtures_dir):
    spm = fixtures_dir / "spm" / "spm.model"
    missing = _run(f"--input_file={tmp_path / 'nope' / '*.txt'}", f"--output_file={tmp_path / 'o'}",
                   f"--spm_model_file={spm}")
    assert missing.returncode != 0
    assert "matched no files" in missing.stderr and "Traceback" not in missing.stderr
    assert os.listdir(tmp_path) == []
