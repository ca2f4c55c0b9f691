"""The model files of a run: `--albert_config_file` and `--spm_model_file` / `--vocab_file`, or,
when left out, the ones the `--init_checkpoint` source holds (a Hugging Face or keras-hub folder,
a TF-Hub module's assets, an original release folder, a run's output_dir).

Every entry point takes its files from here (through `run_inputs.resolve_inputs`, which adds
the casing, the labels and the checks between them), so the rule is one: a flag given wins, a flag left out is filled
from the source, and a flag that contradicts the source is one error naming the config key.
"""

from __future__ import annotations

import dataclasses
import filecmp
import os

from absl import logging

from albert_tf import io_utils
from albert_tf.config import AlbertConfig
from albert_tf.weights.readers import open_source
from albert_tf.weights.source import SourceError, WeightSource

# Keys that change what the weights mean: a flag file and a source must agree on them. Dropout
# and initializer_range are training choices: the flag file's values are used as given.
ARCHITECTURE_KEYS = (
    "vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups",
    "num_attention_heads", "intermediate_size", "inner_group_num", "down_scale_factor",
    "hidden_act", "max_position_embeddings", "type_vocab_size", "net_structure_type",
    "layers_to_keep", "gap_size", "num_memory_blocks", "share_parameters")


@dataclasses.dataclass
class ModelFiles:
    """What a run uses. `albert_config` is an `AlbertConfig`; `taken` lists what came from the
    source (for the log); `source` is the opened `WeightSource` or None."""

    albert_config: object = None
    spm_model_file: str | None = None
    vocab_file: str | None = None
    source: WeightSource | None = None
    taken: tuple = ()


def _source_or_none(path):
    """The source at `path` when there is one to read files from; None when the path holds no
    weights yet (the load reports that later, with the checkpoint's own error)."""
    if not path:
        return None
    path = os.fspath(path)
    if io_utils.is_local(path) and not os.path.exists(path) and not os.path.exists(path + ".index"):
        return None
    return open_source(path)


def check_config_agrees(flag_config, config_file, source: WeightSource) -> None:
    """A `SourceError` naming the first architecture key where `--albert_config_file` and the
    source's own config differ."""
    if source is None or source.config is None:
        return
    mine, theirs = flag_config.to_dict(), source.config.to_dict()
    for key in ARCHITECTURE_KEYS:
        if mine.get(key) != theirs.get(key):
            raise SourceError(
                f"--albert_config_file={config_file} says {key}={mine.get(key)!r} but "
                f"{source.path} has {key}={theirs.get(key)!r} (leave --albert_config_file out "
                f"to use the source's config)")


def _check_same_file(flag, given, held, source):
    if given and held and os.path.exists(given) and not filecmp.cmp(given, held, shallow=False):
        raise SourceError(f"--{flag}={given} differs from the one {source.path} holds ({held}); "
                          f"leave --{flag} out to use the source's")


def resolve_model_files(init_checkpoint=None, albert_config_file=None, spm_model_file=None,
                        vocab_file=None, need_tokenizer: bool = True,
                        source: WeightSource | None = None) -> ModelFiles:
    """The config and tokenizer files of a run (see the module docstring); `source` is the
    already opened `init_checkpoint`, if any."""
    source = source or _source_or_none(init_checkpoint)
    taken = []
    if albert_config_file:
        config = AlbertConfig.from_json_file(albert_config_file)
        check_config_agrees(config, albert_config_file, source)
    elif source is not None and source.config is not None:
        config = source.config
        taken.append(f"the model config of {source.path}")
    else:
        config = None
    if source is not None:
        _check_same_file("spm_model_file", spm_model_file, source.spm_model_file, source)
        _check_same_file("vocab_file", vocab_file, source.vocab_file, source)
        if need_tokenizer and not spm_model_file and not vocab_file:
            if source.spm_model_file:
                spm_model_file = source.spm_model_file
                taken.append(f"the SentencePiece model {spm_model_file}")
            elif source.vocab_file:
                vocab_file = source.vocab_file
                taken.append(f"the vocabulary {vocab_file}")
    if taken:
        logging.info("from %s: %s", source.path, "; ".join(taken))
    return ModelFiles(config, spm_model_file, vocab_file, source, tuple(taken))
