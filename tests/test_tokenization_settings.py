"""Tokenizer settings that follow the model (albert_tf.tokenization.settings): the casing a
vocabulary's tokenizer_config.json records is used unless the flag is given; a flag that
contradicts it is one error; no record keeps the original's default."""

import json

import pytest

from albert_tf.tokenization import settings
from albert_tf.tokenization.settings import CasingConflictError, resolve_do_lower_case


def _vocab(folder, do_lower_case=None, **extra):
    folder.mkdir(exist_ok=True)
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n", encoding="utf-8")
    if do_lower_case is not None:
        settings.write_settings(folder, {"do_lower_case": do_lower_case, **extra})
    return str(folder / "vocab.txt")


def test_recorded_casing_wins_unless_the_flag_is_given(tmp_path):
    vocab = _vocab(tmp_path / "ko", do_lower_case=False, vocab_file="vocab.txt")
    assert resolve_do_lower_case(True, False, vocab) is False       # default: the record
    assert resolve_do_lower_case(False, True, vocab) is False       # agreeing flag
    with pytest.raises(CasingConflictError, match="--do_lower_case contradicts") as caught:
        resolve_do_lower_case(True, True, vocab)
    message = str(caught.value)
    assert message.startswith("--do_lower_case contradicts ") and "tokenizer_config.json" in message
    assert "do_lower_case=false" in message and "leave --do_lower_case out" in message
    lowered = _vocab(tmp_path / "en", do_lower_case=True)
    with pytest.raises(CasingConflictError, match="^--nodo_lower_case contradicts"):
        resolve_do_lower_case(False, True, lowered)


def test_no_record_keeps_the_original_default(tmp_path):
    vocab = _vocab(tmp_path / "plain")
    assert resolve_do_lower_case(True, False, vocab) is True
    assert resolve_do_lower_case(False, True, vocab) is False
    assert resolve_do_lower_case(None, False, None) is True


def test_hf_folder_and_other_vocabularies(tmp_path):
    # A Hugging Face folder's tokenizer_config.json has the same key (no file named).
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    assert resolve_do_lower_case(True, False, None, str(hf)) is False
    # A settings file that names another vocabulary does not describe this one.
    vocab = _vocab(tmp_path / "two", do_lower_case=False, vocab_file="other.txt")
    assert resolve_do_lower_case(True, False, vocab) is True


def test_flag_given_from_the_command_line_or_the_value():
    class Config:
        do_lower_case = False
        flags_given = None

    assert settings.flag_given(Config, "do_lower_case", True)  # differs from the default
    Config.flags_given = frozenset({"vocab_file"})
    assert not settings.flag_given(Config, "do_lower_case", True)


def test_config_from_flags_records_the_flags_given():
    from absl import flags

    from albert_tf import cli
    from albert_tf.tasks.classification.config import ClassifierRunConfig

    values = flags.FlagValues()
    cli.define_flags("test", "do_lower_case vocab_file", ClassifierRunConfig, flag_values=values)
    values(["prog", "--nodo_lower_case"])
    config = cli.config_from_flags(ClassifierRunConfig, values)
    assert config.flags_given == frozenset({"do_lower_case"}) and config.do_lower_case is False
