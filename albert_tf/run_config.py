"""The run configs every entry point fills from its flags: where and how it runs (`RuntimeConfig`),
how long and how hard it trains (`ScheduleConfig`) and the fields every task shares (`RunBasics`,
`RunConfig`, `TextTaskConfig`; a classifier's and a tagger's, `ClassifierTaskConfig`). Plain
dataclasses with no TensorFlow import, so a script parses and checks its flags (and answers
`--help`) before TensorFlow starts."""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
import typing

from albert_tf.config import AlbertConfig
from albert_tf.errors import AlbertError, UsageError


class RuntimeError_(AlbertError, RuntimeError):
    """A runtime that cannot be set up here (no TPU, bad flag value)."""


STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
PRECISIONS = ("none", "bf16", "fp16")


@dataclasses.dataclass
class RuntimeConfig:
    """One object shared by every entry point, so a different device is a flag, not a code path.

    distribution_strategy: one_device | mirrored | multi_worker_mirrored | tpu.
    mixed_precision: none | bf16 | fp16 (fp16 uses dynamic loss scaling in the train step).
    jit_compile: compile the forward+backward pass with XLA.
    gradient_accumulation_steps: split each replica's batch into this many micro-batches and
      sum their gradients before one update (the update equals one on the whole batch).
    recompute: recompute each pass of the shared layer in the backward step instead of
      keeping its activations (`layers.encoder.use_recompute`): less memory, more compute.
    """

    distribution_strategy: str = "one_device"
    mixed_precision: str = "none"
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
    recompute: bool = False
    tpu_name: str | None = None
    tpu_zone: str | None = None
    gcp_project: str | None = None
    master: str | None = None
    use_tpu: bool = False  # the original's flag: means distribution_strategy=tpu
    devices: tuple | None = None  # for mirrored: explicit device names (tests use logical CPUs)

    def __post_init__(self):
        if self.use_tpu:
            self.distribution_strategy = "tpu"
        if self.distribution_strategy not in STRATEGIES:
            raise RuntimeError_(f"distribution_strategy must be one of {STRATEGIES}, "
                                f"got {self.distribution_strategy!r}")
        if self.mixed_precision not in PRECISIONS:
            raise RuntimeError_(f"mixed_precision must be one of {PRECISIONS}, "
                                f"got {self.mixed_precision!r}")
        if int(self.gradient_accumulation_steps) < 1:
            raise RuntimeError_("--gradient_accumulation_steps must be at least 1, got "
                                f"{self.gradient_accumulation_steps}")


OPTIMIZERS = ("adamw", "lamb")


def use_onednn_kernels() -> None:
    """TensorFlow turns its oneDNN kernels on by default only on x86 CPUs with AVX-512, yet on an
    AVX2 CPU they make training steps 1.65x (ALBERT-base) to 2.4x (the paper's quick models)
    faster, mostly by not faulting in fresh memory every step. TensorFlow reads the switch once,
    when it is first imported, so every entry point calls this before that (a no-op after); a
    value the user set wins (`TF_ENABLE_ONEDNN_OPTS=0` turns them off)."""
    if "tensorflow" not in sys.modules and platform.machine().lower() in ("x86_64", "amd64"):
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


@dataclasses.dataclass
class ScheduleConfig:
    """How long and how hard to train, and how often to checkpoint."""

    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 1000
    num_warmup_steps: int = 0
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5  # 0 keeps every checkpoint
    optimizer: str = "adamw"
    poly_power: float = 1.0
    start_warmup_step: int = 0
    log_every_steps: int = 100

    def __post_init__(self):
        for name in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
            if int(getattr(self, name)) < 1:
                raise UsageError(f"--{name} must be at least 1, got {getattr(self, name)}")
        # A rate of 0 trains nothing and a negative one climbs the loss, both without a word.
        if not float(self.learning_rate) > 0:
            raise UsageError(f"--learning_rate must be above 0, got {self.learning_rate}")


@dataclasses.dataclass
class RunBasics:
    """The fields of every run on a model: where it writes, the model it starts from (and its
    config file, when the source holds none) and what it does. `RunConfig` (the tasks the
    driver runs) and run_embeddings.py's config (`tasks.embeddings.config`) build on it."""

    output_dir: str | None = None
    albert_config_file: str | None = None
    init_checkpoint: str | None = None
    do_train: bool = False
    do_eval: bool = False


@dataclasses.dataclass
class RunConfig(RunBasics):
    """Fields every task has. Subclasses add their own, and override `schedule`'s defaults with
    a `default_factory`. `FLAG_NAMES` maps a field to the original's flag name where it differs."""

    FLAG_NAMES: typing.ClassVar[dict] = {}

    do_predict: bool = False
    export_dir: str | None = None
    # The model's AlbertConfig when it comes from the --init_checkpoint source rather than
    # --albert_config_file (filled by `weights.resolve.resolve_run_config`; not a flag).
    albert_config: object = None
    # The flag names given on the command line (`cli.config_from_flags`); None when the config
    # was built in Python. Settings a model records (its casing) yield only to a flag given.
    flags_given: frozenset | None = None
    runtime: RuntimeConfig = dataclasses.field(default_factory=RuntimeConfig)
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)

    @classmethod
    def from_flat(cls, values: typing.Mapping):
        """The config from one flat mapping of flag names to values (absl FLAGS' values, or a
        dict in tests): a nested dataclass field (`runtime`, `schedule`) takes the names of its
        own fields; names the config does not know are ignored."""
        return dataclass_from_flat(cls, values)

    def require(self, *names: str) -> None:
        missing = [name for name in names if getattr(self, name) in (None, "") and not (
            name == "albert_config_file" and self.albert_config is not None)]
        if missing:
            raise UsageError(", ".join(f"--{self.FLAG_NAMES.get(n, n)}" for n in missing) +
                             (" is" if len(missing) == 1 else " are") + " required" +
                             (" (or an --init_checkpoint that holds a config)"
                              if "albert_config_file" in missing else ""))

    def load_albert_config(self):
        """The model's `AlbertConfig`: the one the run's inputs resolved (`weights.run_inputs`:
        `--albert_config_file`, checked against the source, else the source's), else the file."""
        if self.albert_config is not None:  # parsed once, when the inputs were resolved
            return self.albert_config
        if self.albert_config_file:
            return AlbertConfig.from_json_file(self.albert_config_file)
        if self.albert_config is None:
            self.require("albert_config_file")
        return self.albert_config


# The flag that names each split's file, for tasks that read your own files.
SPLIT_FLAGS = {"train": "train_file", "dev": "dev_file", "test": "test_file"}


@dataclasses.dataclass
class SplitFiles:
    """Your own files, one per split (`--train_file`, `--dev_file`, `--test_file`)."""

    train_file: str | None = None
    dev_file: str | None = None
    test_file: str | None = None

    def split_file(self, split: str) -> str | None:
        return getattr(self, SPLIT_FLAGS[split])


# The original's run_classifier.py and run_race.py name the step counts so; run_ner.py follows.
STEP_FLAG_NAMES = {"num_train_steps": "train_step", "num_warmup_steps": "warmup_step"}


@dataclasses.dataclass
class TextTaskConfig(RunConfig):
    """The fields of every fine-tuning task that tokenizes raw text."""

    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 512
    # --num_hidden_layers: passes of the shared layer this run makes (None: the trained depth);
    # the model's config key of that name is resolved from the weights (`config.with_passes`).
    num_hidden_layers: int | None = None
    # --lora_rank: train rank-R adapters on the shared layer's query and value, and the head,
    # with the encoder frozen (`models.lora`); None: full fine-tuning.
    lora_rank: int | None = None
    # --lora_word_rank: the rank of a --lora_rank run's word-table adapter (None: 1; 0: none).
    lora_word_rank: int | None = None

    def __post_init__(self):
        # [CLS] one piece [SEP]: below that a value is a typo (0, -8), never "the default".
        check_at_least(self, "max_seq_length", 3)
        check_at_least(self, "lora_rank", 1)
        check_at_least(self, "lora_word_rank", 0)
        if self.lora_word_rank is not None and self.lora_rank is None:
            raise UsageError("--lora_word_rank is used only with --lora_rank")
        if self.lora_rank is not None and getattr(self, "distill_from", None):
            raise UsageError("--lora_rank and --distill_from: not together (a student trains "
                             "all its weights); distil first, then train adapters on the student")


# --distill_from's defaults: the soft labels at temperature 2, weighed half (docs/compression.md).
DEFAULT_TEMPERATURE = 2.0
DEFAULT_ALPHA = 0.5


def check_distillation(config, error: type = UsageError) -> None:
    """--distill_from's settings (`distill_from`, `distill_temperature`, `distill_alpha` of a
    task config), checked before TensorFlow starts; the student starts from the teacher's
    weights unless --init_checkpoint names others."""
    given = config.flags_given or ()
    if not config.distill_from:
        for name in ("distill_temperature", "distill_alpha"):
            if name in given:
                raise error(f"--{name} is used only with --distill_from")
        return
    if not float(config.distill_temperature) > 0:
        raise error(f"--distill_temperature must be above 0, got {config.distill_temperature}")
    if not 0.0 <= float(config.distill_alpha) <= 1.0:
        raise error(f"--distill_alpha must be between 0 and 1, got {config.distill_alpha}")
    if not config.init_checkpoint:
        config.init_checkpoint = config.distill_from


def check_at_least(config, name: str, minimum: int) -> None:
    """A `UsageError` naming the flag when the field `name` of `config` is below `minimum`."""
    value = getattr(config, name)
    if value is not None and int(value) < minimum:
        flag = getattr(config, "FLAG_NAMES", {}).get(name, name)
        raise UsageError(f"--{flag} must be at least {minimum}, got {value}")


def window_stride(doc_stride, max_seq_length: int) -> int:
    """`doc_stride`, or half of the `max_seq_length - 2` pieces a single text's window holds."""
    if doc_stride is not None:
        return int(doc_stride)
    return max(1, (int(max_seq_length) - 2) // 2)


def check_doc_stride(doc_stride, max_seq_length: int, prefix: str = "--",
                     error: type = UsageError) -> None:
    """A `doc_stride` given must step between 1 piece and a whole window (`max_seq_length - 2`);
    the default (`window_stride`) always does."""
    if doc_stride is not None and not 1 <= int(doc_stride) <= int(max_seq_length) - 2:
        raise error(f"{prefix}doc_stride must be between 1 and {prefix}max_seq_length - 2 "
                    f"({int(max_seq_length) - 2}), got {doc_stride}")


@dataclasses.dataclass
class ClassifierTaskConfig(TextTaskConfig):
    """The fields of a classifier of texts or of their words (run_classifier.py, run_ner.py):
    the original run_classifier.py's step flag names, the feature cache, the export files, the
    shuffle, the windows of a long text (`doc_stride`) and `--distill_from`, whose checks each
    config runs in its own order (`check_doc_stride`, `check_distillation`)."""

    FLAG_NAMES = STEP_FLAG_NAMES

    cached_dir: str | None = None
    # Kinds of file written beside the SavedModel export (serving/tflite.py, onnx_export.py,
    # openvino_export.py), comma-separated; `tasks.base.check_export_formats` checks them.
    tflite: str = ""
    onnx: str = ""
    openvino: str = ""
    shuffle_buffer: int = 100  # the original run_classifier.py's
    seed: int | None = None
    doc_stride: int | None = None
    # A teacher's folder, a classifier or a tagger as the run's (tasks/distill.py).
    distill_from: str | None = None
    distill_temperature: float = DEFAULT_TEMPERATURE
    distill_alpha: float = DEFAULT_ALPHA

    @property
    def stride(self) -> int:
        """`doc_stride`, or half of the `max_seq_length - 2` pieces a window holds."""
        return window_stride(self.doc_stride, self.max_seq_length)


def dataclass_from_flat(cls, values, renames=None):
    """`cls(...)` from one flat mapping of flag names to values.

    A field whose type is itself a dataclass (`runtime`, `schedule`) is filled the same way from
    the same mapping, starting from the field's default. `renames` (default `cls.FLAG_NAMES`)
    maps a field to the original's flag name where it differs (`num_train_steps` <- `train_step`).
    Names the dataclass does not know are ignored; fields with no value keep their defaults.
    """
    renames = getattr(cls, "FLAG_NAMES", {}) if renames is None else renames
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        kind = hints.get(field.name)
        if dataclasses.is_dataclass(kind):
            base = (field.default_factory() if field.default_factory is not dataclasses.MISSING
                    else kind())
            changes = {f.name: values[renames.get(f.name, f.name)]
                       for f in dataclasses.fields(kind)
                       if f.init and renames.get(f.name, f.name) in values}
            kwargs[field.name] = dataclasses.replace(base, **changes)
            continue
        name = renames.get(field.name, field.name)
        if name in values:
            kwargs[field.name] = values[name]
    return cls(**kwargs)


# The kinds of TFLite file `--tflite` names (serving.tflite writes them); checked with the flags.
TFLITE_KINDS = ("float32", "float16", "dynamic_int8")


def _parse_kinds(value, flag: str, kinds: tuple[str, ...]) -> tuple[str, ...]:
    """"float32,dynamic_int8" (or a list) → the named kinds in `kinds` order; empty → ()."""
    if value is None:
        return ()
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip() for n in names if n and n.strip()]
    unknown = [n for n in names if n not in kinds]
    if unknown:
        raise UsageError(f"{flag}: unknown kind {unknown[0]!r}; choose from "
                         f"{', '.join(kinds)}")
    return tuple(k for k in kinds if k in names)


def parse_tflite_kinds(value, flag: str = "--tflite") -> tuple[str, ...]:
    """"float32,dynamic_int8" (or a list) → the kinds in `TFLITE_KINDS` order; empty → ()."""
    return _parse_kinds(value, flag, TFLITE_KINDS)


# The kinds of ONNX / OpenVINO file `--onnx` / `--openvino` name (serving.onnx_export writes them).
RUNTIME_KINDS = ("float32", "dynamic_int8")


def parse_runtime_kinds(value, flag: str = "--onnx") -> tuple[str, ...]:
    """"float32,dynamic_int8" (or a list) → the kinds in `RUNTIME_KINDS` order; empty → ()."""
    return _parse_kinds(value, flag, RUNTIME_KINDS)


# `--openvino` also writes `static_int8`: int8 activations calibrated at export
# (serving.openvino_int8), which OpenVINO runs as int8 matmuls and onnxruntime does not speed up.
OPENVINO_KINDS = (*RUNTIME_KINDS, "static_int8")


def parse_openvino_kinds(value, flag: str = "--openvino") -> tuple[str, ...]:
    """"float32,static_int8" (or a list) → the kinds in `OPENVINO_KINDS` order; empty → ()."""
    return _parse_kinds(value, flag, OPENVINO_KINDS)
