"""Runtime on CPU: MirroredStrategy over 2 logical CPUs = one device, 2-worker
MultiWorkerMirroredStrategy on loopback, accumulation 4×2 = batch 8, bf16 / fp16 / XLA."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from albert_tf.training import Runtime, RuntimeConfig
from albert_tf.training.runtime import RuntimeError_
from support.golden import one_layer_config, write_golden_records
from support.paths import REPO
from support.tiny_pretraining import train_tiny


def assert_same_run(a, b, atol=1e-5):
    np.testing.assert_allclose(a[0], b[0], atol=atol, rtol=1e-5)
    assert len(a[2]) == len(b[2])
    for x, y in zip(a[2], b[2]):
        np.testing.assert_allclose(x, y, atol=atol, rtol=1e-5)


@pytest.fixture(scope="module")
def fp32_reference(tmp_path_factory):
    return train_tiny(tmp_path_factory.mktemp("ref"), steps=4)


def test_accumulating_four_micro_batches_of_two_equals_batch_eight(tmp_path, fp32_reference):
    accumulated = train_tiny(tmp_path / "b", steps=4, gradient_accumulation_steps=4)
    assert max(fp32_reference[1]) > 1.0, "clipping must be active for the comparison to mean something"
    assert_same_run(fp32_reference, accumulated)


# Each runtime's 4 steps against float32's: (losses, weights) tolerances 10x the largest gaps
# measured on 2026-11-29 (bf16: 1.6e-4, 1.1e-2; fp16: 3.9e-5, 2.8e-3; XLA: 0, 3.6e-7), against
# a loss drop of 0.107 over the 4 steps. Half precision must also show: a run that left the
# policy at float32 would match float32 to the last bits (floors at 1/20 of the measured gaps).
RUNTIME_GAPS = {"bf16": ((2e-3, 1e-1), 5e-4), "xla": ((1e-5, 4e-6), None),
                "fp16": ((4e-4, 3e-2), 1e-4)}


@pytest.mark.parametrize("kwargs", [dict(mixed_precision="bf16"), dict(jit_compile=True),
                                    dict(mixed_precision="fp16")],
                         ids=["bf16", "xla", "fp16"])
def test_reduced_precision_and_xla_train_without_nan(tmp_path, kwargs, fp32_reference):
    reference = fp32_reference
    losses, norms, weights = train_tiny(tmp_path / "run", steps=4, **kwargs)
    assert all(np.isfinite(losses)) and all(np.isfinite(w).all() for w in weights)
    assert losses[-1] < losses[0]
    (loss_tolerance, weight_tolerance), floor = RUNTIME_GAPS[kwargs.get("mixed_precision", "xla")]
    np.testing.assert_allclose(losses, reference[0], atol=loss_tolerance, rtol=0)
    assert len(weights) == len(reference[2])
    gaps = [float(np.abs(w - r).max()) for w, r in zip(weights, reference[2])]
    assert max(gaps) <= weight_tolerance, gaps
    if floor is not None:
        assert max(gaps) > floor, f"{kwargs}: the weights equal float32's: was it float32?"


def test_bad_runtime_values_are_clear_errors():
    with pytest.raises(RuntimeError_, match="distribution_strategy must be one of"):
        RuntimeConfig(distribution_strategy="gpu")
    with pytest.raises(RuntimeError_, match="mixed_precision must be one of"):
        RuntimeConfig(mixed_precision="int8")
    with pytest.raises(RuntimeError_, match="^--gradient_accumulation_steps must be at least 1, "
                       "got 0"):
        RuntimeConfig(gradient_accumulation_steps=0)
    with pytest.raises(RuntimeError_, match="TF_CONFIG"):
        Runtime(RuntimeConfig(distribution_strategy="multi_worker_mirrored"))


def test_mirrored_over_two_cpus_equals_one_device(tmp_path, fp32_reference):
    """Two replicas (the two logical CPUs tests/conftest.py sets up) against the module's
    one-device run of the same init and batches."""
    two = train_tiny(tmp_path / "two", steps=4, distribution_strategy="mirrored",
                     devices=("/cpu:0", "/cpu:1"))
    assert max(fp32_reference[1]) > 1.0, "clipping must be active for the comparison to mean something"
    assert len(two[2]) == len(fp32_reference[2])
    assert_same_run(fp32_reference, two)


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_multi_worker_mirrored_two_processes_write_one_checkpoint(fixtures_dir, tmp_path):
    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord", copies=2)
    config = one_layer_config(model_dir, tmp_path / "albert_config.json")
    out = tmp_path / "out"
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
    args = [sys.executable, "run_pretraining.py", f"--albert_config_file={config}",
            f"--input_file={records}", f"--output_dir={out}",
            f"--init_checkpoint={model_dir / 'ckpt' / 'model.ckpt'}",
            "--max_seq_length=24", "--max_predictions_per_seq=5", "--train_batch_size=4",
            "--num_train_steps=3", "--num_warmup_steps=1", "--save_checkpoints_steps=100",
            "--log_every_steps=1", "--distribution_strategy=multi_worker_mirrored"]
    procs = []
    for index in range(2):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
               "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker",
                                                                     "index": index}})}
        procs.append(subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    logs = []
    for proc in procs:
        try:
            logs.append(proc.communicate(timeout=400)[0])
        finally:
            proc.kill()
    for proc, log in zip(procs, logs):
        assert proc.returncode == 0, log[-4000:]
    assert "replicas\": 2" in logs[0]
    assert "step 3/3" in logs[0] and "step 3/3" in logs[1]
    assert sorted(p.name for p in out.glob("*.index")) == ["model.ckpt-3.index"]
    assert not list(out.glob(".worker_*"))


def test_runtime_config_from_flags_maps_use_tpu():
    from albert_tf.cli import config_from_flags
    from albert_tf.training import RuntimeConfig

    options = dict(use_tpu=True, distribution_strategy="mirrored", mixed_precision="bf16",
                   jit_compile=True, gradient_accumulation_steps=2, tpu_name="pod",
                   tpu_zone="z", gcp_project="p", master=None)
    config = config_from_flags(RuntimeConfig, options)
    assert (config.distribution_strategy, config.mixed_precision, config.jit_compile,
            config.gradient_accumulation_steps, config.tpu_name) == ("tpu", "bf16", True, 2, "pod")
    options["use_tpu"] = False
    assert config_from_flags(RuntimeConfig, options).distribution_strategy == "mirrored"
