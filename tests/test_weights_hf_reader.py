"""albert_tf.weights.readers.hf: Hugging Face ALBERT folders load into our models and give
transformers' own outputs (fixtures saved by transformers 5.23)."""

import json
import os
import shutil
import sys

import numpy as np
import pytest

from support.interop import assert_close, complete_outputs, expected, inputs, interop, loaded, run


def _source(name):
    from albert_tf.weights import open_source

    return open_source(interop("hf", name))


def test_pretraining_folder_gives_transformers_outputs():
    from albert_tf.models import AlbertPretrainer

    source = _source("pretraining")
    assert source.format == "hf" and source.heads == ("mlm", "sop")
    assert source.config.hidden_act == "gelu" and source.config.embedding_size == 16
    assert source.spm_model_file.endswith("spiece.model") and source.do_lower_case is True
    out, want = complete_outputs(AlbertPretrainer, source, "hf", "pretraining")
    assert_close(out["sequence_output"], want["last_hidden_state"], "last_hidden_state")
    assert_close(out["pooled_output"], want["pooler_output"], "pooler_output")
    assert_close(out["masked_lm_logits"], want["prediction_logits"], "prediction_logits")
    assert_close(out["sentence_order_logits"], want["sop_logits"], "sop_logits")


def test_classifier_folder_gives_transformers_logits_and_labels():
    from albert_tf.models import AlbertClassifier

    source = _source("classifier")
    assert source.heads == ("classifier",) and source.num_labels == 3
    assert source.labels == ["LABEL_0", "LABEL_1", "LABEL_2"]
    out, want = complete_outputs(AlbertClassifier, source, "hf", "classifier", num_labels=3)
    assert_close(out["logits"], want["logits"], "logits")


def test_question_answering_folder_gives_span_logits_and_says_the_pooler_is_made_up():
    from albert_tf.models import AlbertModel, AlbertSquadV1

    source = _source("qa")
    assert source.heads == ("squad_v1",)
    assert source.filled == ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")
    assert "set to zeros" in source.describe()
    model, _ = loaded(AlbertSquadV1, source)
    out, want = run(model, inputs()), expected("hf", "qa")
    assert_close(out["start_logits"], want["start_logits"], "start_logits")
    assert_close(out["end_logits"], want["end_logits"], "end_logits")
    # The same weights as an encoder: the head is reported as left over.
    _, report = loaded(AlbertModel, source)
    assert report.unused == ["cls/squad/output_bias", "cls/squad/output_weights"]


def _copy(name, tmp_path, edit=None):
    folder = tmp_path / name
    shutil.copytree(interop("hf", name), folder)
    if edit:
        values = json.loads((folder / "config.json").read_text())
        edit(values)
        (folder / "config.json").write_text(json.dumps(values))
    return folder


def test_bare_albert_model_without_prefix_loads(tmp_path):
    from safetensors.numpy import load_file, save_file

    from albert_tf.weights import open_source
    from albert_tf.models import AlbertModel

    folder = _copy("classifier", tmp_path, lambda v: v.update(architectures=["AlbertModel"]))
    tensors = load_file(folder / "model.safetensors")
    bare = {k[len("albert."):]: v for k, v in tensors.items() if k.startswith("albert.")}
    save_file(bare, folder / "model.safetensors", metadata={"format": "pt"})
    source = open_source(folder)
    assert source.heads == ()
    model, report = loaded(AlbertModel, source)
    assert report.unused == []
    assert_close(run(model, inputs())["sequence_output"],
                 expected("hf", "classifier")["last_hidden_state"], "last_hidden_state")


@pytest.mark.parametrize("key, value, words", [
    ("hidden_act", "gelu", ["hidden_act", "erf"]),
    ("hidden_act", "silu", ["hidden_act", "'silu'"]),
    ("layer_norm_eps", 1e-5, ["layer_norm_eps"]),
    ("model_type", "bert", ["model_type", "'bert'"]),
])
def test_what_albert_cannot_compute_is_refused_by_key(tmp_path, key, value, words):
    from albert_tf.weights import SourceError, open_source

    folder = _copy("pretraining", tmp_path, lambda v: v.update({key: value}))
    with pytest.raises(SourceError, match=key) as error:
        open_source(folder)
    assert all(w in str(error.value) for w in words), str(error.value)


def test_pytorch_pickle_without_torch_is_one_clear_error(tmp_path, monkeypatch):
    from albert_tf.weights import SourceError, open_source

    folder = _copy("pretraining", tmp_path)
    os.rename(folder / "model.safetensors", folder / "pytorch_model.bin")
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    with pytest.raises(SourceError, match="pytorch_model.bin: PyTorch pickles need torch"):
        open_source(folder).arrays


def test_untied_decoder_is_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    from albert_tf.weights import SourceError, open_source

    folder = _copy("pretraining", tmp_path)
    tensors = load_file(folder / "model.safetensors")
    tensors["predictions.decoder.weight"] = tensors["albert.embeddings.word_embeddings.weight"] + 1
    save_file(tensors, folder / "model.safetensors")
    with pytest.raises(SourceError, match="tie_word_embeddings"):
        open_source(folder).arrays
    # tied (as older versions saved it): accepted and dropped
    tensors["predictions.decoder.weight"] = tensors["albert.embeddings.word_embeddings.weight"]
    save_file(tensors, folder / "model.safetensors")
    assert "predictions.decoder.weight" not in open_source(folder).arrays


def test_multiple_choice_and_token_classifier_heads_are_told_apart(tmp_path):
    from safetensors.numpy import load_file, save_file

    from albert_tf.weights import open_source
    from albert_tf.weights.writers.hf import write_hf
    from albert_tf.models import AlbertModel, AlbertMultipleChoice

    folder = _copy("classifier", tmp_path,
                   lambda v: v.update(architectures=["AlbertForMultipleChoice"]))
    tensors = load_file(folder / "model.safetensors")
    tensors["classifier.weight"] = tensors["classifier.weight"][:1]
    tensors["classifier.bias"] = tensors["classifier.bias"][:1]
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    source = open_source(folder)
    assert source.heads == ("multiple_choice",) and source.num_labels is None
    _, report = loaded(AlbertMultipleChoice, source)
    assert report.missing == [] and report.unused == []
    assert write_hf(source, tmp_path / "out").architecture == "AlbertForMultipleChoice"
    assert sorted(load_file(tmp_path / "out" / "model.safetensors")) == sorted(tensors)

    token = _copy("classifier", tmp_path / "token",
                  lambda v: v.update(architectures=["AlbertForTokenClassification"]))
    source = open_source(token)
    assert source.heads == ("token_classifier",)  # run_ner's head (test_token_classifier_weights)
    _, report = loaded(AlbertModel, source)
    assert report.unused == ["token_classifier/output_bias", "token_classifier/output_weights"]


def test_sharded_safetensors_read_as_one(tmp_path):
    from safetensors.numpy import load_file, save_file

    from albert_tf.weights import open_source

    folder = _copy("pretraining", tmp_path)
    tensors = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[:10],
              "model-00002-of-00002.safetensors": names[10:]}
    for shard, keys in shards.items():
        save_file({k: tensors[k] for k in keys}, folder / shard, metadata={"format": "pt"})
    index = {"metadata": {}, "weight_map": {k: s for s, keys in shards.items() for k in keys}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    whole = open_source(interop("hf", "pretraining"))
    sharded = open_source(folder)
    assert sorted(sharded.arrays) == sorted(whole.arrays)
    for name, value in whole.arrays.items():
        np.testing.assert_array_equal(sharded.arrays[name], value, err_msg=name)
