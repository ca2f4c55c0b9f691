import json
import os
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer
from albert_tf.serving.reference import load_model
from albert_tf.source_export import export_source
from albert_tf.optimization import create_optimizer
from albert_tf.training import CheckpointState
from support.entry_points import run_entry_point
from support.serving import xla_compiled_functions



def _tiny():
    return AlbertConfig(vocab_size=40, embedding_size=8, hidden_size=12, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)


def test_cli_exports_an_original_checkpoint_and_verifies_it(tmp_path, fixtures_dir):
    model_dir = fixtures_dir / "model"
    proc = run_entry_point("export_saved_model.py", [
        f"--albert_config_file={model_dir / 'albert_config.json'}",
        f"--init_checkpoint={model_dir / 'ckpt' / 'model.ckpt'}",
        f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}", "--max_seq_length=32",
        f"--export_dir={tmp_path}", "--tflite=dynamic_int8", "--json"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)  # --json: stdout is the result, nothing else
    assert result["model"] == "AlbertPretrainer"
    assert result["encoder"] == str(tmp_path / "encoder" / "1")
    assert result["preprocessing"] == str(tmp_path / "preprocessing" / "1")
    assert max(result["encoder_check"].values()) <= 1e-5
    assert "mlm/mlm_logits" in result["encoder_check"] and "sop/sop_log_probs" in result["encoder_check"]
    assert max(result["preprocessing_check"].values()) == 0
    # --tflite: the encoder file (of the pretrainer's encoder) and the tokenizer beside it,
    # versioned with the SavedModel encoder/1: encoder/tflite/1.
    folder = tmp_path / "encoder" / "tflite" / "1"
    assert result["tflite"]["encoder"]["dynamic_int8"] == str(folder / "encoder.dynamic_int8.tflite")
    assert sorted(os.listdir(folder)) == ["encoder.dynamic_int8.tflite", "encoder.json", "spm.model"]


def test_our_training_checkpoints_load_for_export(tmp_path):
    config = _tiny()
    pretrainer = AlbertPretrainer(config)
    state = CheckpointState(tmp_path / "run", pretrainer, create_optimizer(1e-3, 10, 1, "lamb"))
    state.save(step=5)
    loaded = load_model(config, str(tmp_path / "run"))
    assert isinstance(loaded, AlbertPretrainer)
    for a, b in zip(loaded.weights, pretrainer.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    encoder = AlbertModel(config)
    tf.train.Checkpoint(model=encoder).write(str(tmp_path / "enc" / "ckpt"))
    assert isinstance(load_model(config, str(tmp_path / "enc" / "ckpt")), AlbertModel)
    config.to_json_file(tmp_path / "albert_config.json")
    result = export_source(str(tmp_path / "run"), str(tmp_path / "exports"),
                           str(tmp_path / "albert_config.json"), verify=False)
    assert os.path.exists(os.path.join(result["encoder"], "saved_model.pb"))


def test_pretraining_checkpoint_warm_starts_a_task_model(tmp_path):
    from albert_tf.models import AlbertClassifier
    from albert_tf.weights import init_from_checkpoint

    config = _tiny()
    pretrainer = AlbertPretrainer(config)
    CheckpointState(tmp_path / "run", pretrainer, create_optimizer(1e-3, 10, 1, "lamb")).save(step=3)
    classifier = AlbertClassifier(config, 2)
    head = classifier.output_weights.numpy().copy()
    message = init_from_checkpoint(classifier, str(tmp_path / "run"))
    assert "encoder restored" in message and "heads loaded: none" in message
    assert "not used: mlm, sop" in message and "left at their init): classifier" in message
    for a, b in zip(classifier.encoder.weights, pretrainer.encoder.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(classifier.output_weights.numpy(), head)
    # A classifier checkpoint restores the head as well.
    CheckpointState(tmp_path / "cls", classifier, create_optimizer(1e-3, 10, 1, "adamw")).save(step=1)
    again = AlbertClassifier(config, 2)
    assert "heads loaded: classifier" in init_from_checkpoint(again, str(tmp_path / "cls"))
    np.testing.assert_array_equal(again.output_weights.numpy(), head)


def _export_script(*args, cwd):
    proc = run_entry_point("export_saved_model.py", args, cwd=cwd)
    return proc


def _tiny_tf1_checkpoint(directory):
    from albert_tf.checkpoint import save_tf1_checkpoint

    config = _tiny()
    directory.mkdir()
    (directory / "albert_config.json").write_text(config.to_json_string())
    save_tf1_checkpoint(AlbertModel(config), str(directory / "model.ckpt"))


def test_cli_relative_paths_are_verified_and_published_once(tmp_path):
    """The README's `--export_dir=exports`, run from another folder with every path relative:
    the fresh-process check (which runs in its own folder) passes and exactly one version
    folder appears. With --serving_xla, so that check also covers the XLA-compiled encoder."""
    _tiny_tf1_checkpoint(tmp_path / "model")
    proc = _export_script("--albert_config_file=model/albert_config.json",
                          "--init_checkpoint=model/model.ckpt", "--export_dir=exports",
                          "--serving_xla", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Without --json: a short gist, each export where it was written and the check's result.
    encoder = str(tmp_path / "exports" / "encoder" / "1")
    gist = proc.stdout.splitlines()
    assert gist[0].startswith("exported ") and "model/model.ckpt" in gist[0] \
        and gist[0].endswith(" to exports:"), gist
    assert gist[1:-1] == [f"  encoder  {encoder}"], gist
    check = re.fullmatch(r"each checked in a fresh process against the Keras model \(largest "
                         r"difference (\S+)\); --json prints every detail", gist[-1])
    assert check and float(check.group(1)) <= 1e-5, gist[-1]
    assert os.listdir(tmp_path / "exports" / "encoder") == ["1"]
    assert any("frozen_encoder" in f for f in xla_compiled_functions(encoder))


def test_cli_errors_are_one_line_and_write_nothing(tmp_path):
    _tiny_tf1_checkpoint(tmp_path / "model")
    (tmp_path / "bare").mkdir()  # the same checkpoint without its albert_config.json
    for path in (tmp_path / "model").glob("model.ckpt*"):
        shutil.copy(path, tmp_path / "bare" / path.name)
    wide = tmp_path / "wide.json"
    wide.write_text(AlbertConfig.from_dict({**_tiny().to_dict(), "embedding_size": 4}).to_json_string())
    cases = {
        # not a checkpoint: names the path
        ("--albert_config_file=model/albert_config.json", "--init_checkpoint=wide.json",
         "--export_dir=exports"): ["error: ", str(wide)],
        # config/checkpoint mismatch: variable, both shapes, config key
        ("--albert_config_file=wide.json", "--init_checkpoint=bare/model.ckpt",
         "--export_dir=exports"): ["error: ", "in the checkpoint but", "embedding_size"],
        # the flag's config contradicts the one beside the checkpoint: names the key
        ("--albert_config_file=wide.json", "--init_checkpoint=model/model.ckpt",
         "--export_dir=exports"): ["error: ", "says embedding_size=4", "embedding_size=8"],
        # no --export_dir: names the flag
        ("--albert_config_file=wide.json", "--init_checkpoint=model/model.ckpt"):
            ["error: ", "--export_dir"],
    }
    for args, wanted in cases.items():
        proc = _export_script(*args, cwd=tmp_path)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert all(w in lines[-1] for w in wanted) and lines[-1].startswith("error: "), lines[-1]
    assert not (tmp_path / "exports").exists()


def test_our_checkpoint_with_another_config_is_one_error_naming_the_key(tmp_path):
    from albert_tf.checkpoint import CheckpointError

    CheckpointState(tmp_path / "run", AlbertPretrainer(_tiny()),
                    create_optimizer(1e-3, 10, 1, "lamb")).save(step=1)
    wide = AlbertConfig.from_dict({**_tiny().to_dict(), "hidden_size": 16})
    with pytest.raises(CheckpointError, match=r"has shape \[12.*\] in the checkpoint but \[16.*"
                                              r"config key hidden_size"):
        load_model(wide, str(tmp_path / "run"))


def test_cli_exports_wordpiece_preprocessing_with_vocab_file_only(tmp_path):
    """A Chinese-style model: --vocab_file without --spm_model_file exports the preprocessing
    with WordPiece in the graph, checked in a fresh process, with the Python tokenizer's ids."""
    from albert_tf import tokenization

    _tiny_tf1_checkpoint(tmp_path / "model")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "我", "爱", "中", "国", "人", "，",
             "。", "the", "quick", "fox", "##es", "cafe", "!", "."]
    (tmp_path / "vocab_chinese.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    proc = _export_script("--albert_config_file=model/albert_config.json",
                          "--init_checkpoint=model/model.ckpt", "--export_dir=exports",
                          "--vocab_file=vocab_chinese.txt", "--do_lower_case",
                          "--max_seq_length=16", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["preprocessing"] == str(tmp_path / "exports" / "preprocessing" / "1")
    assert max(result["preprocessing_check"].values()) == 0
    texts = ["我爱中国人。", "The quick Foxes! Café."]
    loaded = tf.saved_model.load(result["preprocessing"])  # the script served it in a fresh one
    out = loaded.signatures["serving_default"](text=tf.constant(texts))
    python = tokenization.FullTokenizer(str(tmp_path / "vocab_chinese.txt"), True)
    for row, text in enumerate(texts):
        ids = [2] + python.convert_tokens_to_ids(python.tokenize(text)) + [3]
        assert out["input_word_ids"][row].numpy().tolist() == ids + [0] * (16 - len(ids))
    info = loaded.signatures["tokenization_info"]()
    asset = info["vocab_file"].numpy().decode()
    assert asset.startswith(result["preprocessing"])
    assert open(asset, encoding="utf-8").read().split() == vocab


def test_our_run_classifier_output_dir_exports_with_its_label_names(tmp_path):
    """--init_checkpoint=<a run_classifier output_dir>: the classifier export serves the names
    of its labels.json (`labels`), its TFLite JSON holds them (issue 27, item 5), and its
    `serve_text` takes one text, `serve_pair` two (item 6)."""
    from albert_tf.models import AlbertClassifier

    import tensorflow_text  # noqa: F401  (the WordPiece ops of serve_text)

    config = _tiny()
    config.to_json_file(tmp_path / "albert_config.json")
    run = tmp_path / "run"
    CheckpointState(run, AlbertClassifier(config, 3), create_optimizer(1e-3, 10, 1, "adamw")).save(step=2)
    labels = ["negative", "positive", "neutral"]
    (run / "labels.json").write_text(json.dumps(labels))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "fox", "film", "."]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    result = export_source(str(run), str(tmp_path / "exports"), str(tmp_path / "albert_config.json"),
                           vocab_file=str(tmp_path / "vocab.txt"), max_seq_length=16,
                           verify=False, tflite="float32")
    assert result["classifier"] == str(tmp_path / "exports" / "classifier" / "1")
    meta = json.loads(open(result["tflite"]["classifier"]["metadata"]).read())
    assert meta["label_names"] == labels and meta["vocab_file"] == "vocab.txt"
    served = tf.saved_model.load(result["classifier"]).signatures
    one = served["serve_text"](text_a=tf.constant(["the quick fox", "a film"]))
    two = served["serve_pair"](text_a=tf.constant(["the quick fox"]), text_b=tf.constant(["film"]))
    assert {x.decode() for x in one["labels"].numpy()} | {two["labels"].numpy()[0].decode()} <= set(labels)
    np.testing.assert_array_equal(
        one["labels"].numpy(), np.array(labels, dtype=object)[one["predictions"].numpy()].astype(bytes))
