"""--num_hidden_layers=K: a model's shared layer run K times instead of its trained depth (the
same weights, K/L of the compute): the config rule, the run inputs, and the export of a 6-pass
classifier folder at 3 passes against the Keras model run with 3."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig, ConfigError, with_passes
from albert_tf.errors import UsageError
from albert_tf.models import AlbertClassifier
from albert_tf.source_export import export_source
from albert_tf.tasks.classification.text_classifier import TextClassifier, TextClassifierError
from albert_tf.tasks.token_classification.api import TokenClassifier
from albert_tf.tokenization import FullTokenizer, preprocess_text
from albert_tf.weights.run_inputs import resolve_inputs
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY
from support.entry_points import run_entry_point
from support.informative import assert_moves, assert_spread, spread_weights

SIX = dict(GLUE_TINY, num_hidden_layers=6)
TEXTS = ["The cat sat on the mat.", "Prices rose 1,000.5 percent, Amrozi said.", "short"]
SEQ = 16


def _config(**overrides):
    return AlbertConfig(**{**SIX, **overrides})


def test_passes_between_one_and_the_trained_depth():
    config = _config()
    assert with_passes(config, 3).num_hidden_layers == 3
    assert with_passes(config, 3).to_dict() == {**config.to_dict(), "num_hidden_layers": 3}
    assert with_passes(config, None) is config and with_passes(config, 6) is config
    with pytest.raises(ConfigError, match=r"^--num_hidden_layers=0 must be between 1 and the "
                                          r"model's trained depth \(num_hidden_layers 6\)$"):
        with_passes(config, 0)
    with pytest.raises(ConfigError, match=r"--num_hidden_layers=7 must be between 1 and .*6\)$"):
        with_passes(config, 7)


def test_grouped_passes_keep_each_groups_share():
    config = _config(num_hidden_layers=12, num_hidden_groups=2)  # 6 passes of group 0, 6 of 1
    assert with_passes(config, 4).group_map() == [(0, 0)] * 2 + [(1, 1)] * 2
    assert with_passes(config, 8).group_map() == [(0, 0)] * 4 + [(1, 1)] * 4
    for passes in (3, 1, 5):  # 3 would run group 0 twice and group 1 once
        with pytest.raises(ConfigError, match=rf"^--num_hidden_layers={passes} does not keep the "
                                              r"pattern of the model's 2 layer groups "
                                              r"\(num_hidden_layers 12, num_hidden_groups 2\)"):
            with_passes(config, passes)
    uneven = _config(num_hidden_layers=12, num_hidden_groups=5)  # runs of 3, 2, 3, 2, 2
    with pytest.raises(ConfigError, match=r"=10 does not keep .* 5 layer groups"):
        with_passes(uneven, 10)
    with pytest.raises(ConfigError, match=r"share_parameters 'none'"):
        with_passes(_config(share_parameters="none"), 3)


def test_run_inputs_apply_the_flag_not_the_config_key(tmp_path):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(SIX))
    inputs = resolve_inputs(albert_config_file=str(path), num_hidden_layers=2,
                            need_tokenizer=False)
    assert inputs.albert_config.num_hidden_layers == 2
    assert inputs.origins["albert_config"].endswith("run 2 of its 6 passes (--num_hidden_layers)")
    assert json.loads(path.read_text())["num_hidden_layers"] == 6  # the file is left as it is
    with pytest.raises(UsageError, match=r"^--num_hidden_layers=9 must be between 1 and the "
                                         r"model's trained depth \(num_hidden_layers 6\)$"):
        resolve_inputs(albert_config_file=str(path), num_hidden_layers=9, need_tokenizer=False)


@pytest.fixture(scope="module")
def six_pass_folder(tmp_path_factory, spm_model):
    """A released-style folder holding a 6-pass classifier (spread weights)."""
    folder = tmp_path_factory.mktemp("six")
    (folder / "albert_config.json").write_text(json.dumps(SIX))
    shutil.copy(spm_model, folder / "30k-clean.model")
    model = AlbertClassifier(AlbertConfig(**SIX), 3)
    spread_weights(model, seed=11, std=0.1)
    save_tf1_checkpoint(model, str(folder / "model.ckpt-best"))
    return folder, model


def _features(spm_model):
    tokenizer = FullTokenizer(None, True, spm_model)
    ids = np.zeros((len(TEXTS), SEQ), np.int32)
    mask = np.zeros_like(ids)
    for row, text in enumerate(TEXTS):
        pieces = ["[CLS]", *tokenizer.tokenize(preprocess_text(text, lower=True))[:SEQ - 2],
                  "[SEP]"]
        ids[row, :len(pieces)] = tokenizer.convert_tokens_to_ids(pieces)
        mask[row, :len(pieces)] = 1
    return {"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def test_six_pass_folder_exported_at_three_passes_serves_the_three_pass_model(
        six_pass_folder, spm_model, tmp_path):
    folder, six = six_pass_folder
    result = export_source(str(folder), str(tmp_path / "exports"), max_seq_length=SEQ,
                           num_hidden_layers=3, verify=False)
    assert result["num_hidden_layers"] == 3
    served = tf.saved_model.load(result["classifier"]).signatures["serve_text"](
        text_a=tf.constant(TEXTS))["probabilities"].numpy()
    # The reference: the same weights in a Keras classifier built to run 3 passes.
    three = AlbertClassifier(with_passes(AlbertConfig(**SIX), 3), 3)
    features = _features(spm_model)
    three(features)
    for mine, theirs in zip(three.weights, six.weights):
        mine.assign(theirs)
    want = three(features, training=False)["probabilities"].numpy()
    full = six(features, training=False)["probabilities"].numpy()
    assert_spread(want, 1e-3)
    assert_moves(want, full, 1e-3, "running 6 passes instead of 3")
    np.testing.assert_allclose(served, want, atol=1e-5)


def test_export_refuses_more_passes_than_trained(six_pass_folder, tmp_path):
    folder, _ = six_pass_folder
    done = run_entry_point("export_saved_model.py", [
        f"--init_checkpoint={folder}", f"--export_dir={tmp_path / 'out'}",
        "--num_hidden_layers=7"])
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "error: --num_hidden_layers=7 must be between 1 and the model's trained depth "
        "(num_hidden_layers 6)")
    assert not (tmp_path / "out").exists()


def test_python_apis_take_num_hidden_layers(six_pass_folder, tmp_path):
    folder, _ = six_pass_folder
    clf = TextClassifier.from_pretrained(str(folder), num_classes=3, max_seq_length=SEQ,
                                         output_dir=str(tmp_path / "clf"), num_hidden_layers=2)
    assert clf.inputs.albert_config.num_hidden_layers == 2
    assert clf._run_config().num_hidden_layers == 2
    with pytest.raises(TextClassifierError, match=r"^num_hidden_layers=0 must be between 1 and "
                                                  r"the model's trained depth"):
        TextClassifier.from_pretrained(str(folder), num_classes=3, num_hidden_layers=0,
                                       output_dir=str(tmp_path / "zero"))
    tagger = TokenClassifier.from_pretrained(str(folder), labels=["O", "B-X"],
                                             output_dir=str(tmp_path / "ner"), num_hidden_layers=3)
    assert tagger.inputs.albert_config.num_hidden_layers == 3
    assert tagger._config().num_hidden_layers == 3


@pytest.mark.parametrize("script, flags", [
    ("run_classifier.py", ["--task_name=tsv", "--do_eval", "--dev_file={folder}/dev.tsv"]),
    ("run_ner.py", ["--do_eval", "--dev_file={folder}/dev.txt"]),
    ("run_squad.py", ["--do_predict", "--predict_file={folder}/dev.json"]),
], ids=["run_classifier", "run_ner", "run_squad"])
def test_fine_tuning_scripts_refuse_zero_passes(six_pass_folder, tmp_path, script, flags):
    folder, _ = six_pass_folder
    done = run_entry_point(script, [f"--init_checkpoint={folder}", f"--output_dir={tmp_path}",
                                    "--num_hidden_layers=0",
                                    *[flag.format(folder=tmp_path) for flag in flags]])
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "error: --num_hidden_layers=0 must be between 1 and the model's trained depth "
        "(num_hidden_layers 6)")
