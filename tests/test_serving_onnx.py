"""ONNX and OpenVINO files from the same export (issue 48): export_saved_model's --onnx and
--openvino write `<name>/onnx/<v>/` and `<name>/openvino/<v>/` beside each SavedModel with an
ids-in form; the float32 files give transformers' own probabilities on the HF classifier
fixture; the shared layer's weights are stored once; kinds, missing runtimes and damaged files
are one clear error each, and nothing is written before them."""

import json
import os

import numpy as np
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError, MissingDependencyError, UsageError
from albert_tf.models import AlbertClassifier
from albert_tf.run_config import parse_runtime_kinds
from albert_tf.serving import onnx_export, runtimes
from albert_tf.serving.tflite import sample_inputs
from support.hf_exports import LENGTH, shared_hf_export
from support.interop import assert_close, expected, inputs, interop
from support.paths import REPO

pytestmark = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnxruntime", "openvino")),
    reason="needs the [onnx] and [openvino] extras: pip install -e .[onnx,openvino]")


def _softmax(x):
    e = np.exp(x - np.max(x, -1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _feed():
    feed = inputs()
    return {"input_word_ids": feed["input_ids"].astype(np.int32),
            "input_mask": feed["input_mask"].astype(np.int32),
            "input_type_ids": feed["segment_ids"].astype(np.int32)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """export_saved_model's work on transformers' ALBERT classifier, with every kind of both
    (the session's one export, shared with the predictor and warmup tests)."""
    return shared_hf_export(tmp_path_factory)


def test_files_are_versioned_with_their_savedmodel_with_json_beside(exported):
    result, root = exported
    assert sorted(os.listdir(root / "classifier" / "onnx" / "1")) == [
        "classifier.dynamic_int8.onnx", "classifier.float32.onnx", "classifier.json",
        "classifier.text.dynamic_int8.onnx", "classifier.text.float32.onnx", "spiece.model"]
    assert sorted(os.listdir(root / "classifier" / "openvino" / "1")) == [
        "classifier.float32.bin", "classifier.float32.xml", "classifier.json",
        "classifier.text.float32.bin", "classifier.text.float32.xml", "spiece.model"]
    assert sorted(os.listdir(root / "encoder" / "onnx" / "1")) == [
        "encoder.dynamic_int8.onnx", "encoder.float32.onnx", "encoder.json",
        "encoder.text.dynamic_int8.onnx", "encoder.text.float32.onnx", "spiece.model"]
    assert result["onnx"]["classifier"]["float32"] == str(
        root / "classifier" / "onnx" / "1" / "classifier.float32.onnx")
    assert result["openvino"]["classifier"]["float32"] == str(
        root / "classifier" / "openvino" / "1" / "classifier.float32.xml")
    for fmt, kinds in (("onnx", {"float32": "classifier.float32.onnx",
                                 "dynamic_int8": "classifier.dynamic_int8.onnx"}),
                       ("openvino", {"float32": "classifier.float32.xml"})):
        meta = json.loads((root / "classifier" / fmt / "1" / "classifier.json").read_text())
        assert meta["format"] == fmt and meta["text_in"] is True
        # Each text file run at export on raw texts against the Keras model on albert-tf's ids.
        assert meta["agreement"]["text"]["float32"]["argmax_agreement"] == 1.0
        assert meta["inputs"] == ["input_word_ids", "input_mask", "input_type_ids"]
        assert meta["outputs"] == ["probabilities"] and meta["max_seq_length"] == LENGTH
        assert meta["files"] == kinds and meta["spm_model_file"] == "spiece.model"
        # Measured at export against the Keras model on 8 rows of sample ids.
        assert meta["agreement"]["float32"]["max_abs_diff"] <= 1e-4
        assert meta["agreement"]["float32"]["rows"] == 8


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_float32_files_give_transformers_probabilities(exported, fmt):
    result, _ = exported
    run = runtimes.runner(result[fmt]["classifier"]["float32"])
    assert run.max_seq_length == LENGTH and run.outputs == ["probabilities"]
    assert_close(run(**_feed())["probabilities"],
                 _softmax(expected("hf", "classifier")["logits"]), f"{fmt} float32 probabilities")
    encoder = runtimes.runner(result[fmt]["encoder"]["float32"])(**_feed())
    assert_close(encoder["sequence_output"], expected("hf", "classifier")["last_hidden_state"],
                 f"{fmt} encoder sequence_output")


def test_int8_file_names_the_float32_class(exported):
    result, _ = exported
    want = np.argmax(expected("hf", "classifier")["logits"], -1)
    got = runtimes.runner(result["onnx"]["classifier"]["dynamic_int8"])(**_feed())
    np.testing.assert_array_equal(np.argmax(got["probabilities"], -1), want)


def test_shared_layer_weights_are_stored_once(tmp_path):
    """Three passes of the shared layer: the file holds its weights once (about 4 bytes a
    parameter), the size of a one-pass model's file; a copy per pass would add 2 layers."""
    sizes = {}
    for passes in (1, 3):
        config = AlbertConfig(vocab_size=300, embedding_size=16, hidden_size=64,
                              num_hidden_layers=passes, num_attention_heads=4,
                              intermediate_size=128, max_position_embeddings=64)
        model = AlbertClassifier(config, 2)
        feed = sample_inputs(16, 300)
        model({"input_ids": feed["input_word_ids"], "input_mask": feed["input_mask"],
               "segment_ids": feed["input_type_ids"]})
        rng = np.random.default_rng(passes)  # distinct matrices (a fresh model's q/k/v/o match)
        for variable in (v for v in model.weights if len(v.shape) == 2):
            variable.assign(rng.normal(0, 0.02, variable.shape).astype(np.float32))
        written = onnx_export.export_onnx(model, tmp_path / str(passes), 16, "float32")
        sizes[passes] = (os.path.getsize(written["float32"]), model.count_params())
    (one, params), (three, same) = sizes[1], sizes[3]
    assert params == same  # the layer is shared: more passes, no more parameters
    layer = 4 * (4 * 64 * 64 + 4 * 64 + 2 * 64 * 128 + 128 + 64 + 4 * 64)  # one layer's bytes
    # Two more passes add their graph nodes (about 12 KB each here), never a layer's weights.
    assert 0 < three - one < layer, (one, three)
    # The weights, once (constant folding drops the 48 position rows past max_seq_length).
    assert 4 * (params - 48 * 16) <= one < three < 4 * params + layer, (one, three, 4 * params)


def test_kinds_are_checked_with_the_flag_named():
    assert parse_runtime_kinds("dynamic_int8, float32") == ("float32", "dynamic_int8")
    with pytest.raises(UsageError, match=r"^--openvino: unknown kind 'float16'; choose from "
                                         r"float32, dynamic_int8$"):
        parse_runtime_kinds("float16", "--openvino")


@pytest.mark.parametrize("flag,missing,extra", [("onnx", "onnxruntime", "onnx"),
                                                ("openvino", "openvino", "openvino")])
def test_a_missing_runtime_is_one_error_naming_the_extra_before_any_work(
        tmp_path, monkeypatch, flag, missing, extra):
    from albert_tf.source_export import export_source

    real = runtimes._try_import
    monkeypatch.setattr(runtimes, "_try_import", lambda name: (
        None, ImportError(f"No module named {name!r}")) if name == missing else real(name))
    with pytest.raises(MissingDependencyError,
                       match=rf"^--{flag} needs {missing}, which cannot be imported \(No module "
                             rf"named '{missing}'\): pip install albert-tf\[{extra}\]$"):
        export_source(interop("hf", "classifier"), tmp_path / "x", max_seq_length=LENGTH,
                      verify=False, **{flag: "float32"})
    assert not (tmp_path / "x").exists()


def test_a_damaged_file_is_an_input_error_naming_it(tmp_path):
    for name, runtime in (("x.onnx", "onnxruntime"), ("x.xml", "OpenVINO")):
        (tmp_path / name).write_bytes(b"not a model")
        with pytest.raises(InputError, match=rf"^{tmp_path / name}: {runtime} cannot run it"):
            runtimes.runner(tmp_path / name)
    with pytest.raises(InputError, match=r"neither an \.onnx file nor an OpenVINO \.xml file"):
        runtimes.runner(tmp_path / "x.tflite")


def test_run_classifier_export_writes_onnx_beside_its_savedmodel(
        tmp_path, fixtures_dir, spm_model):
    """run_classifier's export step (MRPC, labels "0"/"1") with --onnx: the
    files are versioned with the SavedModel, carry the label names, and give the Keras
    model's probabilities (OpenVINO's files are the same writer's: the tests above)."""
    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import ClassificationTask
    from support.configs import GLUE_TINY

    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(GLUE_TINY))
    task = ClassificationTask(GlueRunConfig.from_flat(dict(
        data_dir=str(fixtures_dir / "glue" / "data"), task_name="mrpc",
        output_dir=str(tmp_path / "out"), albert_config_file=str(config),
        spm_model_file=spm_model, max_seq_length=16, export_dir=str(tmp_path / "e"),
        onnx="float32")))
    task.validate()
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), 2)
    feed = sample_inputs(16, GLUE_TINY["vocab_size"], batch=3)
    want = model({"input_ids": feed["input_word_ids"], "input_mask": feed["input_mask"],
                  "segment_ids": feed["input_type_ids"]})["probabilities"].numpy()
    assert task.export(model, str(tmp_path / "e")) == str(tmp_path / "e" / "1")
    assert not (tmp_path / "e" / "openvino").exists()
    for fmt, suffix in (("onnx", "onnx"),):
        folder = tmp_path / "e" / fmt / "1"
        meta = json.loads((folder / "classifier.json").read_text())
        assert meta["label_names"] == ["0", "1"] and meta["format"] == fmt
        got = runtimes.runner(folder / f"classifier.float32.{suffix}")(**feed)["probabilities"]
        assert_close(got, want, f"{fmt} probabilities")


def test_run_classifier_refuses_runtime_files_without_export_dir(tmp_path, fixtures_dir,
                                                                  spm_model):
    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import ClassificationTask
    from albert_tf.tasks.classification.config import ClassifierRunError
    from support.configs import GLUE_TINY

    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(GLUE_TINY))
    flags = dict(data_dir=str(fixtures_dir / "glue" / "data"), task_name="mrpc",
                 output_dir=str(tmp_path / "out"), albert_config_file=str(config),
                 spm_model_file=spm_model, max_seq_length=16, do_eval=True, openvino="float32")
    with pytest.raises(ClassifierRunError, match=r"^--onnx / --openvino need --export_dir"):
        ClassificationTask(GlueRunConfig.from_flat(flags)).validate()
    with pytest.raises(UsageError, match=r"^--onnx: unknown kind 'int4'"):
        ClassificationTask(GlueRunConfig.from_flat(
            dict(flags, onnx="int4", export_dir=str(tmp_path / "e")))).validate()


def test_token_classifier_files_give_the_keras_tags_probabilities(tmp_path):
    """run_ner's form (probabilities per position, through the task's own call): the float32
    ONNX file against the Keras model's own call; the OpenVINO int8 IR names the same tag at
    >= 95 % of the positions."""
    from albert_tf.models import AlbertTokenClassifier
    from albert_tf.serving import openvino_export
    from albert_tf.tasks.token_classification.export import tflite_call
    from support.configs import TINY
    from support.informative import spread_weights

    model = AlbertTokenClassifier(AlbertConfig(**TINY), 5, dropout_prob=0.0)
    feed = sample_inputs(12, TINY["vocab_size"], batch=4)
    keras_feed = {"input_ids": feed["input_word_ids"], "input_mask": feed["input_mask"],
                  "segment_ids": feed["input_type_ids"]}
    model(keras_feed)
    spread_weights(model)
    want = model(keras_feed)["probabilities"].numpy()
    writes = openvino_export.extras(model, 12, "float32", "dynamic_int8",
                                    name="token_classifier", outputs=("probabilities",),
                                    call=tflite_call(model), label_names=list("OBIES"))
    written = {}
    for folder, write in writes.items():
        (tmp_path / folder).mkdir()
        written[folder] = write(tmp_path / folder)
        meta = json.loads((tmp_path / folder / "token_classifier.json").read_text())
        assert meta["label_names"] == list("OBIES")
    got = runtimes.runner(written["onnx"]["float32"])(**feed)["probabilities"]
    assert got.shape == (4, 12, 5)
    assert_close(got, want, "onnx token probabilities")
    int8 = runtimes.runner(written["openvino"]["dynamic_int8"])(**feed)["probabilities"]
    agree = np.mean(np.argmax(int8, -1) == np.argmax(want, -1))
    assert agree >= 0.95, agree


def test_run_ner_refuses_runtime_files_without_export_dir(tmp_path, spm_model):
    from albert_tf.tasks.token_classification.config import NerRunConfig
    from albert_tf.tasks.token_classification.task import NerTask
    from support.configs import TINY

    (tmp_path / "c.json").write_text(json.dumps(TINY))
    config = NerRunConfig.from_flat({"onnx": "float32", "output_dir": str(tmp_path / "out"),
                                     "do_eval": True, "dev_file": "dev.txt",
                                     "albert_config_file": str(tmp_path / "c.json"),
                                     "spm_model_file": spm_model})
    with pytest.raises(UsageError, match=r"^--onnx / --openvino need --export_dir"):
        NerTask(config).validate()


def test_run_squad_refuses_runtime_files_for_v2_and_without_export_dir():
    from albert_tf.tasks.squad.config import SquadRunConfig
    from support.configs import tiny_config

    flags = {"do_train": True, "train_file": "train.json", "openvino": "float32"}
    with pytest.raises(UsageError, match=r"^--openvino needs --export_dir"):
        SquadRunConfig.from_flat(flags).validate(tiny_config())
    with pytest.raises(UsageError, match=r"^--openvino: SQuAD v2's beam-search head has no "):
        SquadRunConfig.from_flat(dict(flags, export_dir="e", version_2_with_negative=True)
                                 ).validate(tiny_config())
    with pytest.raises(UsageError, match=r"^--onnx: unknown kind 'fp16'"):
        SquadRunConfig.from_flat(dict(flags, export_dir="e", onnx="fp16")).validate(tiny_config())


def test_a_fresh_process_runs_the_files_without_tensorflow(exported, tmp_path):
    """What a deployment runs: the runner alone (onnxruntime / openvino), TensorFlow never
    imported, the same probabilities as transformers."""
    import subprocess
    import sys

    result, _ = exported
    np.savez(tmp_path / "feed.npz", **_feed())
    code = (
        "import json, sys, numpy as np\n"
        "from albert_tf.serving.runtimes import runner\n"
        "feed = dict(np.load(sys.argv[1]))\n"
        "out = [runner(p)(**feed)['probabilities'].tolist() for p in sys.argv[2:]]\n"
        "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "feed.npz"),
                           result["onnx"]["classifier"]["float32"],
                           result["openvino"]["classifier"]["float32"]],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    want = _softmax(expected("hf", "classifier")["logits"])
    for got in json.loads(done.stdout):
        assert_close(np.array(got), want, "fresh-process probabilities")


def test_a_fresh_process_runs_the_text_file_on_raw_strings_as_serve_text(exported, tmp_path):
    """What a deployment of the text-in file runs: onnxruntime and onnxruntime-extensions
    alone (neither albert_tf nor TensorFlow imported) on raw strings, single and paired: the
    labels of the SavedModel's serve_text / serve_pair, probabilities within 1e-4; the
    dynamic_int8 text file's labels agree on 99 % of them or more."""
    import subprocess
    import sys

    from albert_tf.serving.predictor import Predictor

    _, root = exported
    folder = root / "classifier" / "onnx" / "1"
    meta = json.loads((folder / "classifier.json").read_text())
    texts = ["a lovely, moving film", "Café CRÈME brûlée", "ΟΔΟΣ", "1,000 dull minutes",
             "", "[MASK] 中文", "www www.www", "it is not bad at all"]
    pairs = ["a second text", "", "x", "Straße", "  ", "y", "z", "word " * 100]
    code = (
        "import json, sys\n"
        "import numpy as np, onnxruntime as ort, onnxruntime_extensions\n"
        "options = ort.SessionOptions()\n"
        "options.register_custom_ops_library(onnxruntime_extensions.get_library_path())\n"
        "texts, pairs = json.loads(sys.argv[1])\n"
        "out = []\n"
        "for path in sys.argv[2:]:\n"
        "    run = ort.InferenceSession(path, options, providers=['CPUExecutionProvider'])\n"
        "    a = np.array(texts, object)\n"
        "    single = {'text_a': a, 'text_b': np.array([''], object)}\n"
        "    out.append([run.run(['probabilities'], single)[0].tolist(),\n"
        "                run.run(['probabilities'], {'text_a': a, 'text_b': np.array(pairs, object)}\n"
        "                        )[0].tolist()])\n"
        "assert not any(m.split('.')[0] in ('tensorflow', 'albert_tf', 'keras') for m in sys.modules)\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps([texts, pairs]),
                           *(str(folder / meta["text_files"][k])
                             for k in ("float32", "dynamic_int8"))],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]  # not a warning
    (single, paired), (single_int8, paired_int8) = json.loads(done.stdout)
    served = Predictor.open(root / "classifier")
    for got, int8, want in ((single, single_int8, served.predict(texts)),
                            (paired, paired_int8, served.predict(texts, pairs))):
        assert np.max(np.abs(np.array(got) - want)) <= 1e-4
        assert np.argmax(got, -1).tolist() == np.argmax(want, -1).tolist()
        assert np.mean(np.argmax(int8, -1) == np.argmax(got, -1)) >= 0.99
