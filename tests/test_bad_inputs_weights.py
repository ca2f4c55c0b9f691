"""A corrupt keras-hub preset file (`model.weights.h5`, `task.weights.h5`) is one `SourceError`
naming the file, not h5py's OSError naming none (issue 27, item 9)."""

import os
import shutil

import pytest

from bad_inputs import one_error_line
from support.interop import interop

from albert_tf.weights import SourceError, open_source


def _damaged(tmp_path, preset, name, how):
    folder = tmp_path / preset
    shutil.copytree(interop("keras_hub", preset), folder)
    path = folder / name
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "random":
        path.write_bytes(os.urandom(len(data)))
    else:  # the HDF5 header kept, the data overwritten: h5py opens it, then fails reading
        path.write_bytes(data[:4096] + b"\0" * (len(data) - 4096))
    return folder, str(path)


@pytest.mark.parametrize("preset, name", [("backbone", "model.weights.h5"),
                                          ("classifier", "model.weights.h5"),
                                          ("classifier", "task.weights.h5")])
@pytest.mark.parametrize("how", ["truncated", "random", "zeroed"])
def test_a_corrupt_weights_file_is_named(preset, name, how, tmp_path):
    folder, path = _damaged(tmp_path, preset, name, how)
    source = open_source(folder)  # the config: read at the open; the weights at first need
    with pytest.raises(SourceError, match=f"{path}: "):
        source.arrays


def test_one_error_line_for_a_truncated_task_file(tmp_path, capsys):
    folder, path = _damaged(tmp_path, "classifier", "task.weights.h5", "truncated")
    line = one_error_line(lambda: open_source(folder).heads, capsys)
    assert path in line and "HDF5" in line
