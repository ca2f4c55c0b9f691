"""Where and how training runs: distribution strategy, precision policy, XLA, accumulation."""

from __future__ import annotations

import dataclasses
import json
import os

import keras
import tensorflow as tf

from albert_tf.run_config import RuntimeConfig, RuntimeError_


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
