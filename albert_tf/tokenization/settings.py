"""Tokenizer settings that travel with the vocabulary: `tokenizer_config.json` beside a
`vocab.txt` or SentencePiece model records how text was cased when the vocabulary was built
(`python -m albert_tf.train_vocab` writes it; a Hugging Face folder has one too, with the same
`do_lower_case` key).

The rule every script follows (`resolve_do_lower_case`): a `--do_lower_case` flag given
wins when it agrees with the record, and is one error when it contradicts it; a flag left out
takes the recorded value; without a record the original's default (lower-case) stays.
"""

from __future__ import annotations

import json
import os

from albert_tf import io_utils
from albert_tf.errors import InputError, UsageError

SETTINGS_FILE = "tokenizer_config.json"


class CasingConflictError(UsageError):
    """`--do_lower_case` given against what the vocabulary's settings file records."""


def settings_path(tokenizer_file) -> str:
    return os.path.join(os.path.dirname(os.fspath(tokenizer_file)), SETTINGS_FILE)


def read_settings(folder_or_file) -> tuple[dict, str] | tuple[None, None]:
    """(settings, path) of the settings file in a folder or beside a tokenizer file; (None,
    None) when there is none. A settings file naming another vocabulary (`vocab_file`,
    `spm_model_file`) than the one given does not describe it."""
    path = os.fspath(folder_or_file)
    folder_given = os.path.isdir(path)
    settings_file = os.path.join(path, SETTINGS_FILE) if folder_given else settings_path(path)
    if not os.path.isfile(settings_file):
        return None, None
    values = io_utils.read_json_object(
        settings_file, InputError, "not a JSON settings file",
        'an object of tokenizer settings (such as "do_lower_case": true)')
    if not folder_given:
        named = [values.get(k) for k in ("vocab_file", "spm_model_file") if values.get(k)]
        if named and os.path.basename(path) not in named:
            return None, None
    return values, settings_file


def lower_case_setting(values: dict, path) -> bool | None:
    """`do_lower_case` of a settings file's `values` (None when absent); any value but a JSON
    true/false is an error naming the file and the key (the string "false" is true in Python)."""
    value = values.get("do_lower_case")
    if value is None or isinstance(value, bool):
        return value
    raise InputError(f"{path}: key do_lower_case must be true or false (a JSON boolean), got "
                     f"{json.dumps(value)}")


def recorded_lower_case(*places) -> tuple[bool, str] | tuple[None, None]:
    """(do_lower_case, where) from the first of `places` (tokenizer files or weight-source
    folders; None skipped) whose settings file records it; (None, None) otherwise."""
    for place in places:
        if not place or io_utils.is_remote(place):
            continue
        values, path = read_settings(place)
        if values is not None and lower_case_setting(values, path) is not None:
            return values["do_lower_case"], path
    return None, None


def flag_given(config, name: str, default) -> bool:
    """Whether `--name` was given: from `config.flags_given` (the names on the command line)
    when known, else whether the value differs from the default (a config built in Python)."""
    given = getattr(config, "flags_given", None)
    if given is not None:
        return name in given
    return getattr(config, name) != default


def resolve_do_lower_case(value, given: bool, *places, flag: str = "--do_lower_case") -> bool:
    """The casing a script uses: the flag when `given` (an error when it contradicts the
    record), else the record of the first of `places` that has one, else `value` (the
    original's default when the flag was not given)."""
    recorded, where = recorded_lower_case(*places)
    if recorded is None:
        return True if value is None else bool(value)
    if given and value is not None and bool(value) != recorded:
        said = flag if value else "--no" + flag.lstrip("-")
        built = "lower-cased" if recorded else "with its case kept"
        raise CasingConflictError(
            f"{said} contradicts {where}, which records do_lower_case="
            f"{str(recorded).lower()} (the vocabulary was built {built}); leave {flag} out to "
            "follow the vocabulary")
    return recorded


def write_settings(folder, values: dict) -> str:
    """Writes `folder/tokenizer_config.json` atomically; returns its path."""
    path = os.path.join(os.fspath(folder), SETTINGS_FILE)
    io_utils.write_text_atomically(path, json.dumps(values, indent=2, ensure_ascii=False) + "\n")
    return path
