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


# A tiny encoder every model test can build in milliseconds: E ≠ H (so the E→H projection
# exists), 2 layers sharing one group, 2 heads. vocab_size 100 covers the ids the model tests
# draw (< 100); dropout is 0 (the config default), so inference and training differ only by the
# heads' own dropout.
TINY_CONFIG = dict(vocab_size=100, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)


@pytest.fixture()
def tiny_config():
    from albert_tf.config import AlbertConfig

    return AlbertConfig(**TINY_CONFIG)


@pytest.fixture()
def tiny_batch():
    """Two rows of 12 tokens (the second padded after 9), with what every head reads besides
    the encoder inputs: `masked_lm_positions` (pretrainer) and `p_mask` (SQuAD v2)."""
    import numpy as np

    batch, length = 2, 12
    rng = np.random.default_rng(0)
    mask = np.ones((batch, length), "int32")
    mask[1, 9:] = 0
    p_mask = np.zeros((batch, length), "int32")
    p_mask[:, 1:4] = 1
    p_mask[1, 9:] = 1
    return {"input_ids": rng.integers(5, TINY_CONFIG["vocab_size"], (batch, length)).astype("int32"),
            "input_mask": mask,
            "segment_ids": (np.arange(length) >= 6).astype("int32")[None].repeat(batch, 0),
            "masked_lm_positions": np.array([[1, 2, 0], [3, 7, 0]], "int32"),
            "p_mask": p_mask}
