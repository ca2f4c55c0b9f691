"""Where the tests find the repository and the project's shared fixtures and data."""

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


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
