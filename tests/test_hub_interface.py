"""TF Hub's BERT/ALBERT interface on our exports of the original checkpoint: both TensorFlow
tutorials' code (tests/support/hub_tutorials.py, run where tensorflow_hub and tf_keras are
installed: the `test` extra) against the original's goldens and the original tokenizer's ids,
and the interface itself (in this process: tf.saved_model.load, no tensorflow_hub)."""

import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.source_export import export_source, hub_seq_length
from albert_tf.text import hub_preprocessing
from support.golden import one_layer_config
from support.paths import REPO

pytest.importorskip("tensorflow_text", reason="the preprocessing export needs tensorflow-text")

PAIR_SEQ_LENGTH = 32  # the GLUE golden features' length


@pytest.fixture(scope="module")
def exports(tmp_path_factory, fixtures_dir):
    model = fixtures_dir / "model"
    out = export_source(str(model / "ckpt"), str(tmp_path_factory.mktemp("hub") / "exports"),
                        albert_config_file=str(model / "albert_config.json"),
                        spm_model_file=str(fixtures_dir / "spm" / "spm.model"), verify=False)
    return out


def _golden_texts(fixtures_dir):
    golden = json.loads((fixtures_dir / "tokenization" / "tokenization_golden.json")
                        .read_text("utf-8"))
    return [(case["text"], case["preprocess_text(lower=True)+tokenize"]["ids"])
            for case in golden["cases"]]


def _mrpc(fixtures_dir):
    """(raw text pairs, the original's features) of the MRPC golden rows."""
    glue = json.loads((fixtures_dir / "glue" / "glue_features.json").read_text("utf-8"))
    assert glue["max_seq_length"] == PAIR_SEQ_LENGTH
    pairs, features = [], []
    for split, rows in glue["tasks"]["MRPC"].items():
        with open(fixtures_dir / "glue" / "data" / "MRPC" / f"{split}.tsv", encoding="utf-8",
                  newline="") as handle:
            lines = list(csv.reader(handle, delimiter="\t", quotechar=None))[1:]
        real = [f for f in rows if f["is_real_example"]]
        assert len(lines) == len(real)
        pairs += [(line[3], line[4]) for line in lines]
        features += real
    return pairs, features


@pytest.fixture(scope="module")
def tutorials(exports, fixtures_dir, tmp_path_factory):
    for package in ("tensorflow_hub", "tf_keras"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"the tutorials need {package} (pip install -e '.[test]')")
    golden = np.load(fixtures_dir / "model" / "forward_golden.npz")
    pairs, _ = _mrpc(fixtures_dir)
    work = tmp_path_factory.mktemp("tutorials")
    request = {
        "golden_inputs": {"input_word_ids": golden["input_ids"].tolist(),
                          "input_mask": golden["input_mask"].tolist(),
                          "input_type_ids": golden["segment_ids"].tolist()},
        "masked_lm_positions": golden["masked_lm_positions"].tolist(),
        "texts": [text for text, _ in _golden_texts(fixtures_dir)],
        "pairs": pairs, "pair_seq_length": PAIR_SEQ_LENGTH,
        "train_texts": ["a fine film", "dull and long", "great fun", "not good"],
        "train_labels": [1, 0, 1, 0]}
    (work / "request.json").write_text(json.dumps(request), "utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3",
               CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "support" / "hub_tutorials.py"),
         exports["preprocessing"], exports["encoder"], str(work / "request.json"),
         str(work / "out")], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads((work / "out" / "results.json").read_text("utf-8"))
    with np.load(work / "out" / "arrays.npz") as arrays:
        return results, dict(arrays)


def test_encoder_outputs_match_the_original_goldens(tutorials, fixtures_dir):
    _, arrays = tutorials
    golden = np.load(fixtures_dir / "model" / "forward_golden.npz")
    for name, want in (("pooled_output", golden["pooled_output"]),
                       ("default", golden["pooled_output"]),
                       ("sequence_output", golden["sequence_output"]),
                       ("encoder_outputs", golden["all_encoder_layers"])):
        np.testing.assert_allclose(arrays[f"encoder/{name}"], want, atol=1e-5, err_msg=name)


def test_mlm_sub_object_matches_the_original_logits(tutorials, fixtures_dir):
    results, arrays = tutorials
    golden = np.load(fixtures_dir / "model" / "forward_golden.npz")
    batch, predictions = golden["masked_lm_positions"].shape
    assert arrays["mlm/mlm_logits"].shape == (batch, predictions, 1500)
    np.testing.assert_allclose(arrays["mlm/mlm_logits"],
                               golden["masked_lm_logits"].reshape(batch, predictions, -1),
                               atol=1e-5)
    np.testing.assert_allclose(arrays["mlm/pooled_output"], golden["pooled_output"], atol=1e-5)
    assert results["mlm/keys"] == ["default", "encoder_outputs", "mlm_logits", "pooled_output",
                                   "sequence_output"]
    assert results["mlm/keras_layer_shape"] == [batch, predictions, 1500]


def test_mlm_variables_are_the_heads_and_the_encoder_excludes_them(tutorials):
    results, _ = tutorials
    encoder, mlm = set(results["variables/encoder_trainable"]), \
        set(results["variables/mlm_trainable"])
    assert encoder < mlm
    head = mlm - encoder
    # cls/predictions: transform dense (kernel, bias), its LayerNorm (gamma, beta), output_bias.
    assert len(head) == 5 and all("predictions" in name for name in head), head
    assert not any("predictions" in name or "seq_relationship" in name for name in encoder)


def test_classify_tutorial_ids_equal_the_original_tokenizer(tutorials, fixtures_dir):
    results, _ = tutorials
    length = results["classify/shape"][1]
    assert sorted(results["classify/keys"]) == ["input_mask", "input_type_ids", "input_word_ids"]
    mismatched = set()
    for (text, ids), got in zip(_golden_texts(fixtures_dir), results["classify/text_ids"]):
        kept = ids[:length - 2]
        want = [2] + kept + [3] + [0] * (length - len(kept) - 2)
        if got != want:
            mismatched.add(text)
    # Every text, the two "https://www.example.org/..." ones included, whose "www" scores tie
    # (tensorflow-text's op alone breaks that tie differently: albert_tf.text.unigram).
    assert mismatched == set()
    assert len(results["classify/text_ids"]) == 224


def test_classify_tutorial_fine_tunes_the_encoder(tutorials):
    results, _ = tutorials
    assert results["classify/pooled_shape"] == [1, 32]
    assert all(np.isfinite(v).all() for v in results["classify/history"].values())
    assert set(results["classify/history"]) >= {"loss", "binary_accuracy", "val_loss"}
    assert results["classify/encoder_weights"] == results["classify/encoder_weights_changed"] > 0
    assert np.isfinite(results["glue/history"]["loss"]).all()


def test_glue_tutorial_pairs_equal_the_original_features(tutorials, fixtures_dir):
    results, _ = tutorials
    _, features = _mrpc(fixtures_dir)
    for hub_name, name in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                           ("input_type_ids", "segment_ids")):
        np.testing.assert_array_equal(results[f"glue/{hub_name}"], [f[name] for f in features],
                                      err_msg=name)
    assert len(features) >= 10


def test_glue_tutorial_tokenize_and_special_tokens(tutorials, fixtures_dir):
    results, _ = tutorials
    assert results["glue/special_tokens"] == {"vocab_size": 1500, "start_of_sequence_id": 2,
                                              "end_of_segment_id": 3, "padding_id": 0,
                                              "mask_id": 4}
    assert results["glue/tokenize_rank"] == 3
    for (text, ids), words in zip(_golden_texts(fixtures_dir), results["glue/tokenize"]):
        assert [i for word in words for i in word] == ids, text
    # The default lengths: 128 in the tutorial's own make_bert_preprocess_model, the export's
    # (here the model's 64 positions) when bert_pack_inputs is called without seq_length.
    assert results["glue/default_length"] == 128
    assert results["glue/pack_default_shape"] == [8, 64]


def test_hub_call_structure_in_this_process(exports):
    """The same objects through tf.saved_model.load (no tensorflow_hub)."""
    preprocess = tf.saved_model.load(exports["preprocessing"])
    tokens = preprocess.tokenize(tf.constant(["Hello world, again.", ""]))
    assert isinstance(tokens, tf.RaggedTensor) and tokens.shape.rank == 3
    assert tokens.to_list()[1] == []
    packed = preprocess(tf.constant(["Hello world, again."]))
    assert sorted(packed) == ["input_mask", "input_type_ids", "input_word_ids"]
    assert packed["input_word_ids"].shape == (1, 64) and packed["input_word_ids"].dtype == tf.int32
    flat = preprocess.bert_pack_inputs([tokens.merge_dims(1, 2)], seq_length=8)
    assert flat["input_word_ids"].shape == (2, 8)
    encoder = tf.saved_model.load(exports["encoder"])
    out = encoder(packed)
    np.testing.assert_array_equal(out["default"], out["pooled_output"])
    # Our own signatures stay: serving_default carries `default` too; the TF1 mlm signature;
    # fill_mask and embed on raw text (the export has the masked-LM head and a tokenizer).
    assert set(encoder.signatures) == {"serving_default", "tokens", "sop", "mlm", "fill_mask",
                                       "embed"}
    assert "default" in encoder.signatures["serving_default"].structured_outputs


def test_empty_second_segment_is_packed_as_tf_hub_does(exports):
    """TF Hub: [CLS] a [SEP] [SEP] (the last of type 1); ours (serve_pair, the original): a
    single sentence. Documented in docs/serving.md."""
    preprocess = tf.saved_model.load(exports["preprocessing"])
    a, b = preprocess.tokenize(tf.constant(["the program"])), preprocess.tokenize(tf.constant([""]))
    hub = preprocess.bert_pack_inputs([a, b], seq_length=8)
    ours = preprocess.signatures["serve_pair"](text_a=tf.constant(["the program"]),
                                              text_b=tf.constant([""]))
    pieces = a.merge_dims(1, 2).to_list()[0]
    real = 1 + len(pieces) + 1
    assert hub["input_word_ids"].numpy()[0, :real + 1].tolist() == [2, *pieces, 3, 3]
    assert hub["input_type_ids"].numpy()[0, :real + 1].tolist() == [0] * real + [1]
    assert ours["input_word_ids"].numpy()[0, :real + 1].tolist() == [2, *pieces, 3, 0]
    assert ours["input_type_ids"].numpy()[0].tolist() == [0] * 64


def test_hub_default_length_rule(tiny_config):
    class Source:
        sequence_length = None

    assert hub_seq_length(None, Source(), tiny_config) == 64  # max_position_embeddings 64
    assert hub_seq_length(48, Source(), tiny_config) == 48
    big = type(tiny_config)(**{**tiny_config.to_dict(), "max_position_embeddings": 512})
    assert hub_seq_length(None, Source(), big) == 128
    Source.sequence_length = 256
    assert hub_seq_length(None, Source(), big) == 256


def test_packing_equals_tensorflow_text_round_robin():
    """bert_pack_inputs trims and packs as Model Garden's BertPackInputs (RoundRobinTrimmer,
    combine_segments, pad_model_inputs), for every pair of lengths up to 8."""
    import tensorflow_text as text

    special = {"start_of_sequence_id": 2, "end_of_segment_id": 3, "padding_id": 0}
    lengths = [(a, b) for a in range(9) for b in range(9)]
    first = tf.ragged.constant([list(range(10, 10 + a)) for a, _ in lengths], tf.int32)
    second = tf.ragged.constant([list(range(50, 50 + b)) for _, b in lengths], tf.int32)
    for seq_length in (3, 4, 5, 8, 11, 20):
        for segments in ([first], [first, second], [second, first]):
            got = hub_preprocessing.bert_pack_inputs(segments, tf.constant(seq_length), special)
            trimmed = text.RoundRobinTrimmer(seq_length - len(segments) - 1).trim(segments)
            combined, types = text.combine_segments(trimmed, 2, 3)
            ids, mask = text.pad_model_inputs(combined, seq_length, pad_value=0)
            type_ids, _ = text.pad_model_inputs(types, seq_length, pad_value=0)
            for name, want in (("input_word_ids", ids), ("input_mask", mask),
                               ("input_type_ids", type_ids)):
                np.testing.assert_array_equal(got[name], want, err_msg=f"{seq_length} {name}")


def test_wordpiece_export_groups_words_and_names_its_special_tokens(tmp_path):
    from albert_tf import tokenization
    from albert_tf.serving.preprocessing import export_preprocessing
    from support.wordpiece_vocab import build_vocab

    texts = ["我爱中国人，unaffable strasse!", "Hello there, naive cafe."]
    vocab = build_vocab(tmp_path / "vocab.txt", texts)
    path = export_preprocessing(None, str(tmp_path / "pre"), max_seq_length=24,
                                vocab_file=str(tmp_path / "vocab.txt"))
    preprocess = tf.saved_model.load(path)
    special = {k: int(v) for k, v in preprocess.tokenize.get_special_tokens_dict().items()}
    assert special == {"vocab_size": len(vocab), "start_of_sequence_id": 2,
                       "end_of_segment_id": 3, "padding_id": 0, "mask_id": 4}
    words = preprocess.tokenize(tf.constant(texts)).to_list()
    tokenizer = tokenization.FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    for text, row in zip(texts, words):
        pieces = [[vocab[i] for i in word] for word in row]
        assert [p for word in pieces for p in word] == tokenizer.tokenize(text)
        assert all(not word[0].startswith("##") and all(p.startswith("##") for p in word[1:])
                   for word in pieces)
    packed = preprocess(tf.constant(texts))
    assert packed["input_word_ids"].shape == (2, 24)


def test_an_mlm_only_source_exports_the_mlm_parts_without_sop(fixtures_dir, tmp_path):
    """A source with the masked-LM head alone (as Hugging Face's AlbertForMaskedLM): `.mlm`
    and the TF1 `mlm` signature, no `sop` (its head would be untrained). The golden model with
    one layer (its layers share one group): the export's subject, not depth."""
    from albert_tf import AlbertConfig, AlbertPretrainer
    from albert_tf.weights import tf1_checkpoint as checkpoint

    model_dir = fixtures_dir / "model"
    config_file = one_layer_config(model_dir, tmp_path / "albert_config.json")
    pretrainer = AlbertPretrainer(AlbertConfig.from_json_file(config_file))
    checkpoint.load_tf1_checkpoint(pretrainer, str(model_dir / "ckpt"))
    arrays = {k: v for k, v in checkpoint.tf1_weights(pretrainer).items()
              if not k.startswith("cls/seq_relationship")}
    checkpoint.write_tf1_checkpoint(arrays, str(tmp_path / "mlm_only" / "model.ckpt"))
    out = export_source(str(tmp_path / "mlm_only" / "model.ckpt"), str(tmp_path / "exports"),
                        albert_config_file=str(config_file))
    assert out["heads"] == ["mlm"] and "mlm/mlm_logits" in out["encoder_check"]
    encoder = tf.saved_model.load(out["encoder"])
    assert set(encoder.signatures) == {"serving_default", "tokens", "mlm"}
    golden = np.load(model_dir / "forward_golden.npz")
    feed = {"input_ids": golden["input_ids"], "input_mask": golden["input_mask"],
            "segment_ids": golden["segment_ids"],
            "masked_lm_positions": golden["masked_lm_positions"]}
    logits = encoder.mlm({"input_word_ids": feed["input_ids"], "input_mask": feed["input_mask"],
                          "input_type_ids": feed["segment_ids"],
                          "masked_lm_positions": feed["masked_lm_positions"]})["mlm_logits"]
    np.testing.assert_allclose(logits.numpy(), pretrainer(feed)["masked_lm_logits"], atol=1e-5)


def test_invalid_utf8_and_short_seq_length_are_refused(exports):
    # Invalid UTF-8 was tokenized silently; seq_length=0 packed an empty row and a negative one
    # gave a raw TensorFlow error.
    preprocess = tf.saved_model.load(exports["preprocessing"])
    for call in (preprocess.tokenize, preprocess):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"serving input strings is not valid UTF-8 text; rows:.*\[1\]"):
            call(tf.constant([b"fine", b"caf\xe9"]))
    tokens = preprocess.tokenize(tf.constant(["Hello world, again."]))
    for length in (0, -4):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"bert_pack_inputs: seq_length must be at least 3"):
            preprocess.bert_pack_inputs([tokens], seq_length=length)
    assert preprocess.bert_pack_inputs([tokens], seq_length=3)["input_word_ids"].shape == (1, 3)
    from albert_tf.errors import UsageError

    with pytest.raises(UsageError, match=r"seq_length must be at least 3 .*got 0"):
        hub_preprocessing.bert_pack_inputs([tokens.merge_dims(1, 2)], 0,
                                           {"start_of_sequence_id": 2, "end_of_segment_id": 3})
