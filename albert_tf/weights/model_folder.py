"""A model folder: a trained run's output_dir, a released archive, or a folder converted from
one. The one home of what such a folder holds, by name, and of the checkpoint it serves:

  albert_config.json          the model config (CONFIG_NAME)
  30k-clean.model | spiece.model | spm.model, or vocab_chinese.txt | vocab.txt
                              the tokenizer file (SPM_NAMES, VOCAB_NAMES: the archives' first),
  tokenizer_config.json       with the casing it was used with (SETTINGS_FILE)
  labels.json                 the names of a classifier's classes, a token classifier's tags
                              (LABELS_FILE; read and written by `albert_tf.labels`)
  sequence_lengths.json       the lengths a run's features were built with, which its exports
                              take unless told otherwise (LENGTHS_FILE: max_seq_length, and
                              RACE's max_qa_length)
  model.ckpt-<step>.*         a run's checkpoints (CHECKPOINT_NAME), `checkpoint` naming the newest
  model.ckpt-best.*           a copy of the one its evaluations scored best (BEST_NAME)
  lora.json, lora_adapter.*   a LoRA run's base, and the float16 adapter it ships
                              (`lora_base`, `lora_adapter`): a folder of it alone serves it

The checkpoint a folder serves, for every reader of every head (prediction, export, the Python
APIs, conversion, `--init_checkpoint=<folder>`): `model.ckpt-best` when there is one, else the
newest, else the folder's only checkpoint (`find_checkpoint`). A trained run writes the config
and the tokenizer files before its first checkpoint (`write_model_files`), so the folder alone
is enough for every later command.
"""

from __future__ import annotations

import json
import os
import re

import tensorflow as tf

from albert_tf import io_utils
from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError, UsageError
from albert_tf.labels import LABELS_FILE  # noqa: F401  (a folder's file: albert_tf.labels reads it)
from albert_tf.tokenization import settings

CONFIG_NAME = "albert_config.json"
SETTINGS_FILE = settings.SETTINGS_FILE
SPM_NAMES = ("30k-clean.model", "spiece.model", "spm.model")
VOCAB_NAMES = ("vocab_chinese.txt", "vocab.txt")
CHECKPOINT_NAME = "model.ckpt"  # files model.ckpt-<step>.{index,data-*}, as the original's
BEST_NAME = "model.ckpt-best"
LENGTHS_FILE = "sequence_lengths.json"
_STEP_INDEX = re.compile(r"^model\.ckpt-(\d+)\.index$")


def _names(folder: str) -> list:
    return tf.io.gfile.listdir(folder) if tf.io.gfile.isdir(folder) else []


def list_checkpoints(folder) -> list[tuple[int, str]]:
    """(step, prefix) of every `model.ckpt-<step>` in `folder`, by step (the best copy left out)."""
    folder = os.fspath(folder)
    return sorted((int(m.group(1)), os.path.join(folder, name[:-len(".index")]))
                  for name in _names(folder) if (m := _STEP_INDEX.match(name)))


def find_checkpoint(folder, required: bool = True) -> str | None:
    """The checkpoint prefix a folder serves: `model.ckpt-best`, else the newest (the one its
    `checkpoint` file names, else the highest `model.ckpt-<step>`), else its only `*.index`.
    None for a folder without any when not `required`; an error otherwise."""
    folder = os.fspath(folder)
    names = _names(folder)
    if BEST_NAME + ".index" in names:
        return os.path.join(folder, BEST_NAME)
    newest = tf.train.latest_checkpoint(folder) if "checkpoint" in names else None
    if newest:
        return newest
    steps = list_checkpoints(folder)
    if steps:
        return steps[-1][1]
    indexes = sorted(n[:-len(".index")] for n in names if n.endswith(".index"))
    if len(indexes) == 1:
        return os.path.join(folder, indexes[0])
    if not indexes and not required:
        return None
    raise UsageError(
        f"{folder}: no checkpoint found" if not indexes else
        f"{folder}: several checkpoints ({', '.join(indexes)}); pass the prefix of one as path")


def checkpoint_stamp(folder_or_prefix) -> tuple | None:
    """(prefix, mtime, size of its .index) of the checkpoint a folder serves (or of a prefix):
    what changes when that checkpoint is replaced or another one is chosen, from one listing and
    one stat. None when there is none, or it cannot be told (a remote path)."""
    path = os.fspath(folder_or_prefix)
    if io_utils.is_remote(path):
        return None
    try:
        prefix = find_checkpoint(path, required=False) if os.path.isdir(path) else path
        info = os.stat(prefix + ".index") if prefix else None
    except (OSError, UsageError):
        return None
    return (prefix, info.st_mtime_ns, info.st_size) if info else None


def first_file(folder: str, names) -> str | None:
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


def read_lengths(folder) -> dict:
    """{name: length} of a folder's LENGTHS_FILE ({} without one, or for a remote folder); a
    value that is not a whole number of at least 1 is one error naming the file and key."""
    path = os.path.join(os.fspath(folder), LENGTHS_FILE)
    if io_utils.is_remote(path) or not os.path.isfile(path):
        return {}
    values = io_utils.read_json_object(path, InputError, "not a JSON file of lengths",
                                       'an object of lengths (such as "max_seq_length": 128)')
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{path}: key {key} must be a whole number of at least 1, got "
                             f"{json.dumps(value)}")
    return values


# ---------------------------------------------------------------- what a trained run writes
def write_lengths(output_dir: str, lengths: dict, replace: bool = True) -> None:
    """`output_dir/sequence_lengths.json` ({name: length}); an existing one is kept when not
    `replace` (a run that only predicts records the lengths of a folder that has none)."""
    path = os.path.join(output_dir, LENGTHS_FILE)
    if replace or not io_utils.exists(path):
        io_utils.write_text_atomically(
            path, json.dumps({k: int(v) for k, v in lengths.items()}, indent=2) + "\n")


def check_or_write_config(output_dir: str, albert_config, given_as=None,
                          is_chief: bool = True) -> None:
    """Refuses an output_dir whose albert_config.json describes another model (its checkpoints
    would be read with the wrong shapes); writes it otherwise, before any checkpoint, so the
    folder always says what its checkpoints hold."""
    path = os.path.join(output_dir, CONFIG_NAME)
    mine = albert_config.to_dict()
    if io_utils.exists(path):
        theirs = AlbertConfig.from_json_file(path).to_dict()  # defaults filled in
        differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if differ:
            detail = ", ".join(f"{k}: {theirs.get(k)!r} there, {mine.get(k)!r} in "
                               f"{given_as or 'this run'}" for k in differ[:4])
            raise UsageError(f"--output_dir {output_dir} holds a run of another model ({path} "
                             f"differs in {detail}); use a new --output_dir or the same config")
    elif is_chief:
        io_utils.write_text_atomically(path, albert_config.to_json_string())


def _read(path: str) -> bytes:
    with io_utils.files(path).GFile(path, "rb") as reader:
        return reader.read()


def _copy_tokenizer_file(source: str, output_dir: str, names) -> str:
    """`source` in `output_dir` under a name the weight readers look for (its own name when it
    is one of `names`, else the last of them); returns the name. The copy of an earlier run
    must be the same file: another tokenizer would give the checkpoints other ids."""
    name = os.path.basename(source) if os.path.basename(source) in names else names[-1]
    target = os.path.join(output_dir, name)
    data = _read(source)
    if io_utils.exists(target):
        if _read(target) != data:
            raise UsageError(f"--output_dir {output_dir} holds {name} of an earlier run, which "
                             f"differs from {source}; use a new --output_dir or the same "
                             "tokenizer")
        return name
    with io_utils.atomic_output(target) as tmp:
        with io_utils.files(tmp).GFile(tmp, "wb") as writer:
            writer.write(data)
    return name


def write_tokenizer_files(output_dir: str, spm_model_file: str | None = None,
                          vocab_file: str | None = None, do_lower_case: bool = True) -> None:
    """The tokenizer file (a copy) and its `tokenizer_config.json` (the casing, and the other
    settings recorded beside the original file) in `output_dir`."""
    tokenizer = spm_model_file or vocab_file
    if not tokenizer:
        return
    if spm_model_file:
        key, name = "spm_model_file", _copy_tokenizer_file(spm_model_file, output_dir, SPM_NAMES)
    else:
        key, name = "vocab_file", _copy_tokenizer_file(vocab_file, output_dir, VOCAB_NAMES)
    recorded, _ = settings.read_settings(tokenizer) if io_utils.is_local(tokenizer) else (None, None)
    values = {k: v for k, v in (recorded or {}).items()
              if k not in ("spm_model_file", "vocab_file")}
    values.update({"do_lower_case": bool(do_lower_case), key: name})
    settings.write_settings(output_dir, values)


def write_model_files(output_dir: str, config, is_chief: bool = True) -> None:
    """albert_config.json and the tokenizer files of a task's run `config` (its resolved
    `albert_config`, `spm_model_file` / `vocab_file`, `do_lower_case`) into `output_dir`."""
    albert_config = getattr(config, "albert_config", None)
    if albert_config is not None:
        check_or_write_config(output_dir, albert_config, config.albert_config_file, is_chief)
    if is_chief:
        write_tokenizer_files(output_dir, getattr(config, "spm_model_file", None),
                              getattr(config, "vocab_file", None),
                              getattr(config, "do_lower_case", True))
