"""Work done once per test session and shared by the xdist workers: the first caller makes it
in a folder of the session's temporary root, under a lock; the others wait and read its record."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path


def session_root(tmp_path_factory) -> Path:
    """The temporary root every xdist worker of this session shares (its own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_session(tmp_path_factory, name: str, make) -> tuple:
    """(the record `make(folder)` returned, JSON-able, when the session's first caller ran it;
    the folder `<session root>/<name>` it made)."""
    root = session_root(tmp_path_factory) / name
    record = root.parent / f"{name}.json"
    with open(root.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            if root.exists():
                shutil.rmtree(root)
            root.mkdir()
            record.write_text(json.dumps(make(root)))
    return json.loads(record.read_text()), root
