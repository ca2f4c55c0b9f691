"""`AlbertConfig`: the model configuration, keyed exactly like the original JSON files."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from typing import Any

from albert_tf.errors import AlbertError
from albert_tf.io_utils import write_text_atomically

ACTIVATIONS = ("linear", "", "relu", "gelu", "gelu_new", "tanh")
SHARE_PARAMETERS = ("all", "attention", "ffn", "none")


class ConfigError(AlbertError, ValueError):
    """A config file or dict that cannot describe an ALBERT model."""


@dataclasses.dataclass
class AlbertConfig:
    """Hyper-parameters of an ALBERT encoder.

    Field names are the original `albert_config.json` keys, so a released config loads unchanged.
    Defaults are the original constructor's (the xxlarge shape); `vocab_size` has no default.
    `down_scale_factor`, `net_structure_type`, `layers_to_keep`, `gap_size` and
    `num_memory_blocks` are inert in the original and are only carried through.
    `share_parameters` is ours: which sub-layers the layer groups share (see `group_map`).
    """

    vocab_size: int
    embedding_size: int = 128
    hidden_size: int = 4096
    num_hidden_layers: int = 12
    num_hidden_groups: int = 1
    num_attention_heads: int = 64
    intermediate_size: int = 16384
    inner_group_num: int = 1
    down_scale_factor: int = 1
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    net_structure_type: int = 0
    layers_to_keep: list = dataclasses.field(default_factory=list)
    gap_size: int = 0
    num_memory_blocks: int = 0
    share_parameters: str = "all"

    def __post_init__(self):
        self.validate()

    # ----------------------------------------------------------------- checks
    def validate(self) -> None:
        positive = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
                    "num_hidden_groups", "num_attention_heads", "intermediate_size",
                    "inner_group_num", "max_position_embeddings", "type_vocab_size")
        for key in positive:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"config key '{key}' must be a positive integer, got {value!r}")
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ConfigError(f"config key '{key}' must be a probability in [0, 1), got {value!r}")
        if not isinstance(self.initializer_range, (int, float)) or self.initializer_range <= 0:
            raise ConfigError(f"config key 'initializer_range' must be > 0, got {self.initializer_range!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads})")
        if self.num_hidden_groups > self.num_hidden_layers:
            raise ConfigError(
                f"num_hidden_groups ({self.num_hidden_groups}) exceeds num_hidden_layers "
                f"({self.num_hidden_layers}): a group would never be used")
        if not isinstance(self.hidden_act, str) or self.hidden_act.lower() not in ACTIVATIONS:
            raise ConfigError(
                f"config key 'hidden_act' is {self.hidden_act!r}; known: {', '.join(a for a in ACTIVATIONS if a)}")
        if self.share_parameters not in SHARE_PARAMETERS:
            raise ConfigError(
                f"config key 'share_parameters' is {self.share_parameters!r}; "
                f"known: {', '.join(SHARE_PARAMETERS)}")

    # ------------------------------------------------------------ properties
    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def group_index(self, layer: int) -> int:
        """Group of layer `layer`, with the original's truncated float expression.

        `int(l / L * G)` is not always `(l * G) // L` (L = G = 22 maps layer 15 to group 14), and
        released code only creates variables for groups some layer maps to, so we keep it.
        """
        return int(layer / self.num_hidden_layers * self.num_hidden_groups)

    def group_map(self) -> list[tuple[int, int]]:
        """Per layer: (group holding its attention, group holding its FFN).

        `all` is the original: both halves of a block come from the layer's group. `attention`
        shares only attention (each layer owns its FFN), `ffn` only the FFN, `none` nothing
        (the same as num_hidden_groups == num_hidden_layers).
        """
        result = []
        for layer in range(self.num_hidden_layers):
            shared = self.group_index(layer)
            attention = shared if self.share_parameters in ("all", "attention") else layer
            ffn = shared if self.share_parameters in ("all", "ffn") else layer
            result.append((attention, ffn))
        return result

    # ------------------------------------------------------------ conversion
    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "config dict") -> "AlbertConfig":
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(values).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown config key(s) {', '.join(map(repr, unknown))}; "
                              f"known keys: {', '.join(sorted(known))}")
        if "vocab_size" not in values:
            raise ConfigError(f"{source}: required key 'vocab_size' is missing")
        try:
            return cls(**copy.deepcopy(values))
        except ConfigError as error:
            raise ConfigError(f"{source}: {error}") from None

    @classmethod
    def from_json_file(cls, path: str | os.PathLike) -> "AlbertConfig":
        import tensorflow as tf  # GCS paths go through tf.io.gfile, as in the original

        path = os.fspath(path)
        if not tf.io.gfile.exists(path):
            raise ConfigError(f"config file not found: {path}")
        with tf.io.gfile.GFile(path, "r") as reader:
            text = reader.read()
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}: not valid JSON ({error})") from None
        return cls.from_dict(values, source=path)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dataclasses.asdict(self))

    def to_json_string(self) -> str:
        """Sorted keys, 2-space indent and a trailing newline, as the original writes."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path: str | os.PathLike) -> None:
        write_text_atomically(path, self.to_json_string())

    def replace(self, **changes) -> "AlbertConfig":
        return dataclasses.replace(self, **changes)


def _group_runs(config) -> list[tuple[tuple[int, int], int]]:
    """The layers' (attention group, FFN group) pairs in order, each with how many layers in a
    row use it: [((0, 0), 6), ((1, 1), 6)] for 12 layers in 2 groups."""
    runs: list = []
    for groups in config.group_map():
        if runs and runs[-1][0] == groups:
            runs[-1] = (groups, runs[-1][1] + 1)
        else:
            runs.append((groups, 1))
    return runs


def with_passes(config: AlbertConfig, passes, flag: str = "--num_hidden_layers") -> AlbertConfig:
    """`config` run `passes` times instead of its trained `num_hidden_layers`: the same weights
    (the shared layer, or each group, runs fewer times), so the same size at K/L of the compute.

    `passes` must be between 1 and the trained depth. With layer groups it must keep their
    pattern: each group keeps its place and its share of the passes (12 passes in 2 groups run
    as 6, 4 or 2; never 3, which would give group 0 two passes and group 1 one). A model whose
    groups do not share the layer's sub-layers (`share_parameters` other than all) owns weights
    per layer and runs only its trained depth. None or the trained depth: `config` unchanged."""
    if passes is None:
        return config
    if isinstance(passes, bool) or not isinstance(passes, int):
        raise ConfigError(f"{flag} must be an integer, got {passes!r}")
    trained = config.num_hidden_layers
    if not 1 <= passes <= trained:
        raise ConfigError(f"{flag}={passes} must be between 1 and the model's trained depth "
                          f"(num_hidden_layers {trained})")
    if passes == trained:
        return config
    if config.share_parameters != "all":
        raise ConfigError(f"{flag}={passes}: the model's layers own their weights "
                          f"(share_parameters {config.share_parameters!r}), so it runs only its "
                          f"trained depth (num_hidden_layers {trained})")
    fewer = config.replace(num_hidden_layers=max(passes, config.num_hidden_groups))
    mine, theirs = _group_runs(fewer), _group_runs(config)
    if passes < config.num_hidden_groups or [g for g, _ in mine] != [g for g, _ in theirs] or any(
            n * passes != m * trained for (_, n), (_, m) in zip(theirs, mine)):
        raise ConfigError(
            f"{flag}={passes} does not keep the pattern of the model's "
            f"{config.num_hidden_groups} layer groups (num_hidden_layers {trained}, "
            f"num_hidden_groups {config.num_hidden_groups}): each group must keep its share of "
            f"the passes (with even groups: a multiple of {config.num_hidden_groups})")
    return fewer


def _released(hidden, layers, heads, intermediate, dropout):
    return dict(vocab_size=30000, embedding_size=128, hidden_size=hidden, num_hidden_layers=layers,
                num_hidden_groups=1, num_attention_heads=heads, intermediate_size=intermediate,
                inner_group_num=1, down_scale_factor=1, hidden_act="gelu",
                hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                max_position_embeddings=512, type_vocab_size=2, initializer_range=0.02,
                net_structure_type=0, gap_size=0, num_memory_blocks=0)


# The released English configs. v2 was trained without dropout; v1 xxlarge had none either.
_SHAPES = {
    "base": (768, 12, 12, 3072),
    "large": (1024, 24, 16, 4096),
    "xlarge": (2048, 24, 16, 8192),
    "xxlarge": (4096, 12, 64, 16384),
}
PRESETS: dict[str, dict[str, Any]] = {}
for _name, (_h, _l, _n, _i) in _SHAPES.items():
    PRESETS[f"albert_{_name}_v1"] = _released(_h, _l, _n, _i, 0.0 if _name == "xxlarge" else 0.1)
    PRESETS[f"albert_{_name}_v2"] = _released(_h, _l, _n, _i, 0.0)
PRESETS["albert_xxlarge_v1"]["layers_to_keep"] = []
PRESETS["albert_xxlarge_v2"]["layers_to_keep"] = []


def preset(name: str, **overrides) -> AlbertConfig:
    """A released configuration, e.g. `preset("albert_base_v2")` (`base` means v2)."""
    key = name if name.startswith("albert_") else f"albert_{name}"
    if key not in PRESETS and f"{key}_v2" in PRESETS:
        key = f"{key}_v2"
    if key not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}")
    values = dict(PRESETS[key])
    values.update(overrides)
    return AlbertConfig.from_dict(values, source=f"preset {key}")
