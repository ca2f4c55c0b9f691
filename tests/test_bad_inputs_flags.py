"""Flags that cannot work are refused when the run config is built (before TensorFlow starts in a
script), in one line naming the flag (issue 27, items 1 and 9)."""

import pytest

from bad_inputs import one_error_line

from albert_tf.errors import UsageError
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.race.config import RaceRunConfig
from albert_tf.tasks.squad.config import SquadRunConfig
from albert_tf.tasks.token_classification.config import NerRunConfig

SQUAD_COUNTS = ("doc_stride", "max_query_length", "max_answer_length", "n_best_size",
                "start_n_top", "end_n_top")


@pytest.mark.parametrize("flag", SQUAD_COUNTS)
@pytest.mark.parametrize("value", [0, -1])
def test_squad_counts_below_one_are_refused_naming_the_flag(flag, value):
    # --doc_stride=0 used to loop for ever in doc_spans (24 GB, then the OOM killer).
    with pytest.raises(UsageError, match=f"--{flag} must be at least 1, got {value}"):
        SquadRunConfig.from_flat({flag: value})


def test_squad_doc_stride_zero_is_one_error_line(capsys):
    line = one_error_line(lambda: SquadRunConfig.from_flat({"doc_stride": 0}), capsys)
    assert "--doc_stride" in line


def test_doc_spans_refuses_a_window_that_does_not_advance():
    from albert_tf.tasks.squad.features import doc_spans

    assert doc_spans(10, 4, 3) == [(0, 4), (3, 4), (6, 4)]
    for tokens_for_doc, stride in ((4, 0), (4, -2), (0, 3)):
        with pytest.raises(ValueError, match="at least 1"):
            doc_spans(10, tokens_for_doc, stride)


@pytest.mark.parametrize("value", [0, -3])
def test_ner_doc_stride_is_refused_with_the_flags(value):
    with pytest.raises(UsageError, match=f"--doc_stride must be between 1 and"):
        NerRunConfig.from_flat({"doc_stride": value})
    with pytest.raises(UsageError, match="--doc_stride"):
        NerRunConfig.from_flat({"doc_stride": 127, "max_seq_length": 128})
    assert NerRunConfig.from_flat({"doc_stride": None}).stride == 63


@pytest.mark.parametrize("config", [ClassifierRunConfig, SquadRunConfig, RaceRunConfig,
                                    NerRunConfig])
@pytest.mark.parametrize("value", [-8, 0, 2])
def test_max_seq_length_too_small_is_refused_naming_the_flag(config, value):
    # -8 was a ValueError naming no flag; 0 silently meant the default.
    with pytest.raises(UsageError, match=f"--max_seq_length must be at least 3, got {value}"):
        config.from_flat({"max_seq_length": value})


@pytest.mark.parametrize("flag, value, least", [("max_seq_length", 0, 5), ("max_seq_length", 4, 5),
                                               ("max_predictions_per_seq", 0, 1)])
def test_pretraining_shapes_are_checked_with_the_flags(flag, value, least):
    from albert_tf.tasks.pretraining.config import PretrainingRunConfig

    with pytest.raises(UsageError, match=f"--{flag} must be at least {least}, got {value}"):
        PretrainingRunConfig.from_flat({flag: value})


def test_max_seq_length_minus_8_is_one_error_line(capsys):
    line = one_error_line(lambda: ClassifierRunConfig.from_flat({"max_seq_length": -8}), capsys)
    assert "--max_seq_length" in line


@pytest.mark.parametrize("changes, flag", [
    ({"max_seq_length": 0}, "--max_seq_length"), ({"max_seq_length": -8}, "--max_seq_length"),
    ({"version": -3}, "--version")])
def test_export_saved_model_arguments_are_checked_first(changes, flag, tmp_path):
    # Checked before the source is opened: `missing` would be a different error.
    from albert_tf.source_export import export_source

    with pytest.raises(UsageError, match=flag):
        export_source(str(tmp_path / "missing"), str(tmp_path / "export"), **changes)
    assert not (tmp_path / "export").exists()


def test_version_folder_rule_refuses_a_negative_version(tmp_path):
    from albert_tf.io_utils import version_dir

    assert version_dir(tmp_path, 0) == str(tmp_path / "0")  # TF Serving's versions start at 0
    with pytest.raises(UsageError, match="--version must be a whole number >= 0, got -3"):
        version_dir(tmp_path, -3)


def test_export_base_that_is_a_file_is_named(tmp_path):
    from albert_tf.errors import OutputError
    from albert_tf.io_utils import version_dir

    (tmp_path / "export").write_text("not a folder")
    with pytest.raises(OutputError, match=f"{tmp_path / 'export'}: exists and is not a folder"):
        version_dir(tmp_path / "export")


def test_text_classifier_checks_max_seq_length_and_export_path(fixtures_dir, spm_model,
                                                               tmp_path):
    import json

    from albert_tf.tasks.classification.text_classifier import (TextClassifier,
                                                                TextClassifierError)
    from support.configs import GLUE_TINY

    (tmp_path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    kwargs = dict(albert_config_file=str(tmp_path / "albert_config.json"), init_checkpoint=None,
                  spm_model_file=spm_model, labels=["a", "b"], output_dir=str(tmp_path / "out"))
    with pytest.raises(TextClassifierError, match="max_seq_length= must be at least 3, got 0"):
        TextClassifier(max_seq_length=0, **kwargs)
    classifier = TextClassifier(**kwargs)
    (tmp_path / "taken").write_text("a file")
    # Was a raw FailedPreconditionError from the SavedModel writer.
    with pytest.raises(TextClassifierError, match=f"{tmp_path / 'taken'}: exists and is not a "
                                                  "folder"):
        classifier.export(str(tmp_path / "taken"))


def test_race_question_length_that_cannot_fit_the_window_is_refused_naming_both(tmp_path):
    from support.entry_points import run_entry_point

    # --max_seq_length=64 with the default --max_qa_length=128 failed 52 s in, reading its own
    # records back ("Can't parse serialized Example"). 64 - 3 = 61 pieces fit: 62 do not.
    assert RaceRunConfig.from_flat({"max_seq_length": 64, "max_qa_length": 61}).max_qa_length == 61
    for flags in ({"max_seq_length": 64}, {"max_seq_length": 64, "max_qa_length": 62}):
        qa = flags.get("max_qa_length", 128)
        with pytest.raises(UsageError, match=(
                rf"^--max_qa_length={qa} does not fit in --max_seq_length=64: .* at most "
                r"--max_seq_length - 3 \(61\); pass --max_qa_length=61 or less")):
            RaceRunConfig.from_flat(flags)
    with pytest.raises(UsageError, match="--max_qa_length must be at least 1, got 0"):
        RaceRunConfig.from_flat({"max_qa_length": 0})
    # Neither flag given, the length taken from a 64-position model: the question keeps 61.
    assert RaceRunConfig.from_flat({"max_seq_length": 64, "flags_given": frozenset(
        {"data_dir"})}).max_qa_length == 61
    with pytest.raises(UsageError, match=r"^--max_qa_length=100 does not fit in "
                       r"--max_seq_length=64 \(the model's max_position_embeddings: no "):
        RaceRunConfig.from_flat({"max_seq_length": 64, "max_qa_length": 100,
                                 "flags_given": frozenset({"max_qa_length"})})
    # The script: one error line, before it reads or writes anything.
    done = run_entry_point("run_race.py", [
        f"--data_dir={tmp_path / 'no_race'}", f"--output_dir={tmp_path / 'out'}",
        f"--albert_config_file={tmp_path / 'no_config.json'}", "--spm_model_file=x.model",
        "--max_seq_length=64"])
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(
        "error: --max_qa_length=128 does not fit in --max_seq_length=64")
    assert not (tmp_path / "out").exists()
