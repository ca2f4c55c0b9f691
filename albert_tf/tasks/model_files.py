"""A trained run's output_dir holds everything its checkpoints need besides the weights: the model
config (`albert_config.json`), the tokenizer file (the SentencePiece model or the WordPiece
`vocab.txt`) with its `tokenizer_config.json`, and (written by the task) `labels.json`. So
`--init_checkpoint=<output_dir>` alone is enough for every later command: convert, export,
fine-tune, predict (the weight readers take these files from the folder, `weights.resolve`).
"""

from __future__ import annotations

import os

from albert_tf import io_utils
from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.tokenization import settings
from albert_tf.weights.model_folder import SPM_NAMES, VOCAB_NAMES

CONFIG_NAME = "albert_config.json"


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
