"""Shared test set-up: quiet TensorFlow, paths to ../shared, skips when it is absent."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def _find_shared() -> pathlib.Path:
    """$ALBERT_TF_SHARED, else the nearest `shared` folder beside the repository or above it."""
    if os.environ.get("ALBERT_TF_SHARED"):
        return pathlib.Path(os.environ["ALBERT_TF_SHARED"])
    for parent in REPO.parents:
        if (parent / "shared" / "fixtures").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


SHARED = _find_shared()
FIXTURES = SHARED / "fixtures" / "original"
DATA = SHARED / "data"


def _require(path):
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    return path


@pytest.fixture(scope="session")
def fixtures_dir():
    return _require(FIXTURES)


@pytest.fixture(scope="session")
def data_dir():
    return _require(DATA)


@pytest.fixture(scope="session")
def spm_model(fixtures_dir):
    return str(fixtures_dir / "spm" / "spm.model")
