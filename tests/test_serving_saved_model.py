"""write_saved_model: the one version rule, and nothing published before the check passed."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.serving.saved_model import ExportExistsError, ServingModule, write_saved_model
from albert_tf.serving.verify import (VerificationError, verify_all_in_fresh_process,
                                      verify_in_fresh_process)


def _write(base, **kwargs):
    root = ServingModule()
    root.scale = tf.Variable(2.0)
    root.serve = tf.function(lambda x: {"y": x * root.scale},
                             input_signature=[tf.TensorSpec([None], tf.float32, "x")])
    return write_saved_model(root, base, {"serving_default": root.serve}, **kwargs)


def test_failed_check_publishes_nothing_and_the_retry_takes_the_same_version(tmp_path):
    base = tmp_path / "model"

    def failing(path):
        assert os.path.exists(os.path.join(path, "saved_model.pb"))  # checked where it was written
        assert not os.path.basename(path).isdigit()  # under a name TF Serving ignores
        raise VerificationError("outputs differ")

    with pytest.raises(VerificationError, match="outputs differ"):
        _write(base, verify=failing)
    assert os.listdir(base) == []

    checked = []
    call = {"serving_default": {"x": np.array([1.0, 3.0], np.float32)}}
    # A relative path too: the fresh process runs in another folder.
    path = _write(base, verify=lambda p: checked.append(
        verify_in_fresh_process(os.path.relpath(p), call)))
    assert path == str(base / "1") and os.listdir(base) == ["1"]
    assert checked[0]["serving_default"]["y"].tolist() == [2.0, 6.0]
    assert _write(base).endswith(os.path.join("model", "2"))
    with pytest.raises(ExportExistsError, match="already exists"):
        _write(base, version=2)


def test_a_killed_exports_temporary_folder_is_removed_by_the_next_export(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "model" / f".1.tmp-{dead.pid}-0123abcd"
    (stale / "variables").mkdir(parents=True)
    assert _write(tmp_path / "model") == str(tmp_path / "model" / "1")
    assert os.listdir(tmp_path / "model") == ["1"]


def test_one_fresh_process_serves_several_exports_and_names_the_one_that_fails(
        tmp_path, separate_check_processes):
    """The check's own new process, as shipped (other tests run their checks in the test
    worker's serving process). Several good ones: every export_saved_model.py test serves its
    encoder and preprocessing in one process."""
    first = _write(tmp_path / "a")
    calls = {"serving_default": {"x": np.array([1.0], np.float32)}}
    broken = tmp_path / "broken"
    broken.mkdir()
    with pytest.raises(VerificationError, match=f"loading {broken} in a fresh process failed"):
        verify_all_in_fresh_process([(first, calls), (broken, calls)])
