import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer, checkpoint, preset
from albert_tf.serving.encoder import build_module, export_encoder
from albert_tf.serving.reference import expected_encoder_outputs, sample_inputs
from albert_tf.serving.saved_model import versioned_dir, write_saved_model
from albert_tf.serving.verify import compare, verify_in_fresh_process
from support.serving import function_input_types, saved_model_cli, xla_compiled_functions


@pytest.fixture(scope="module")
def golden_export(tmp_path_factory, fixtures_dir):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    model = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(model, str(fixtures_dir / "model" / "ckpt"))
    path = export_encoder(model, str(tmp_path_factory.mktemp("export") / "encoder"))
    return model, config, path


def test_every_signature_matches_keras_in_a_fresh_process(golden_export):
    model, config, path = golden_export
    calls, expected = expected_encoder_outputs(model, config)
    assert set(calls) == {"serving_default", "tokens", "sop", "mlm"}
    report = compare(expected, verify_in_fresh_process(path, calls))
    assert max(report.values()) <= 1e-5


def test_saved_model_cli_lists_the_documented_signatures(golden_export):
    _, _, path = golden_export
    out = saved_model_cli("show", "--dir", path, "--all").stdout
    for name in ("serving_default", "tokens", "sop", "mlm"):
        assert f"signature_def['{name}']" in out
    for name in ("input_word_ids", "input_type_ids", "pooled_output", "sequence_output",
                 "encoder_outputs", "sop_log_probs", "mlm_logits", "mlm_positions"):
        assert name in out


def _saved_model_cli(args):
    # With tensorflow_text imported (its ops are not built into TensorFlow).
    return saved_model_cli(*args)


def test_saved_model_cli_run_restores_variables_like_tf_serving(golden_export, tmp_path):
    """`saved_model_cli run` uses the TF1-style loader that TF Serving uses (not tf.saved_model.load)."""
    model, config, path = golden_export
    ids, mask, types, positions = sample_inputs(config)
    inputs = {"input_ids": ids, "input_mask": mask, "segment_ids": types, "mlm_positions": positions}
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
    arg = ";".join(f"{n}={tmp_path / n}.npy" for n in inputs)
    _saved_model_cli(["run", "--dir", path, "--tag_set", "serve", "--signature_def", "mlm",
                      "--inputs", arg, "--outdir", str(tmp_path / "out")])
    expected = model({**inputs, "masked_lm_positions": positions})
    np.testing.assert_allclose(np.load(tmp_path / "out" / "pooled_output.npy"), expected["pooled_output"], atol=1e-5)
    logits = expected["masked_lm_logits"].numpy()
    np.testing.assert_allclose(np.load(tmp_path / "out" / "mlm_logits.npy"),
                               logits.reshape(-1, logits.shape[-1]), atol=1e-5)


def test_hub_call_convention_and_keras_layer(golden_export):
    model, config, path = golden_export
    ids, mask, types, _ = sample_inputs(config)
    inputs = {"input_word_ids": tf.constant(ids), "input_mask": tf.constant(mask),
              "input_type_ids": tf.constant(types)}
    expected = model.encoder({"input_ids": ids, "input_mask": mask, "segment_ids": types})
    loaded = tf.saved_model.load(path)
    out = loaded(inputs, training=False)
    assert isinstance(out["encoder_outputs"], list) and len(out["encoder_outputs"]) == 4
    np.testing.assert_allclose(out["pooled_output"], expected["pooled_output"], atol=1e-5)
    layer = keras.layers.TFSMLayer(path)
    np.testing.assert_allclose(layer(inputs)["sequence_output"], expected["sequence_output"], atol=1e-5)


def test_serving_xla_compiles_the_id_signatures_with_the_same_outputs(golden_export, tmp_path):
    _, config, plain = golden_export
    # One layer: XLA's compile time grows with the graph, and one layer shows the same.
    config = config.replace(num_hidden_layers=1)
    model = AlbertModel(config)
    path = export_encoder(model, str(tmp_path / "xla"), xla=True)
    # The default export compiles nothing (the fused GELU of training=True's __call__ is
    # compiled in every export).
    assert [f for f in xla_compiled_functions(plain) if "gelu" not in f] == []
    # One compiled encoder call, shared by serving_default, serve and tokens, with the weights
    # as constants: it takes the three id inputs and no variable.
    compiled = [f for f in xla_compiled_functions(path) if "gelu" not in f]
    assert len(compiled) == 1 and "frozen_encoder" in compiled[0]
    assert function_input_types(path, compiled[0]) == [tf.int32.as_datatype_enum] * 3
    ids, mask, types, _ = sample_inputs(config)
    expected = model({"input_ids": ids, "input_mask": mask, "segment_ids": types})
    loaded = tf.saved_model.load(path)
    out = loaded.signatures["serving_default"](input_word_ids=tf.constant(ids),
                                               input_mask=tf.constant(mask),
                                               input_type_ids=tf.constant(types))
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(out[key], expected[key], atol=1e-5)
    # TF-Hub's __call__ (fine-tuning) stays uncompiled and still trains.
    hub = loaded({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types},
                 training=False)
    np.testing.assert_allclose(hub["pooled_output"], expected["pooled_output"], atol=1e-5)


def test_encoder_only_model_has_no_pretraining_signatures(tmp_path):
    config = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=12, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)
    path = export_encoder(AlbertModel(config), str(tmp_path))
    assert set(tf.saved_model.load(path).signatures) == {"serving_default", "tokens"}


def test_shared_weights_are_saved_once(tmp_path):
    # Three layers sharing one block (as base's twelve do; tracing costs time per layer): the
    # export holds one copy of the block, so ALBERT-base's is its 11,683,584 floats, ~47 MB.
    config = preset("albert_base_v2", vocab_size=300, embedding_size=16, hidden_size=32,
                    intermediate_size=48, num_attention_heads=2, num_hidden_layers=3)
    model = AlbertModel(config)
    one_copy = sum(int(np.prod(v.shape)) for v in model.weights)
    path = export_encoder(model, str(tmp_path))
    loaded = tf.saved_model.load(path)
    floats = sum(int(np.prod(v.shape)) for v in loaded.variables if v.dtype == tf.float32)
    assert floats == one_copy and len(loaded.trainable_variables) == 25
    data = sum(os.path.getsize(os.path.join(path, "variables", f))
               for f in os.listdir(os.path.join(path, "variables")) if ".data-" in f)
    assert 4 * one_copy <= data < 4 * one_copy + 20_000  # float32 values, and little else


def test_versions_and_no_overwrite(tmp_path):
    assert versioned_dir(tmp_path / "m").endswith(os.path.join("m", "1"))
    (tmp_path / "m" / "3").mkdir(parents=True)
    assert versioned_dir(tmp_path / "m").endswith(os.path.join("m", "4"))
    config = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=12, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)
    with pytest.raises(FileExistsError, match="exists"):
        export_encoder(AlbertModel(config), str(tmp_path / "m"), version=3)


def test_save_reuses_the_traces_of_the_hub_calls(tmp_path):
    """TF Hub's `__call__` and `mlm` are traced once per `training` value while the module is
    built; saving it must not trace them again (it did while their specs had no names)."""
    config = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=12, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)
    model = AlbertPretrainer(config)
    root, signatures = build_module(model)
    calls = (root.__call__, root.mlm.__call__)
    assert [f.experimental_get_tracing_count() for f in calls] == [2, 2]
    write_saved_model(root, str(tmp_path), signatures)
    assert [f.experimental_get_tracing_count() for f in calls] == [2, 2]
