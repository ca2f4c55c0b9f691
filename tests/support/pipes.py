"""A named pipe holding given bytes, as the shell's `<(zcat …)` gives one (/dev/fd/N)."""

import contextlib
import os
import threading


@contextlib.contextmanager
def fifo_with(path, data: bytes):
    """Yields the path of a FIFO that a thread fills with `data` once a reader opens it."""
    os.mkfifo(path)

    def fill():
        with open(path, "wb") as writer:  # blocks until the reader opens the pipe
            writer.write(data)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    try:
        yield str(path)
    finally:
        if thread.is_alive():  # never opened: open it so the writer ends
            with open(path, "rb") as reader:
                reader.read()
        thread.join(timeout=10)
