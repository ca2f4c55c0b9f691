"""TFLite files: builtin ops only, float32 equal to the Keras model (golden checkpoint), int8
close to it, resizable batch, the files beside them, and the errors a user sees."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer, checkpoint
from albert_tf.errors import UsageError
from albert_tf.serving import tflite
from albert_tf.serving.lite import LiteRunner
from albert_tf.models import AlbertClassifier, AlbertModel, AlbertSquadV1
from support.configs import tiny_config


@pytest.fixture(scope="module")
def golden(fixtures_dir):
    return dict(np.load(fixtures_dir / "model" / "forward_golden.npz"))


@pytest.fixture(scope="module")
def golden_export(fixtures_dir, tmp_path_factory):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    model = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(model, str(fixtures_dir / "model" / "ckpt" / "model.ckpt"))
    folder = tmp_path_factory.mktemp("tflite")
    written = tflite.export_tflite(model, folder, 24, "float32,dynamic_int8",
                                   spm_model_file=fixtures_dir / "spm" / "spm.model")
    return model, folder, written


def _golden_inputs(golden):
    return {"input_word_ids": golden["input_ids"], "input_mask": golden["input_mask"],
            "input_type_ids": golden["segment_ids"]}


def test_float32_file_matches_keras_and_the_original(golden, golden_export):
    model, _, written = golden_export
    got = LiteRunner(written["float32"])(**_golden_inputs(golden))
    keras_out = model.encoder({"input_ids": golden["input_ids"], "input_mask": golden["input_mask"],
                               "segment_ids": golden["segment_ids"]})
    for name in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[name], keras_out[name].numpy(), atol=1e-4, rtol=0)
        np.testing.assert_allclose(got[name], golden[name], atol=1e-4, rtol=0)


def test_int8_file_is_close_and_smaller(golden, golden_export):
    _, _, written = golden_export
    got = LiteRunner(written["dynamic_int8"])(**_golden_inputs(golden))["pooled_output"]
    want = golden["pooled_output"]
    cosine = np.sum(got * want, -1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
    assert cosine.min() >= 0.99, cosine
    # Tensors under 1024 values (biases, LayerNorm, this tiny model's kernels) stay float32.
    assert os.path.getsize(written["dynamic_int8"]) < 0.6 * os.path.getsize(written["float32"])


def test_one_converter_for_every_kind_keeps_each_kinds_settings_apart(golden_export):
    """`convert` sets one converter up for each kind in turn: float16's settings must not
    leak into the dynamic_int8 file made after it."""
    model, _, written = golden_export
    after_float16 = tflite.convert(model, 24, "float16,dynamic_int8")
    with open(written["dynamic_int8"], "rb") as handle:  # made after float32 there
        assert after_float16["dynamic_int8"] == handle.read()
    assert after_float16["float16"] != after_float16["dynamic_int8"]


def test_files_hold_builtin_ops_only(golden_export):
    _, folder, written = golden_export
    meta = json.loads((folder / "encoder.json").read_text())
    for kind in ("float32", "dynamic_int8"):
        with open(written[kind], "rb") as reader:
            found = tflite.operators(reader.read())
        assert "FULLY_CONNECTED" in found and "BATCH_MATMUL" in found
        assert not any(found.values()), [name for name, custom in found.items() if custom]
        assert meta["operators"][kind] == sorted(found)
    assert meta["inputs"] == ["input_word_ids", "input_mask", "input_type_ids"]
    assert meta["outputs"] == ["pooled_output", "sequence_output"]
    assert meta["max_seq_length"] == 24 and meta["spm_model_file"] == "spm.model"
    assert meta["num_hidden_layers"] == 4  # the passes the file runs (the fixture's config)
    assert sorted(os.listdir(folder)) == ["encoder.dynamic_int8.tflite", "encoder.float32.tflite",
                                          "encoder.json", "spm.model"]  # no temporaries left


def test_inputs_are_batch_one_and_resizable(tmp_path, tiny_batch):
    # Tolerances about 10x the errors measured on 2026-11-29 against logits of standard deviation
    # 0.07-0.09: float32 1.7e-8 (2e-7), float16 weights 7e-5-8.3e-5 (1e-3).
    keras.utils.set_random_seed(5)
    model = AlbertSquadV1(tiny_config())
    written = tflite.export_tflite(model, tmp_path, 12, ["float32", "float16"])
    assert os.path.basename(written["float16"]) == "squad.float16.tflite"
    runner = LiteRunner(written["float32"])
    for detail in runner.input_details.values():
        assert list(detail["shape"]) == [1, 12] and detail["dtype"] == np.int32
    feed = {"input_word_ids": tiny_batch["input_ids"], "input_mask": tiny_batch["input_mask"],
            "input_type_ids": tiny_batch["segment_ids"]}
    want = model({k: tiny_batch[k] for k in ("input_ids", "input_mask", "segment_ids")})
    for rows in (slice(0, 2), slice(1, 2), slice(0, 2)):  # batch 2, then 1, then 2 again
        got = runner(**{k: v[rows] for k, v in feed.items()})
        for name in ("start_logits", "end_logits"):
            np.testing.assert_allclose(got[name], want[name].numpy()[rows], atol=2e-7)
    half = LiteRunner(written["float16"])(**feed)
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(half[name], want[name].numpy(), atol=1e-3, err_msg=name)


def test_a_model_needing_flex_ops_is_refused(tmp_path):
    model = AlbertModel(tiny_config())

    def call(input_word_ids, input_mask, input_type_ids):
        pooled = model({"input_ids": input_word_ids})["pooled_output"]
        square = tf.matmul(pooled[:, :4, None], pooled[:, None, :4]) + tf.eye(4)
        return {"inverse": tf.linalg.inv(square)}  # MatrixInverse: no TFLite builtin

    with pytest.raises(tflite.TFLiteExportError, match="does not convert to TFLite builtin ops"):
        tflite.export_tflite(model, tmp_path, 8, "float32", name="odd", outputs=["inverse"],
                             call=call)
    assert not list(tmp_path.iterdir())


def test_other_models_are_named_in_the_error(tmp_path):
    from albert_tf.models import AlbertSquadV2

    with pytest.raises(tflite.TFLiteExportError, match="AlbertSquadV2"):
        tflite.export_tflite(AlbertSquadV2(tiny_config()), tmp_path, 8, "float32")


def test_missing_output_is_named(tmp_path):
    with pytest.raises(tflite.TFLiteExportError, match="no output 'probs'"):
        tflite.export_tflite(AlbertClassifier(tiny_config(), 2), tmp_path, 8, "float32",
                             outputs=["probs"])


def test_parse_kinds():
    assert tflite.parse_kinds("dynamic_int8, float32") == ("float32", "dynamic_int8")
    assert tflite.parse_kinds("") == () and tflite.parse_kinds(None) == ()
    with pytest.raises(UsageError, match="--tflite: unknown kind 'int8'"):
        tflite.parse_kinds("float32,int8")


def test_float16_file_holds_half_precision_weights_on_a_model_large_enough():
    # float16 with its supported type but without the converter's optimization flag is a plain
    # float32 file: within 1e-3 of the model, so only its size and operators tell. The tiny
    # config's file is mostly graph (31 KB against 35 KB); at 45k parameters it is 60 %.
    config = tiny_config(hidden_size=64, intermediate_size=128, embedding_size=32)
    keras.utils.set_random_seed(3)
    model = AlbertModel(config)
    ids = np.random.RandomState(0).randint(5, 100, (2, 8)).astype(np.int32)
    want = model({"input_ids": ids})["sequence_output"].numpy()
    files = tflite.convert(model, 8, "float32,float16")
    assert "DEQUANTIZE" in tflite.operators(files["float16"])  # float16 weights, dequantized
    assert "DEQUANTIZE" not in tflite.operators(files["float32"])
    assert len(files["float16"]) < 0.65 * len(files["float32"])  # measured 0.60
    got = LiteRunner(model_content=files["float16"])(
        input_word_ids=ids, input_mask=np.ones_like(ids), input_type_ids=np.zeros_like(ids))
    # Measured 8.9e-4 (float32: 4.8e-7) on outputs of standard deviation 0.6.
    np.testing.assert_allclose(got["sequence_output"], want, atol=1e-2)
