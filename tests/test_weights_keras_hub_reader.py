"""albert_tf.weights.readers.keras_hub: keras-hub presets load into our models and give keras-hub's
own outputs (fixtures saved by keras-hub 0.32)."""

import json
import shutil

import numpy as np
import pytest

from support.interop import assert_close, complete_outputs, expected, interop, loaded, run


def _source(name):
    from albert_tf.weights import open_source

    return open_source(interop("keras_hub", name))


def test_backbone_preset_gives_keras_hub_outputs():
    from albert_tf.models import AlbertModel

    source = _source("backbone")
    assert source.format == "keras_hub" and source.heads == ()
    assert source.config.hidden_act == "gelu" and source.config.intermediate_size == 37
    assert source.spm_model_file.endswith("vocabulary.spm") and source.do_lower_case is False
    out, want = complete_outputs(AlbertModel, source, "keras_hub", "backbone")
    assert_close(out["sequence_output"], want["sequence_output"], "sequence_output")
    assert_close(out["pooled_output"], want["pooled_output"], "pooled_output")


def test_text_classifier_preset_gives_keras_hub_logits():
    from albert_tf.models import AlbertClassifier

    source = _source("classifier")
    assert source.heads == ("classifier",) and source.num_labels == 4
    assert source.sequence_length == 20  # keras-hub's preprocessor truncates raw text there
    out, want = complete_outputs(AlbertClassifier, source, "keras_hub", "classifier", num_labels=4)
    assert_close(out["logits"], want["logits"], "logits")


def test_other_classes_are_refused_by_name(tmp_path):
    from albert_tf.weights import SourceError, open_source

    folder = tmp_path / "preset"
    shutil.copytree(interop("keras_hub", "backbone"), folder)
    values = json.loads((folder / "config.json").read_text())
    values["class_name"] = "BertBackbone"
    (folder / "config.json").write_text(json.dumps(values))
    with pytest.raises(SourceError, match="class_name is 'BertBackbone'"):
        open_source(folder)


def test_raw_text_as_keras_hub_tokenizes_it_gives_its_text_logits():
    """What a raw-text export must do to match keras-hub's own `predict(texts)`: SentencePiece
    without lower-casing, [CLS] + the first S-2 pieces + [SEP], padded to S (here 20)."""
    from albert_tf.models import AlbertClassifier
    from albert_tf.tokenization import FullTokenizer

    source = _source("classifier")
    want = expected("keras_hub", "classifier")
    tokenizer = FullTokenizer(spm_model_file=source.spm_model_file,
                              do_lower_case=source.do_lower_case)
    length, ids, mask = source.sequence_length, [], []
    for text in want["texts"]:
        pieces = ["[CLS]"] + tokenizer.tokenize(str(text))[:length - 2] + ["[SEP]"]
        row = tokenizer.convert_tokens_to_ids(pieces)
        ids.append(row + [0] * (length - len(row)))
        mask.append([1] * len(row) + [0] * (length - len(row)))
    model, _ = loaded(AlbertClassifier, source, num_labels=4)
    feed = {"input_ids": np.array(ids, "int32"), "input_mask": np.array(mask, "int32"),
            "segment_ids": np.zeros((len(ids), length), "int32")}
    assert_close(run(model, feed)["logits"], want["text_logits"], "text_logits")
