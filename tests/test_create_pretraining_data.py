"""The command line: the original's flags and defaults, the original's command, clear errors."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from albert_tf import io_utils
from support.entry_points import run_entry_point
from support.flags import script_flag_defaults
from support.paths import REPO

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
    return script_flag_defaults("create_pretraining_data.py")


def _run(*args, cwd=REPO):
    return run_entry_point("create_pretraining_data.py", args, cwd=cwd)


def test_every_original_flag_with_its_default():
    defined = _defined_flags()
    for name, default in ORIGINAL_FLAGS.items():
        assert name in defined, name
        assert defined[name] == default, name
    for added in ("exact_original", "num_workers", "undecodable_lines", "max_line_bytes", "beam_runner",
                  "beam_pipeline_options"):
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
    summary = json.loads((tmp_path / "a.tfrecord.summary.json").read_text())
    # The console gets the summary's gist, not its JSON.
    gist = result.stdout.splitlines()
    assert len(gist) == 2 and "{" not in result.stdout, result.stdout
    assert gist[0].startswith(f"wrote {summary['instances']:,} instances to {outputs[0]} and 1 more")
    assert gist[1].endswith(str(tmp_path / "a.tfrecord.summary.json"))
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


def _error_line(result):
    """The run ended with one `error:` line and no traceback."""
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert lines and lines[-1].startswith("error: "), result.stderr[-3000:]
    return lines[-1]


def test_input_without_instances_fails_with_one_line(tmp_path, fixtures_dir):
    spm = fixtures_dir / "spm" / "spm.model"
    (tmp_path / "in.txt").write_text("\n\n")
    out = tmp_path / "out"
    result = _run(f"--input_file={tmp_path / 'in.txt'}", f"--output_file={out / 'o.tfrecord'}",
                  f"--spm_model_file={spm}", "--dupe_factor=1")
    assert result.returncode == 1
    line = _error_line(result)
    assert "no pretraining instances" in line and "in.txt" in line and "--allow_empty" in line
    assert not out.exists() or os.listdir(out) == []
    allowed = _run(f"--input_file={tmp_path / 'in.txt'}", f"--output_file={out / 'o.tfrecord'}",
                   f"--spm_model_file={spm}", "--dupe_factor=1", "--allow_empty")
    assert allowed.returncode == 0, allowed.stderr[-2000:]
    assert (out / "o.tfrecord").stat().st_size == 0


def test_bad_flag_values_are_one_line(tmp_path, fixtures_dir):
    spm = fixtures_dir / "spm" / "spm.model"
    result = _run(f"--input_file={fixtures_dir / 'create_pretraining_data' / 'input.txt'}",
                  f"--output_file={tmp_path / 'o'}", f"--spm_model_file={spm}", "--ngram=0")
    assert result.returncode != 0 and "--ngram must be at least 1" in _error_line(result)
    assert os.listdir(tmp_path) == []


def _children(pid):
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(entry))
    return children


def _alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _cpu_seconds(pid):
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _ctrl_c_as_in_a_terminal():
    """The run starts with SIGINT at its default, as a terminal's foreground job does. A suite
    started in the background by a non-interactive shell (`pytest ... &`) has SIGINT ignored,
    every child inherits that, and Python then keeps ignoring it: the run would go on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_long_run(fixtures_dir, out):
    """A two-worker run that would take minutes; returns once its partial output exists and a
    worker is busy with a block."""
    args = [sys.executable, str(SCRIPT),
            f"--input_file={fixtures_dir / 'create_pretraining_data' / 'input.txt'}",
            f"--output_file={out / 'o.tfrecord'}", f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}",
            "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=500",
            "--num_workers=2", "--block_bytes=100000"]
    proc = subprocess.Popen(args, cwd=REPO, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ctrl_c_as_in_a_terminal)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        if len(workers) >= 2 and out.exists() and os.listdir(out) \
                and max(_cpu_seconds(w) for w in workers) > 0.5:  # busy with a block
            return proc, workers
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the run did not start its workers: {proc.communicate()[1][-2000:]}")


def _wait_gone(pids, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_terminated_run_stops_its_workers_and_leaves_no_output(tmp_path, fixtures_dir, signum):
    out = tmp_path / "out"
    proc, workers = _start_long_run(fixtures_dir, out)
    assert any(io_utils.is_temporary(name) for name in os.listdir(out))
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert _error_line(subprocess.CompletedProcess([], proc.returncode, "", stderr)) == "error: interrupted"
    assert os.listdir(out) == []
    assert _wait_gone(workers) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_run_workers_exit_and_next_run_removes_its_partial_output(tmp_path, fixtures_dir):
    out = tmp_path / "out"
    proc, workers = _start_long_run(fixtures_dir, out)
    proc.kill()
    proc.wait(timeout=60)  # not communicate(): the workers hold the output pipes open
    assert _wait_gone(workers, 5.0) == []  # they used to run on until their block was done
    proc.communicate(timeout=60)
    leftovers = os.listdir(out)
    assert leftovers and all(io_utils.is_temporary(name) for name in leftovers)
    result = _run(f"--input_file={fixtures_dir / 'create_pretraining_data' / 'input.txt'}",
                  f"--output_file={out / 'o.tfrecord'}",
                  f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}", "--max_seq_length=64",
                  "--max_predictions_per_seq=10", "--dupe_factor=1", "--num_workers=1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(os.listdir(out)) == ["o.tfrecord", "o.tfrecord.summary.json"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ulimit -f")
def test_full_disk_is_one_line_and_leaves_no_output(tmp_path, fixtures_dir):
    import resource

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    out = tmp_path / "out"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), f"--input_file={fixtures_dir / 'create_pretraining_data' / 'input.txt'}",
         f"--output_file={out / 'o.tfrecord'}", f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}",
         "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--num_workers=1"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit_file_size)
    assert result.returncode == 1
    line = _error_line(result)
    assert str(out / "o.tfrecord") + ": could not write it (File too large)" in line, line
    assert os.listdir(out) == []
