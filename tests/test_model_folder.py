"""A model folder serves one checkpoint, by one rule, to every reader: `model.ckpt-best`, else the
newest, else the only one (`weights.model_folder.find_checkpoint`). --do_predict on the folder,
export_saved_model --init_checkpoint=<it> and TextClassifier.from_pretrained(<it>) give the same
probabilities, those of the best checkpoint, not of a newer one. The folder's recorded casing
is used without the flag, and a TextClassifier follows the checkpoint the folder serves."""

import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.config import AlbertConfig
from albert_tf.entry_points import export_gist
from albert_tf.models import AlbertClassifier
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.processors import get_processor, read_tsv
from albert_tf.training.checkpoint_files import CheckpointState, copy_checkpoint
from albert_tf.training.health import TrainingHealth, settings_of
from albert_tf.weights.model_folder import (BEST_NAME, checkpoint_stamp, find_checkpoint,
                                            write_tokenizer_files)
from albert_tf.weights.tf1_checkpoint import resolve_prefix
from support.configs import GLUE_TINY as TINY
from support.entry_points import run_entry_point
from support.informative import assert_moves, assert_spread, spread_weights

SEQ = 32


def _touch(folder, *names):
    for name in names:
        (folder / name).write_bytes(b"")


def test_the_rule_best_else_newest_else_the_only_one(tmp_path):
    _touch(tmp_path, "model.ckpt-3.index", "model.ckpt-12.index", "model.ckpt-best.index")
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-3"\n')
    assert find_checkpoint(tmp_path) == str(tmp_path / BEST_NAME)  # over the state file's
    assert resolve_prefix(tmp_path) == str(tmp_path / BEST_NAME)
    (tmp_path / "model.ckpt-best.index").unlink()
    assert find_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-3")  # the state file's newest
    (tmp_path / "checkpoint").unlink()
    assert find_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-12")  # by step, not by name
    for name in ("model.ckpt-3.index", "model.ckpt-12.index"):
        (tmp_path / name).unlink()
    _touch(tmp_path, "bert_model.ckpt.index")
    assert find_checkpoint(tmp_path) == str(tmp_path / "bert_model.ckpt")
    _touch(tmp_path, "other.ckpt.index")
    with pytest.raises(Exception, match="several checkpoints \\(bert_model.ckpt, other.ckpt\\)"):
        find_checkpoint(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_checkpoint(empty, required=False) is None and checkpoint_stamp(empty) is None
    with pytest.raises(FileNotFoundError, match="no checkpoint found in directory"):
        resolve_prefix(empty)


def _save(model, folder, step, seed):
    spread_weights(model, seed=seed)
    optimizer = keras.optimizers.AdamW()
    optimizer.build(model.trainable_variables)
    optimizer.iterations.assign(step)
    return CheckpointState(folder, model, optimizer, keep_checkpoint_max=None).save(step)


@pytest.fixture(scope="module")
def folder(tmp_path_factory, spm_model):
    """A classifier run's output_dir as training leaves it, trained with --do_lower_case=false:
    model.ckpt-2 (copied to model.ckpt-best) and a newer model.ckpt-4 whose weights differ."""
    out = tmp_path_factory.mktemp("mrpc") / "out"
    out.mkdir()
    config = AlbertConfig(**TINY)
    (out / "albert_config.json").write_text(config.to_json_string())
    write_tokenizer_files(str(out), spm_model_file=spm_model, do_lower_case=False)
    (out / "labels.json").write_text('["0", "1"]\n')
    model = AlbertClassifier(config, 2)
    model({k: tf.zeros([1, SEQ], tf.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    best = _save(model, out, 2, seed=5)
    _save(model, out, 4, seed=6)
    copy_checkpoint(best, str(out / BEST_NAME))
    return out


@pytest.fixture(scope="module")
def predicted(folder, fixtures_dir):
    """--do_predict on the folder alone: no --albert_config_file, --spm_model_file or casing."""
    done = run_entry_point("run_classifier.py", [
        f"--data_dir={fixtures_dir / 'glue' / 'data'}", "--task_name=MRPC",
        f"--output_dir={folder}", f"--max_seq_length={SEQ}", "--do_predict"])
    assert done.returncode == 0, done.stderr[-3000:]
    return done, np.loadtxt(folder / "test_results.tsv", delimiter="\t", ndmin=2)


def _pairs(fixtures_dir):
    rows = read_tsv(str(fixtures_dir / "glue" / "data" / "MRPC" / "test.tsv"))[1:]
    return [(fields[3], fields[4]) for _, fields in rows]


def test_predict_export_and_from_pretrained_serve_the_best(folder, predicted, fixtures_dir,
                                                           tmp_path):
    import albert_tf.tasks
    from albert_tf.source_export import export_source

    done, cli = predicted
    pairs = _pairs(fixtures_dir)
    assert cli.shape == (len(pairs), 2)
    assert_spread(cli, 1e-3)
    # The newest checkpoint answers otherwise: a reader taking it fails every check below.
    newest = albert_tf.tasks.TextClassifier.from_pretrained(
        folder / "model.ckpt-4", max_seq_length=SEQ).predict(pairs)[1]
    assert_moves(cli, newest, 1e-2, "the newest checkpoint")

    clf = albert_tf.tasks.TextClassifier.from_pretrained(folder, max_seq_length=SEQ)
    np.testing.assert_allclose(clf.predict(pairs)[1], cli, atol=1e-6)

    result = export_source(str(folder), str(tmp_path / "export"), max_seq_length=SEQ,
                           verify=False)
    assert result["checkpoint"] == str(folder / BEST_NAME)  # the summary names it
    assert export_gist(result, "exports")[0].endswith(", checkpoint model.ckpt-best, to exports:")
    assert result["do_lower_case"] is False
    records = [r.numpy() for r in tf.data.TFRecordDataset(str(folder / "predict.tf_record"))]
    serve = tf.saved_model.load(result["classifier"]).signatures["serving_default"]
    exported = serve(input=tf.constant(records))["probabilities"].numpy()
    np.testing.assert_allclose(exported, cli, atol=1e-6)
    assert f"serving {folder / BEST_NAME}" in done.stderr


def test_casing_comes_from_the_folder(folder, predicted, fixtures_dir, spm_model):
    done, _ = predicted
    assert f"do_lower_case=false from {folder / 'tokenizer_config.json'}" in done.stderr
    # The cached features hold the ids of the text with its case kept, not lower-cased.
    def ids(lower):
        example = get_processor("mrpc", do_lower_case=lower).get_test_examples(
            str(fixtures_dir / "glue" / "data"))[0]
        tokenizer = tokenization.FullTokenizer(None, lower, spm_model)
        return F.convert_single_example(example, ["0", "1"], SEQ, tokenizer).input_ids

    first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(
        str(folder / "predict.tf_record")))).numpy())
    held = list(first.features.feature["input_ids"].int64_list.value)
    assert held == ids(False) and held != ids(True)

    contradicting = run_entry_point("run_classifier.py", [
        f"--data_dir={fixtures_dir / 'glue' / 'data'}", "--task_name=MRPC",
        f"--output_dir={folder}", f"--max_seq_length={SEQ}", "--do_predict",
        "--do_lower_case=true"])
    assert contradicting.returncode == 1
    errors = [line for line in contradicting.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: --do_lower_case contradicts {folder / 'tokenizer_config.json'}, "
                      "which records do_lower_case=false (the vocabulary was built with its case "
                      "kept); leave --do_lower_case out to follow the vocabulary"]


def test_a_classifier_follows_the_checkpoint_its_folder_serves(folder, predicted, fixtures_dir,
                                                               tmp_path):
    import albert_tf.tasks
    from albert_tf.tasks.classification.text_classifier import TextClassifierError

    _, cli = predicted
    copy = tmp_path / "folder"
    shutil.copytree(folder, copy)
    pairs = _pairs(fixtures_dir)
    clf = albert_tf.tasks.TextClassifier.from_pretrained(copy, max_seq_length=SEQ)
    np.testing.assert_allclose(clf.predict(pairs)[1], cli, atol=1e-6)
    newest = albert_tf.tasks.TextClassifier.from_pretrained(
        copy / "model.ckpt-4", max_seq_length=SEQ).predict(pairs)[1]
    # Without a best copy the folder serves its newest checkpoint (another is chosen) ...
    for path in copy.glob(BEST_NAME + ".*"):
        path.unlink()
    np.testing.assert_allclose(clf.predict(pairs)[1], newest, atol=1e-6)
    # ... a best copied in is chosen again (data first, the index last, as eval_state does) ...
    copy_checkpoint(str(copy / "model.ckpt-2"), str(copy / BEST_NAME))
    np.testing.assert_allclose(clf.predict(pairs)[1], cli, atol=1e-6)
    # ... and a best replaced by another run's is read again.
    copy_checkpoint(str(copy / "model.ckpt-4"), str(copy / BEST_NAME))
    np.testing.assert_allclose(clf.predict(pairs)[1], newest, atol=1e-6)
    with pytest.raises(TextClassifierError, match=r"^batch_size= must be a whole number of at "
                                                  r"least 1, got 0$"):
        clf.predict(pairs, batch_size=0)


def test_fit_advice_names_the_api_arguments(folder, fixtures_dir, tmp_path):
    import albert_tf.tasks
    from albert_tf.training.loop import NonFiniteLossError

    # The advice itself: the caller's names over the script's flags.
    class Config:
        class schedule:
            learning_rate, num_warmup_steps = 2e-5, 3
        seed = 1

    named = {"learning_rate": ("learning_rate", 2e-5), "warmup": ("warmup_proportion", 0.1)}
    advice = TrainingHealth(settings_of(Config, 3, named)).advice()
    assert "(warmup_proportion=0.1)" in advice and "a longer warmup_proportion" in advice
    assert "--warmup_step" not in advice and "try learning_rate=4e-06" in advice
    # fit passes its own: a learning rate that makes the loss non-finite is named as given.
    clf = albert_tf.tasks.TextClassifier.from_pretrained(folder, max_seq_length=SEQ,
                                                         output_dir=tmp_path / "fit")
    pairs = _pairs(fixtures_dir)[:2]
    with pytest.raises(NonFiniteLossError) as raised:
        clf.fit(pairs * 2, ["0", "1", "1", "0"], learning_rate=1e9, epochs=2, batch_size=2,
                verbose=0)
    message = str(raised.value)
    assert "(learning_rate=1000000000.0)" in message
    assert message.endswith("a lower learning_rate or a longer warmup_proportion usually "
                            "avoids it")
    assert "--" not in message


def test_a_run_resumed_in_its_output_dir_keeps_the_casing_it_recorded(tmp_path, spm_model):
    import dataclasses

    from albert_tf.run_config import TextTaskConfig
    from albert_tf.tokenization.settings import CasingConflictError
    from albert_tf.weights.run_inputs import resolve_inputs

    out = tmp_path / "out"
    out.mkdir()
    write_tokenizer_files(str(out), spm_model_file=spm_model, do_lower_case=False)
    given = frozenset({"output_dir", "spm_model_file", "do_train"})
    config = TextTaskConfig(output_dir=str(out), spm_model_file=spm_model, do_train=True,
                            flags_given=given)
    inputs = resolve_inputs(config)
    assert inputs.do_lower_case is False
    assert inputs.origins["do_lower_case"] == str(out / "tokenizer_config.json")
    with pytest.raises(CasingConflictError, match=r"^--do_lower_case contradicts .*/out/"
                                                  r"tokenizer_config\.json, which records "
                                                  r"do_lower_case=false"):
        resolve_inputs(dataclasses.replace(config, flags_given=given | {"do_lower_case"}))


def test_an_output_dir_of_another_task_is_named_by_its_flag(tmp_path, spm_model):
    from albert_tf.models import AlbertTokenClassifier
    from albert_tf.run_config import TextTaskConfig
    from albert_tf.weights.run_inputs import InputsConflictError, resolve_inputs

    out = tmp_path / "ner"
    out.mkdir()
    config = AlbertConfig(**TINY)
    (out / "albert_config.json").write_text(config.to_json_string())
    write_tokenizer_files(str(out), spm_model_file=spm_model)
    model = AlbertTokenClassifier(config, 3)
    model({k: tf.zeros([1, SEQ], tf.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    _save(model, out, 1, seed=1)
    served = TextTaskConfig(output_dir=str(out), do_predict=True)
    with pytest.raises(InputsConflictError, match=rf"^--output_dir={out} holds a token_classifier "
                                                  r"head, but this run serves a classifier head"):
        resolve_inputs(served, head="classifier")
