"""Installed commands: `[project.scripts]` names a `run()` per top-level script, and after a
`pip install` (outside the clone) each command takes the same flags as its script."""

import importlib
import os
import shutil
import subprocess
import sys

import pytest

from support.flags import script_flag_defaults
from support.paths import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

SCRIPTS = {"albert-create-pretraining-data": "create_pretraining_data.py",
           "albert-run-pretraining": "run_pretraining.py",
           "albert-run-classifier": "run_classifier.py",
           "albert-run-squad": "run_squad.py",
           "albert-run-race": "run_race.py",
           "albert-run-ner": "run_ner.py",
           "albert-export-saved-model": "export_saved_model.py",
           "albert-export-checkpoints": "export_checkpoints.py",
           "albert-run-embeddings": "run_embeddings.py"}


def _scripts_table():
    if tomllib is None:
        pytest.skip("reading pyproject.toml needs Python 3.11 (tomllib)")
    return tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]


def test_every_script_is_a_command_with_an_importable_entry():
    table = _scripts_table()
    assert set(table) == set(SCRIPTS) | {"albert-convert"}
    for command, target in table.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), command
        if command in SCRIPTS:  # the script in a clone calls the same function
            script = (REPO / SCRIPTS[command]).read_text("utf-8")
            assert f"from {module.rsplit('.', 1)[0]} import {module.rsplit('.', 1)[1]}" in script


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`pip install` of a copy of the project (the package, not the clone's scripts) into a
    folder of its own; returns (its bin folder, an environment that uses it)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "albert_tf", source / "albert_tf",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    env = dict(os.environ, PYTHONPATH=str(target), TF_CPP_MIN_LOG_LEVEL="3")
    return target / "bin", env


def _command(installed, command, *args, cwd):
    bin_dir, env = installed
    return subprocess.run([sys.executable, str(bin_dir / command), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _flags(helpshort: str) -> set:
    return {line.strip().split(":")[0].lstrip("-").replace("[no]", "")
            for line in helpshort.splitlines() if line.startswith("  --")}


@pytest.mark.parametrize("command", ["albert-run-classifier", "albert-export-saved-model"])
def test_installed_command_takes_the_scripts_flags(installed, command, tmp_path):
    done = _command(installed, command, "--helpshort", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    script = set(script_flag_defaults(SCRIPTS[command]))
    assert _flags(done.stdout) == script and len(script) > 10
    assert "albert_tf" in done.stdout or "ALBERT" in done.stdout  # the program's own help text


def test_installed_command_reports_a_missing_flag_in_one_line(installed, tmp_path):
    done = _command(installed, "albert-run-classifier", "--task_name=MRPC", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: missing required flags: --data_dir, --output_dir"


def test_installed_convert_command(installed, tmp_path):
    done = _command(installed, "albert-convert", "--input=/nonexistent", "--output=x",
                    "--output_format=tf1", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "/nonexistent" in lines[0]
