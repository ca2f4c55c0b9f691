"""Weight sources off the golden path (issue 27: items 5, 10, 11, 12): our run's label names
carried by every conversion, a broken HF config.json named as such, a dangling-symlink
--output named as given, a checkpoint rotated away while it is read, a folder holding two
formats refused with a way to choose, and a killed convert's temporary removed."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from albert_tf import AlbertConfig
from albert_tf.errors import CheckpointError, OutputError
from albert_tf.models import AlbertClassifier
from albert_tf.optimization import create_optimizer
from albert_tf.training import CheckpointState
from albert_tf.weights import open_source
from albert_tf.weights.loading import load
from albert_tf.weights.source import SourceError
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from albert_tf.weights.writers import open_to_write, write
from support.entry_points import run_entry_point
from support.interop import interop

LABELS = ["negative", "positive", "neutral"]


def _config():
    return AlbertConfig(vocab_size=40, embedding_size=8, hidden_size=12, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run_classifier output_dir: our checkpoints (steps 1 and 2) and labels.json."""
    root = tmp_path_factory.mktemp("run")
    config = _config()
    config.to_json_file(root / "albert_config.json")
    run = root / "out"
    state = CheckpointState(run, AlbertClassifier(config, 3), create_optimizer(1e-3, 10, 1, "adamw"))
    state.save(step=1)
    state.save(step=2)
    (run / "labels.json").write_text(json.dumps(LABELS))
    return run


def test_our_run_carries_its_label_names_into_every_conversion(run_dir, tmp_path):
    source = open_source(run_dir)
    assert source.heads == ("classifier",) and source.labels == LABELS
    config = str(run_dir.parent / "albert_config.json")
    write(open_to_write(str(run_dir)), str(tmp_path / "hf"), "hf", config=config)
    hf = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf["id2label"] == {"0": "negative", "1": "positive", "2": "neutral"}
    assert hf["label2id"]["neutral"] == 2
    write(open_to_write(str(run_dir)), str(tmp_path / "tf1"), "tf1", config=config)
    assert json.loads((tmp_path / "tf1" / "labels.json").read_text()) == LABELS
    assert open_source(tmp_path / "tf1").labels == LABELS  # and back
    assert open_source(tmp_path / "hf").labels == LABELS


def test_convert_of_our_wordpiece_run_carries_labels_and_vocabulary(run_dir, tmp_path):
    """python -m albert_tf.convert --vocab_file: a WordPiece run's TF1 folder holds its
    vocabulary and labels.json, and reads back with both."""
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nfilm\n")
    done = run_entry_point("-m", [
        "albert_tf.convert", f"--input={run_dir}", f"--output={tmp_path / 'tf1'}",
        "--output_format=tf1", f"--albert_config_file={run_dir.parent / 'albert_config.json'}",
        f"--vocab_file={tmp_path / 'vocab.txt'}"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(os.listdir(tmp_path / "tf1")) == [
        "albert_config.json", "checkpoint", "labels.json", "model.ckpt-0.data-00000-of-00001",
        "model.ckpt-0.index", "vocab.txt"]
    back = open_source(tmp_path / "tf1")
    assert back.labels == LABELS and back.vocab_file == str(tmp_path / "tf1" / "vocab.txt")
    missing = run_entry_point("-m", [
        "albert_tf.convert", f"--input={run_dir}", f"--output={tmp_path / 'x'}",
        "--output_format=tf1", f"--vocab_file={tmp_path / 'nope.txt'}"])
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1] == \
        f"error: --vocab_file {tmp_path / 'nope.txt'} does not exist"


def test_a_truncated_or_listed_hf_config_is_named(tmp_path):
    for name, text, words in (
            ("truncated", open(interop("hf", "classifier", "config.json")).read()[:200],
             ["config.json:", "not valid JSON", "truncated?"]),
            ("listed", "[1, 2]", ["config.json", "a JSON list", "model_type"])):
        folder = tmp_path / name
        shutil.copytree(interop("hf", "classifier"), folder)
        (folder / "config.json").write_text(text)
        with pytest.raises(SourceError, match=r"config\.json") as raised:
            open_source(folder)
        message = str(raised.value)
        assert message.startswith(str(folder / "config.json")), message
        assert "no weights found" not in message
        for word in words:
            assert word in message, message


def test_a_folder_holding_two_formats_is_refused_with_a_way_to_choose(tmp_path):
    folder = tmp_path / "both"
    shutil.copytree(interop("hf", "classifier"), folder)
    config = open_source(folder).config
    save_tf1_checkpoint(AlbertClassifier(config, 3), str(folder / "model.ckpt-7"))
    config.to_json_file(folder / "albert_config.json")
    with pytest.raises(SourceError, match="holds two formats") as raised:
        open_source(folder)
    message = str(raised.value)
    assert "holds two formats: a Hugging Face model and a TF1 (or albert_tf) checkpoint" in message
    assert str(folder / "config.json") in message and str(folder / "model.ckpt-7") in message
    # Each path named picks one.
    assert open_source(folder / "config.json").format == "hf"
    assert open_source(folder / "model.ckpt-7").format == "tf1"


def test_a_dangling_symlink_output_is_named_as_given(tmp_path):
    link = tmp_path / "out"
    os.symlink(tmp_path / "gone" / "hf", link)
    with pytest.raises(OutputError, match="is a symbolic link to") as raised:
        write(open_to_write(interop("hf", "classifier")), str(link), "tf1")
    message = str(raised.value)
    assert message.startswith(f"{link}: cannot write there: {link} is a symbolic link to "
                              f"{tmp_path / 'gone' / 'hf'}, which does not exist"), message
    assert ".tmp-" not in message
    assert os.listdir(tmp_path) == ["out"]


def _rotate(run, old_step, new_step):
    """What a training run does meanwhile: save a newer checkpoint, remove the old one."""
    for name in os.listdir(run):
        if name.startswith(f"model.ckpt-{old_step}."):
            os.rename(run / name, run / name.replace(f"-{old_step}.", f"-{new_step}."))
    (run / "checkpoint").write_text(f'model_checkpoint_path: "model.ckpt-{new_step}"\n')


def test_a_checkpoint_rotated_away_while_reading_reads_the_newest(run_dir, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    source = open_source(run)
    assert source.checkpoint_prefix.endswith("model.ckpt-2")
    _rotate(run, 2, 32)
    model = AlbertClassifier(_config(), 3)
    assert "model.ckpt-32" in load(model, source, require_head=True)
    assert source.checkpoint_prefix.endswith("model.ckpt-32")
    # Rotated away with nothing newer to read: the run is said to be in progress.
    for name in os.listdir(run):
        if name.startswith("model.ckpt-32."):
            os.remove(run / name)
    with pytest.raises(CheckpointError, match="model.ckpt-32 was removed while it was being "
                                              "read: a run is still training in this folder"):
        load(AlbertClassifier(_config(), 3), source)


def test_a_killed_converts_temporary_is_removed_by_the_next(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    leftover = tmp_path / f".hf.tmp-{int(dead.stdout)}-0123abcd"
    leftover.mkdir()
    (leftover / "model.safetensors").write_bytes(np.zeros(1000, np.float32).tobytes())
    alive = tmp_path / f".hf.tmp-{os.getpid()}-89abcdef"  # a live writer's: kept
    alive.mkdir()
    write(open_to_write(interop("hf", "classifier")), str(tmp_path / "hf"), "hf")
    assert sorted(os.listdir(tmp_path)) == sorted(["hf", alive.name])


def test_cli_bad_sources_end_in_one_line(tmp_path):
    """python -m albert_tf.convert on a two-format folder and onto a dangling symlink."""
    folder = tmp_path / "both"
    shutil.copytree(interop("hf", "classifier"), folder)
    config = open_source(folder).config
    save_tf1_checkpoint(AlbertClassifier(config, 3), str(folder / "model.ckpt-7"))
    os.symlink(tmp_path / "nowhere", tmp_path / "link")
    for args, words in (
            ([f"--input={folder}", f"--output={tmp_path / 'x'}"], ["holds two formats",
                                                                    "config.json", "model.ckpt-7"]),
            ([f"--input={interop('hf', 'classifier')}", f"--output={tmp_path / 'link'}"],
             [str(tmp_path / "link"), "symbolic link", "does not exist"])):
        proc = run_entry_point("-m", ["albert_tf.convert", *args, "--output_format=tf1"])
        last = proc.stderr.strip().splitlines()[-1]
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert last.startswith("error: "), last
        for word in words:
            assert word in last, last
