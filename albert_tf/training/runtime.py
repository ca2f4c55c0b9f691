"""Where and how training runs: distribution strategy, precision policy, XLA, accumulation."""

from __future__ import annotations

from albert_tf.errors import AlbertError
import dataclasses
import json
import os

import keras
import tensorflow as tf

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
PRECISIONS = ("none", "bf16", "fp16")


class RuntimeError_(AlbertError, RuntimeError):
    """A runtime that cannot be set up here (no TPU, bad flag value)."""


@dataclasses.dataclass
class RuntimeConfig:
    """One object shared by every entry point, so a different device is a flag, not a code path.

    distribution_strategy: one_device | mirrored | multi_worker_mirrored | tpu.
    mixed_precision: none | bf16 | fp16 (fp16 uses dynamic loss scaling in the train step).
    jit_compile: compile the forward+backward pass with XLA.
    gradient_accumulation_steps: split each replica's batch into this many micro-batches and
      sum their gradients before one update (the update equals one on the whole batch).
    """

    distribution_strategy: str = "one_device"
    mixed_precision: str = "none"
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
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
            raise RuntimeError_("gradient_accumulation_steps must be >= 1, got "
                                f"{self.gradient_accumulation_steps}")


def _tpu_strategy(config: RuntimeConfig):
    tpu = config.tpu_name or config.master or ""
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu, zone=config.tpu_zone, project=config.gcp_project)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except Exception as error:  # ValueError / NotFoundError / RuntimeError depending on the host
        raise RuntimeError_(
            f"--use_tpu / distribution_strategy=tpu: no TPU could be reached "
            f"(tpu_name={config.tpu_name!r}, master={config.master!r}): {error}") from None
    return tf.distribute.TPUStrategy(resolver)


def make_strategy(config: RuntimeConfig) -> tf.distribute.Strategy:
    kind = config.distribution_strategy
    if kind == "tpu":
        return _tpu_strategy(config)
    if kind == "multi_worker_mirrored":
        if not os.environ.get("TF_CONFIG"):
            raise RuntimeError_("multi_worker_mirrored needs the TF_CONFIG environment variable "
                                "(cluster spec and this worker's task)")
        return tf.distribute.MultiWorkerMirroredStrategy()
    if kind == "mirrored":
        return tf.distribute.MirroredStrategy(devices=list(config.devices) if config.devices else None)
    gpus = tf.config.list_logical_devices("GPU")
    return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")


def set_precision(mixed_precision: str) -> None:
    """Sets the global Keras dtype policy (call before building the model)."""
    policy = {"none": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}[mixed_precision]
    keras.mixed_precision.set_dtype_policy(policy)


class Runtime:
    """The strategy plus the settings the train step needs. Build models and optimizers inside
    `runtime.scope()`."""

    def __init__(self, config: RuntimeConfig | None = None, strategy=None):
        self.config = config or RuntimeConfig()
        set_precision(self.config.mixed_precision)
        self.strategy = strategy or make_strategy(self.config)

    def scope(self):
        return self.strategy.scope()

    @property
    def num_replicas(self) -> int:
        return self.strategy.num_replicas_in_sync

    @property
    def is_chief(self) -> bool:
        resolver = getattr(self.strategy, "cluster_resolver", None)
        if resolver is None or not getattr(resolver, "task_type", None):
            return True
        if resolver.task_type in ("chief", "master"):
            return True
        cluster = resolver.cluster_spec().as_dict()
        return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in cluster

    @property
    def task_id(self) -> int:
        resolver = getattr(self.strategy, "cluster_resolver", None)
        return int(getattr(resolver, "task_id", 0) or 0) if resolver else 0

    def describe(self) -> str:
        return json.dumps({**dataclasses.asdict(self.config), "replicas": self.num_replicas})
