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
        # The writer may be finishing after the reader's EOF: a blocking open here would then
        # wait forever for a writer that is gone (it hung the suite under load).
        thread.join(timeout=1)
        if thread.is_alive():  # never opened: a non-blocking read end lets its open return
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                thread.join(timeout=10)
            finally:
                os.close(reader)
