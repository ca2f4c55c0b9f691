"""What every writer shares: the config and spm model a source is written with, the checks a
target format makes before anything is written, and the report of what was written and left."""

from __future__ import annotations

import dataclasses
import os

from albert_tf.config import AlbertConfig
from albert_tf.weights.arrays import check_shapes, source_arrays
from albert_tf.weights.heads import heads_of
from albert_tf.weights.source import SourceError

# Config keys another format has no place for, with the only value it can express: the
# original's inert keys and our share_parameters.
FIXED_KEYS = {"down_scale_factor": 1, "net_structure_type": 0, "layers_to_keep": [],
              "gap_size": 0, "num_memory_blocks": 0, "share_parameters": "all"}


@dataclasses.dataclass
class WriteReport:
    """What a writer wrote: the folder, the format, the heads written and the heads the target
    has no place for (left out), the model class the target will see, and notes."""

    path: str
    format: str
    architecture: str
    heads: tuple
    left: tuple
    notes: list = dataclasses.field(default_factory=list)
    unused: list = dataclasses.field(default_factory=list)  # source weights not written

    def describe(self) -> str:
        text = (f"wrote {self.format} {self.architecture} to {self.path} "
                f"(heads: {', '.join(self.heads) or 'none'})")
        if self.left:
            text += f"; left out (no place for them in {self.format}): {', '.join(self.left)}"
        if self.unused:
            shown = ", ".join(self.unused[:5]) + (", ..." if len(self.unused) > 5 else "")
            text += f"; {len(self.unused)} source weights not written ({shown})"
        return "; ".join([text] + self.notes)


@dataclasses.dataclass
class Prepared:
    config: object
    arrays: dict
    heads: tuple
    spm_model_file: str | None


def prepare(source, config=None, spm_model_file=None) -> Prepared:
    """The config, TF1 arrays, heads and spm model to write `source` with. `config` and
    `spm_model_file` fill in what the source lacks; both given and different is refused."""
    if isinstance(config, (str, os.PathLike)):
        config = AlbertConfig.from_json_file(config)
    if config is not None and source.config is not None and config != source.config:
        diff = [k for k, v in config.to_dict().items() if source.config.to_dict().get(k) != v]
        raise SourceError(f"{source.path}: its config and --albert_config_file disagree on "
                          f"config key {diff[0]} ({getattr(source.config, diff[0])!r} vs "
                          f"{getattr(config, diff[0])!r})")
    config = config or source.config
    if config is None:
        raise SourceError(f"{source.path} holds no ALBERT config: pass --albert_config_file")
    if source.config is None:
        source.config = config  # our own checkpoints are read through a model of this config
    arrays = source_arrays(source)
    check_shapes(arrays, config, source.path)
    spm = spm_model_file or source.spm_model_file
    if spm is not None and not os.path.isfile(spm):
        raise SourceError(f"--spm_model_file {spm} does not exist")
    heads = tuple(source.heads) or heads_of(arrays)
    return Prepared(config, arrays, heads, spm)


def unused_names(arrays, written) -> list:
    """Source weights a writer did not write (the step counter aside)."""
    return sorted(set(arrays) - set(written) - {"global_step"})


def refuse_fixed_keys(config, target: str, extra: dict | None = None) -> None:
    """Refuses (before anything is written) a config the target cannot express, naming the key."""
    for key, value in {**FIXED_KEYS, **(extra or {})}.items():
        if getattr(config, key) != value:
            raise SourceError(f"{target} cannot express config key {key}={getattr(config, key)!r} "
                              f"(only {value!r}); nothing was written")
