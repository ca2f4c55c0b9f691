"""The bench-only Pythons of bench/serving_latency.py's peers, and the ONNX Runtime peer: what a
CPU user who wants speed deploys instead of TF Serving (HF's ALBERT exported to ONNX: fp32 and
dynamic int8, plain and transformer-optimized).

The ORT peer needs torch, transformers, onnx, onnxscript and onnxruntime, which the library and
its tests never import: it runs in a separate bench-only Python (`--ort_python`, default
`.peers/ort_env/bin/python`; HF transformers' eager peer runs there too). keras-hub's peer runs
in `.peers/keras_hub_env`, a venv over this Python's packages (TensorFlow, Keras) that adds
keras-hub alone, so the library's environment never gets it. Both are made once with

    python bench/ort_peer.py --make_env          # .peers/ort_env (1.3 GB), .peers/keras_hub_env

Everything the ORT peer does goes through ../shared/bench/peer_onnxruntime.py (the model it makes
and its timing protocol) in that Python; this module only starts those processes and reads them.
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import re
import subprocess
import sys
import venv

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_ENV = REPO / ".peers" / "ort_env"
KERAS_HUB_ENV = REPO / ".peers" / "keras_hub_env"
PACKAGES = ("torch", "transformers", "onnx", "onnxscript", "onnxruntime", "safetensors")

# Runs in the peer's Python: the fp32 ONNX model's outputs on fixed ids, for the tolerance check.
_OUTPUTS_SCRIPT = """
import sys, numpy as np, onnxruntime as ort
folder, ids_file, out_file = sys.argv[1:4]
ids = np.load(ids_file).astype(np.int64)
session = ort.InferenceSession(folder + "/ort/fp32.onnx", providers=["CPUExecutionProvider"])
hidden, pooled = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                    "token_type_ids": np.zeros_like(ids)})
np.savez(out_file, sequence_output=hidden, pooled_output=pooled)
"""


def find_python(given: str | None) -> str | None:
    """The peer's Python: `given`, else the default bench env; None when there is none."""
    for candidate in (given, os.environ.get("ALBERT_TF_ORT_PYTHON"),
                      str(DEFAULT_ENV / "bin" / "python")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def keras_hub_python(given: str | None) -> str | None:
    """A Python that imports keras_hub: `given`, the bench's keras-hub env, or this one."""
    for candidate in (given, str(KERAS_HUB_ENV / "bin" / "python"), sys.executable):
        if candidate and os.path.isfile(candidate) and not missing_packages(
                candidate, ("keras_hub",)):
            return candidate
    return None


def missing_packages(python: str, packages=PACKAGES) -> list[str]:
    probe = ("import importlib.util, sys; print(' '.join(p for p in sys.argv[1:] "
             "if importlib.util.find_spec(p) is None))")
    done = subprocess.run([python, "-c", probe, *packages], capture_output=True, text=True)
    return done.stdout.split() if done.returncode == 0 else list(packages)


def local_cpu_torch(python: str) -> str | None:
    """A CPU-only torch wheel for `python` in pip's find-links folders, or None. PyPI's Linux
    torch is the CUDA build: about 4 GB of nvidia-* and triton wheels the peer never uses."""
    done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True)
    folders = re.findall(r"find-links='([^']*)'", done.stdout)
    folders += os.environ.get("PIP_FIND_LINKS", "").split()
    tag = "cp{}{}".format(*sys.version_info[:2])
    found = sorted(path for folder in folders for path in glob.glob(
        os.path.join(folder.removeprefix("file://"), f"torch-*+cpu-{tag}-*.whl")))
    return found[-1] if found else None


def make_env(folder: pathlib.Path = DEFAULT_ENV) -> str:
    """A venv with the peer's packages: torch from a local CPU-only wheel when pip's
    find-links hold one (`local_cpu_torch`), installed first so that the rest keep it."""
    venv.EnvBuilder(with_pip=True, clear=False).create(folder)
    python = str(folder / "bin" / "python")
    wheel = local_cpu_torch(python)
    if wheel:
        subprocess.run([python, "-m", "pip", "install", "-q", wheel], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES, "numpy"], check=True)
    return python


def make_keras_hub_env(folder: pathlib.Path = KERAS_HUB_ENV) -> str:
    """A venv over this Python's site-packages (TensorFlow, Keras: peer_serving.py exports
    keras-hub's model with them) that adds keras-hub and what it needs beside them."""
    venv.EnvBuilder(with_pip=True, clear=False, system_site_packages=True).create(folder)
    python = str(folder / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "keras-hub"], check=True)
    return python


def make_models(python: str, peer_script: pathlib.Path, folder: str) -> None:
    """`folder/hf` (the weights ours are exported from) and `folder/ort/{fp32,int8}.onnx`."""
    done = subprocess.run([python, str(peer_script), "make", folder], capture_output=True,
                          text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"peer_onnxruntime.py make failed: {tail[0]}")


def time_kind(python: str, peer_script: pathlib.Path, folder: str, kind: str,
              rounds: int) -> tuple[float, float]:
    """(batch-1 ms, batch-32 ex/s) of one fresh ORT process for `kind` (fp32, int8, fp32_opt
    or int8_opt: the latter two after onnxruntime.transformers' BERT optimizer)."""
    done = subprocess.run([python, str(peer_script), "time", folder, kind, str(rounds)],
                          capture_output=True, text=True)
    match = re.search(r"b1_ms=([\d.]+) b32_eps=([\d.]+)", done.stdout)
    if not match:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"peer_onnxruntime.py time {kind} failed: {tail[0]}")
    return float(match.group(1)), float(match.group(2))


def fp32_outputs(python: str, folder: str, ids_file: str, out_file: str) -> None:
    subprocess.run([python, "-c", _OUTPUTS_SCRIPT, folder, ids_file, out_file], check=True,
                   capture_output=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The serving peers' bench-only Pythons.")
    parser.add_argument("--make_env", action="store_true",
                        help="make .peers/ort_env and .peers/keras_hub_env")
    if not parser.parse_args().make_env:
        sys.exit("usage: python bench/ort_peer.py --make_env")
    print(make_env())
    print(make_keras_hub_env())
