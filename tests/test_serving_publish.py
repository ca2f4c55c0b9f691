"""An export's parts are published together (issue 27: items 2, 3, 10 and 12): the TFLite files
are versioned with their SavedModel (`<export_dir>/tflite/<n>`), a second export never replaces
or orphans the first one's files, a disk that fills during the TFLite stage publishes nothing
and says so naming the file and the disk, and a version another export took meanwhile moves
this one to the next number."""

import hashlib
import json
import os

import pytest
import tensorflow as tf

from albert_tf import io_utils
from albert_tf.errors import OutputError
from albert_tf.models import AlbertClassifier
from albert_tf.serving.saved_model import ExportExistsError, serving_root, write_saved_model
from albert_tf.tasks.classification.config import GlueRunConfig
from albert_tf.tasks.classification.task import ClassificationTask
from albert_tf.tf_errors import describe_tf_error
from support.configs import GLUE_TINY
from support.entry_points import console_env, run_entry_point

SEQ = 16


def _tree(folder) -> dict:
    """{relative path: sha256} of every file under `folder`."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as reader:
                found[os.path.relpath(path, folder)] = hashlib.sha256(reader.read()).hexdigest()
    return found


@pytest.fixture()
def task_and_model(tmp_path, fixtures_dir, spm_model):
    """run_classifier's export step (MRPC, labels "0"/"1") and a tiny classifier to export."""
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(GLUE_TINY))

    def task(**flags):
        return ClassificationTask(GlueRunConfig.from_flat(dict(
            data_dir=str(fixtures_dir / "glue" / "data"), task_name="mrpc",
            output_dir=str(tmp_path / "out"), albert_config_file=str(config),
            spm_model_file=spm_model, max_seq_length=SEQ, export_dir=str(tmp_path / "e"),
            **flags)))

    from albert_tf import AlbertConfig

    return task, AlbertClassifier(AlbertConfig(**GLUE_TINY), 2)


def test_a_second_export_with_other_kinds_keeps_the_first_byte_identical(tmp_path,
                                                                         task_and_model):
    task, model = task_and_model
    export = tmp_path / "e"
    first = task(tflite="float32").export(model, str(export))
    assert first == str(export / "1")
    before = _tree(export)
    assert set(before) >= {"tflite/1/classifier.float32.tflite", "tflite/1/classifier.json",
                           "tflite/1/spm.model", "1/saved_model.pb"}, sorted(before)
    second = task(tflite="dynamic_int8").export(model, str(export))
    assert second == str(export / "2")
    after = _tree(export)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing replaced
    assert "tflite/2/classifier.dynamic_int8.tflite" in after
    assert "tflite/1/classifier.dynamic_int8.tflite" not in after
    meta = json.loads((export / "tflite" / "2" / "classifier.json").read_text())
    assert list(meta["files"]) == ["dynamic_int8"] and meta["label_names"] == ["0", "1"]
    # LiteClassifier finds the newest version from the export folder, as before from tflite/.
    from albert_tf.serving.lite import LiteClassifier, find_folder

    assert find_folder(str(export), "classifier") == str(export / "tflite" / "2")
    assert LiteClassifier.from_folder(export / "tflite", kind="dynamic_int8").label_names == ["0", "1"]
    assert LiteClassifier.from_folder(export / "tflite" / "1", kind="float32").path.endswith(
        os.path.join("tflite", "1", "classifier.float32.tflite"))


class _FullDisk:
    """tf.io.gfile.GFile whose .tflite files cannot be written: what TensorFlow raises when the
    disk fills (ResourceExhaustedError "<path>; No space left on device")."""

    def __init__(self, real):
        self.real = real

    def __call__(self, path, mode="r"):
        handle = self.real(path, mode)
        if "w" in mode and ".tflite" in os.path.basename(os.fspath(path)):
            def write(_):
                raise tf.errors.ResourceExhaustedError(
                    None, None, f"{path}; No space left on device")
            handle.write = write
        return handle


def test_a_disk_full_at_the_tflite_stage_publishes_nothing_and_names_the_disk(
        tmp_path, task_and_model, monkeypatch):
    task, model = task_and_model
    export = tmp_path / "e"
    monkeypatch.setattr(tf.io.gfile, "GFile", _FullDisk(tf.io.gfile.GFile))
    with pytest.raises(OutputError, match=r"classifier\.float32\.tflite") as raised:
        task(tflite="float32").export(model, str(export))
    message = str(raised.value)
    assert message.startswith(str(export / "tflite" / "1" / "classifier.float32.tflite")), message
    assert "No space left on device" in message and "the disk mounted at" in message
    assert "nothing was published" in message and "memory" not in message
    assert [name for name in os.listdir(export) if name != "tflite"] == []  # no version, no temp
    assert os.listdir(export / "tflite") == []


def test_export_saved_model_with_a_disk_full_at_the_tflite_stage_is_one_line(tmp_path,
                                                                            monkeypatch):
    """The script: exit 1, one `error:` line naming the file and the disk, nothing published
    (the SavedModels were written and checked before the TFLite stage)."""
    from albert_tf import AlbertConfig, AlbertModel
    from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint

    config = AlbertConfig(vocab_size=40, embedding_size=8, hidden_size=12, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)
    (tmp_path / "model").mkdir()
    config.to_json_file(tmp_path / "model" / "albert_config.json")
    save_tf1_checkpoint(AlbertModel(config), str(tmp_path / "model" / "model.ckpt"))
    monkeypatch.setattr(tf.io.gfile, "GFile", _FullDisk(tf.io.gfile.GFile))
    exports = tmp_path / "exports"
    done = run_entry_point("export_saved_model.py", [
        f"--init_checkpoint={tmp_path / 'model' / 'model.ckpt'}", f"--export_dir={exports}",
        "--tflite=float32", "--verify=false"], env=console_env())
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert last.startswith(f"error: {exports / 'encoder' / 'tflite' / '1' / 'encoder.float32.tflite'}:"
                           " could not write it (No space left on device; the disk mounted at "), last
    assert last.endswith("nothing was published") and "memory" not in last, last
    assert not [p for p in exports.rglob("*") if p.is_file()]  # no version, no temporary


def test_tensorflow_full_disk_is_named_a_full_disk_not_out_of_memory(tmp_path):
    error = tf.errors.ResourceExhaustedError(None, None, f"{tmp_path}/x.bin; No space left on device")
    line = describe_tf_error(error)
    assert line.startswith(f"{tmp_path}/x.bin: could not write it (No space left on device")
    assert "memory" not in line and "batch size" not in line
    target = tmp_path / "out.txt"
    with pytest.raises(OutputError, match=r"out\.txt: could not write it \(No space left"):
        with io_utils.atomic_output(target) as tmp:
            raise tf.errors.ResourceExhaustedError(None, None, f"{tmp}; No space left on device")
    assert os.listdir(tmp_path) == []


def _tiny_module():
    root = serving_root({"serving_default": tf.function(
        lambda x: {"y": x * 2.0}, input_signature=[tf.TensorSpec([None], tf.float32, name="x")])})
    return root, {"serving_default": root.serving_default}


def _take(path):
    """Another export publishing `path` first."""
    os.makedirs(path)
    with open(os.path.join(path, "saved_model.pb"), "w") as writer:
        writer.write("theirs")


def test_a_version_taken_meanwhile_moves_the_whole_export_to_the_next(tmp_path):
    base = tmp_path / "e"
    root, signatures = _tiny_module()

    def lite(folder):  # a TFLite stage; the other export publishes version 1 meanwhile
        _take(base / "1")
        with open(os.path.join(folder, "model.json"), "w") as writer:
            writer.write("{}")

    path = write_saved_model(root, base, signatures, extras={"tflite": lite})
    assert path == str(base / "2")
    assert (base / "2" / "saved_model.pb").exists() and (base / "tflite" / "2" / "model.json").exists()
    assert (base / "1" / "saved_model.pb").read_text() == "theirs"
    assert not (base / "tflite" / "1").exists()
    assert sorted(os.listdir(base)) == ["1", "2", "tflite"]  # no temporaries left


def test_a_version_given_explicitly_never_moves(tmp_path):
    base = tmp_path / "e"
    root, signatures = _tiny_module()
    with pytest.raises(ExportExistsError, match="already exists"):
        write_saved_model(root, base, signatures, version=3,
                          verify=lambda _: _take(base / "3"))
    assert (base / "3" / "saved_model.pb").read_text() == "theirs"
    _take(base / "4")
    with pytest.raises(ExportExistsError, match="4 already exists|exists: .*4"):
        write_saved_model(root, base, signatures, version=4,
                          verify=lambda _: pytest.fail("the work started"))
    assert sorted(os.listdir(base)) == ["3", "4"]


def test_a_wordpiece_squad_export_carries_its_vocabulary(tmp_path):
    """run_squad --vocab_file --tflite: the vocabulary lies beside the TFLite file (issue 27,
    item 5), named in squad.json, as for the SentencePiece model."""
    from albert_tf import AlbertConfig
    from albert_tf.tasks.squad.config import SquadRunConfig
    from albert_tf.tasks.squad.task import SquadTask
    from support.configs import READING_TINY
    from support.wordpiece_vocab import build_vocab

    vocab = build_vocab(tmp_path / "vocab.txt", ["a question about a context"])
    config = AlbertConfig(**{**READING_TINY, "vocab_size": len(vocab)})
    config.to_json_file(tmp_path / "albert_config.json")
    task = SquadTask(SquadRunConfig.from_flat(dict(
        albert_config_file=str(tmp_path / "albert_config.json"), vocab_file=str(tmp_path / "vocab.txt"),
        output_dir=str(tmp_path / "out"), do_predict=True, predict_file="p.json",
        predict_feature_file="p.tfrecord", predict_feature_left_file="p.jsonl",
        max_seq_length=32, doc_stride=16, max_query_length=8, export_dir=str(tmp_path / "e"),
        tflite="float32")))
    task.export(task.build_model(), str(tmp_path / "e"))
    folder = tmp_path / "e" / "tflite" / "1"
    assert sorted(os.listdir(folder)) == ["squad.float32.tflite", "squad.json", "vocab.txt"]
    meta = json.loads((folder / "squad.json").read_text())
    assert meta["vocab_file"] == "vocab.txt" and "spm_model_file" not in meta
    assert (folder / "vocab.txt").read_text() == (tmp_path / "vocab.txt").read_text()


def test_a_full_disk_names_the_published_file_not_a_temporary(tmp_path):
    """TensorFlow writes saved_model.pb as `saved_model.pb.tmp<hex>` inside our temporary
    folder: the line names `<base>/1/saved_model.pb` (what a real full disk showed)."""
    from albert_tf.serving.publish import Publication

    with pytest.raises(OutputError, match="No space left on device") as raised:
        with Publication() as publication:
            stage = publication.stage(tmp_path / "e")
            raise tf.errors.ResourceExhaustedError(None, None, (
                f"{stage.path}/saved_model.pb.tmp8ab69aeeca26425188f847577e18b767; "
                "No space left on device"))
    assert str(raised.value).startswith(f"{tmp_path / 'e' / '1' / 'saved_model.pb'}: could not "
                                        "write it (No space left on device; the disk mounted at")
    assert not (tmp_path / "e").exists() or os.listdir(tmp_path / "e") == []
