"""Checks an export the way a server would see it: load it in a fresh process, call signatures.

`verify_in_fresh_process(export_dir, calls)` runs `python -m albert_tf.serving.verify` on
{signature: {input name: array}} and returns {signature: {output name: array}}; nothing from
the exporting process (Python objects, traced functions, the .model file) can leak in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from albert_tf.errors import AlbertError


class VerificationError(AlbertError, AssertionError):
    """An export that does not load in a fresh process, or answers unlike the Keras model."""


def _save(calls: dict, path: str) -> None:
    flat = {}
    for signature, inputs in calls.items():
        for name, value in inputs.items():
            value = np.asarray(value)
            if value.dtype == object:  # bytes (serialized Examples): .npz would need pickle,
                # and a fixed-width bytes array drops trailing NULs; store bytes + lengths
                items = [bytes(v) for v in value.ravel()]
                flat[f"{signature}::{name}::bytes"] = np.frombuffer(b"".join(items), np.uint8)
                flat[f"{signature}::{name}::lengths"] = np.array([len(v) for v in items])
                continue
            flat[f"{signature}::{name}"] = value
    np.savez(path, **flat)


def _load(path: str) -> dict:
    result: dict = {}
    with np.load(path, allow_pickle=False) as data:
        for key in data.files:
            signature, name, *kind = key.split("::")
            if kind == ["lengths"]:
                continue
            value = data[key]
            if kind == ["bytes"]:
                ends = np.cumsum(data[f"{signature}::{name}::lengths"])
                raw = value.tobytes()
                value = np.array([raw[e - n:e] for e, n in zip(
                    ends, data[f"{signature}::{name}::lengths"])], dtype=object)
            result.setdefault(signature, {})[name] = value
    return result


def verify_in_fresh_process(export_dir, calls: dict, timeout: int = 600) -> dict:
    return verify_all_in_fresh_process([(export_dir, calls)], timeout)[0]


def verify_all_in_fresh_process(exports, timeout: int = 600) -> list:
    """`verify_in_fresh_process` of several (export_dir, calls) in one fresh process: one
    TensorFlow start-up for all the SavedModels of one export command."""
    # The check runs in its own folder: a relative path would point somewhere else there.
    exports = [(os.path.abspath(os.fspath(path)), calls) for path, calls in exports]
    with tempfile.TemporaryDirectory() as tmp:
        argv = []
        for index, (export_dir, calls) in enumerate(exports):
            inputs = os.path.join(tmp, f"inputs{index}.npz")
            _save(calls, inputs)
            argv += [export_dir, inputs, os.path.join(tmp, f"outputs{index}.npz")]
        # The fresh process imports this same albert_tf (not another install of it).
        # (the folder holding albert_tf/: three levels above albert_tf/serving/verify.py)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path)
        proc = run_check_process(argv, timeout=timeout, env=env, cwd=tmp)
        if proc.returncode != 0:
            lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
            failed = next((line.split(_FAILED, 1)[0] for line in reversed(lines)
                           if _FAILED in line), ", ".join(path for path, _ in exports))
            raise VerificationError(f"loading {failed} in a fresh process failed "
                                    f"({lines[-1] if lines else f'exit {proc.returncode}'})")
        return [_load(argv[i + 2]) for i in range(0, len(argv), 3)]


def run_check_process(argv, timeout: int, env: dict, cwd: str) -> subprocess.CompletedProcess:
    """`python -m albert_tf.serving.verify ARGV` in a new process. (The test suite swaps this
    for one long-lived process per test worker that never builds a model: every check there
    would otherwise pay TensorFlow's start-up again.)"""
    return subprocess.run([sys.executable, "-m", "albert_tf.serving.verify", *argv],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)


def compare(expected: dict, actual: dict, atol: float = 1e-5) -> dict:
    """Max abs difference per signature/output; raises when one exceeds `atol`."""
    report = {}
    for signature, outputs in expected.items():
        for name, value in outputs.items():
            got = actual[signature][name]
            if np.asarray(value).dtype.kind in "iub":
                diff = float(np.max(np.asarray(got) != np.asarray(value))) if np.size(value) else 0.0
            else:
                diff = float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(value, np.float64))))
            report[f"{signature}/{name}"] = diff
            if not diff <= atol:
                raise VerificationError(f"{signature}/{name}: export differs from the Keras model by "
                                        f"{diff:g} (more than {atol:g})")
    return report


def _numpy(tensor) -> np.ndarray:
    """A tensor's value; strings (a classifier's `labels`) as a unicode array, which .npz
    holds without pickling."""
    value = tensor.numpy()
    if value.dtype == object:
        decoded = [x.decode("utf-8") for x in value.ravel()]
        return np.array(decoded, dtype=str).reshape(value.shape)
    return value


_FAILED = ": cannot be served: "


def _serve(tf, export_dir: str, inputs_path: str, outputs_path: str) -> dict:
    loaded = tf.saved_model.load(export_dir)
    results = {}
    for signature, inputs in _load(inputs_path).items():
        fn = loaded.signatures[signature]
        tensors = {k: tf.constant(v) for k, v in inputs.items()}
        results[signature] = {k: _numpy(v) for k, v in fn(**tensors).items()}
    _save(results, outputs_path)
    return {s: sorted(o) for s, o in results.items()}


def _main(argv) -> None:
    """argv: (export_dir, inputs.npz, outputs.npz) for each export."""
    import tensorflow as tf
    try:  # optional: registers the SentencePiece op of raw-text signatures
        import tensorflow_text  # noqa: F401
    except ImportError:  # an export made without tensorflow-text has no raw-text signatures
        pass

    for i in range(0, len(argv), 3):
        try:
            print(json.dumps(_serve(tf, *argv[i:i + 3])))
        except Exception as error:  # noqa: BLE001 - named with its export, then the traceback
            print(f"{argv[i]}{_FAILED}{type(error).__name__}", file=sys.stderr)
            raise


if __name__ == "__main__":
    _main(sys.argv[1:])
