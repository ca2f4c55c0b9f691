"""One run per output_dir: an exclusive lock file that the OS releases when the process ends."""

from __future__ import annotations

import fcntl
import os
import socket

from albert_tf import io_utils
from albert_tf.errors import OutputDirLockedError

LOCK_NAME = "albert_tf.lock"


class OutputDirLock:
    """`with OutputDirLock(output_dir):` holds an exclusive `flock` on `<output_dir>/albert_tf.lock`.

    A second run on the same folder fails at once with `OutputDirLockedError` naming the holder,
    before it reads or writes anything there. The lock dies with its process (kill -9 included),
    so a crashed run never leaves the folder locked. Non-chief workers and non-local folders
    (gs://) take no lock: only the chief writes checkpoints there.
    """

    def __init__(self, output_dir, enabled: bool = True):
        self.output_dir = os.fspath(output_dir)
        self.enabled = enabled and io_utils.is_local(self.output_dir)
        self.path = os.path.join(self.output_dir, LOCK_NAME)
        self._fd = None

    def __enter__(self):
        if not self.enabled:
            return self
        os.makedirs(self.output_dir, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise OutputDirLockedError(
                f"--output_dir {self.output_dir} is in use by another run ({holder}); wait for "
                f"it to finish or choose another --output_dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc):
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        return False
