"""Bad TFLite folders under `albert_tf.lite` (issue 27, item 4): a truncated .tflite, random
bytes, a file of the wrong kind, corrupt or foreign JSON each give one `InputError` naming the
file (and key), never a crash of the process or a raw KeyError/JSONDecodeError."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier, AlbertModel
from albert_tf.serving.lite import LiteClassifier, LiteEncoder
from albert_tf.serving.tflite import export_tflite
from support.configs import SPM_VOCAB_SIZE, tiny_config
from support.paths import REPO

SEQ = 16


@pytest.fixture(scope="module")
def folders(tmp_path_factory, fixtures_dir):
    """A classifier's and an encoder's TFLite folders (float32), written once."""
    spm = str(fixtures_dir / "spm" / "spm.model")
    root = tmp_path_factory.mktemp("lite")
    export_tflite(AlbertClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE), 2), root / "classifier",
                  SEQ, "float32", spm_model_file=spm, label_names=["no", "yes"])
    export_tflite(AlbertModel(tiny_config(vocab_size=SPM_VOCAB_SIZE)), root / "encoder", SEQ,
                  "float32", spm_model_file=spm)
    return root


def _copy(folders, tmp_path, name="classifier"):
    folder = tmp_path / name
    shutil.copytree(folders / name, folder)
    return folder


# Each case damages a copy of the classifier folder; run in a separate process, since before
# the check a truncated file killed the process (segmentation fault).
DAMAGED = {
    "truncated-half": lambda data: data[:len(data) // 2],
    "truncated-end": lambda data: data[:len(data) - 100],
    "empty": lambda data: b"",
    "random-bytes": lambda data: bytes(range(256)) * 40,
    "png": lambda data: b"\x89PNG\r\n\x1a\n" + bytes(200),
    "header-only": lambda data: data[:64],
}
_SCRIPT = r"""
import json, sys
from albert_tf.errors import InputError
from albert_tf.serving.lite import LiteClassifier
result = {}
for case, folder in json.loads(sys.argv[1]).items():
    try:
        LiteClassifier.from_folder(folder, kind="float32").predict(["a film"])
        result[case] = "ran"
    except InputError as error:
        result[case] = str(error)
print(json.dumps(result))
"""


def test_damaged_tflite_files_are_named_not_a_crash(folders, tmp_path):
    cases = {}
    for case, damage in DAMAGED.items():
        folder = _copy(folders, tmp_path / case)
        path = folder / "classifier.float32.tflite"
        path.write_bytes(damage(path.read_bytes()))
        cases[case] = str(folder)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(cases)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for case, message in result.items():
        assert message.startswith(os.path.join(cases[case], "classifier.float32.tflite")), (case, message)
    assert "truncated" in result["truncated-half"] and "truncated" in result["truncated-end"]
    assert "not a TFLite file" in result["random-bytes"] and "not a TFLite file" in result["png"]
    assert "empty" in result["empty"]


@pytest.mark.parametrize("content, words", [
    (b'{"inputs": ["input_word_ids"', ["classifier.json:1", "not valid JSON"]),
    (b"[1, 2, 3]", ["classifier.json", "a JSON list"]),
    (b"\xff\xfe\x00garbage", ["classifier.json", "not UTF-8"]),
    (json.dumps({"do_lower_case": True, "spm_model_file": "spm.model"}).encode(),
     ["classifier.json", "key files"]),
    (json.dumps({"files": {"float32": "classifier.float32.tflite"}, "spm_model_file": "spm.model"})
     .encode(), ["classifier.json", "key do_lower_case"]),
    (json.dumps({"files": {"float32": "classifier.float32.tflite"}, "do_lower_case": True})
     .encode(), ["classifier.json", "tokenizer"]),
    (json.dumps({"files": {"float32": "classifier.float32.tflite"}, "do_lower_case": True,
                 "spm_model_file": "spm.model", "multi_label": True, "threshold": "high"})
     .encode(), ["classifier.json", "key threshold must be a number between 0 and 1"]),
])
def test_corrupt_json_is_one_error_naming_file_and_key(folders, tmp_path, content, words):
    folder = _copy(folders, tmp_path)
    (folder / "classifier.json").write_bytes(content)
    with pytest.raises(InputError, match=r"classifier\.json") as raised:
        LiteClassifier.from_folder(folder, kind="float32")
    for word in words:
        assert word in str(raised.value), str(raised.value)


def test_label_names_that_do_not_fit_the_file_are_named(folders, tmp_path):
    folder = _copy(folders, tmp_path)
    meta = json.loads((folder / "classifier.json").read_text())
    (folder / "classifier.json").write_text(json.dumps({**meta, "label_names": ["a", "b", "c"]}))
    with pytest.raises(InputError, match="3 label names .*label_names.* for 2 classes"):
        LiteClassifier.from_folder(folder, kind="float32")


def test_a_file_of_the_wrong_kind_is_named(folders, tmp_path):
    spm = str(folders / "classifier" / "spm.model")
    encoder_file = folders / "encoder" / "encoder.float32.tflite"
    with pytest.raises(InputError, match="encoder.float32.tflite: has the outputs .* not "
                                         "probabilities.*use LiteEncoder"):
        LiteClassifier(encoder_file, spm_model_file=spm)
    with pytest.raises(InputError, match="classifier.float32.tflite: .*not pooled_output"):
        LiteEncoder(folders / "classifier" / "classifier.float32.tflite", spm_model_file=spm)
    # A classifier's folder holds no encoder.json: what it holds is named, and what opens it.
    with pytest.raises(InputError, match=r"classifier.json \(the TFLite files of a classifier\), "
                                         "not encoder.json: open it with LiteClassifier"):
        LiteEncoder.from_folder(folders / "classifier")
    # A JSON naming a file that is not there.
    folder = _copy(folders, tmp_path)
    os.remove(folder / "classifier.float32.tflite")
    with pytest.raises(InputError, match="classifier.float32.tflite: cannot read it"):
        LiteClassifier.from_folder(folder, kind="float32")


def test_the_intact_files_still_run(folders):
    classifier = LiteClassifier.from_folder(folders / "classifier", kind="float32")
    assert classifier.classify(["a film", "another"])[0] in ("no", "yes")
    assert LiteEncoder.from_folder(folders / "encoder", kind="float32").encode(
        ["a film"])["pooled_output"].shape == (1, 16)


def test_a_damaged_file_is_named_before_the_missing_tokenizer(tmp_path):
    """Given only the .tflite path, a damaged file is reported as damaged (the interpreter,
    which could crash on it, is never reached), not as a missing tokenizer."""
    path = tmp_path / "encoder.float32.tflite"
    path.write_bytes(b"\x00" * 64)
    with pytest.raises(InputError, match=f"{path}: not a TFLite file"):
        LiteEncoder(str(path))
