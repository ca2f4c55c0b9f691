"""One run per output_dir: the second run stops at once; a killed run leaves no stale lock."""

import os
import signal
import subprocess
import sys
import time

import pytest

from albert_tf.errors import OutputDirLockedError
from albert_tf.tasks.output_lock import LOCK_NAME, OutputDirLock


def test_second_holder_is_refused_naming_the_first(tmp_path):
    with OutputDirLock(tmp_path):
        with pytest.raises(OutputDirLockedError, match=rf"in use by another run \(pid {os.getpid()}"):
            with OutputDirLock(tmp_path):
                pass
    with OutputDirLock(tmp_path):  # released on exit
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    code = ("import sys, time\nfrom albert_tf.tasks.output_lock import OutputDirLock\n"
            "with OutputDirLock(sys.argv[1]):\n    print('locked', flush=True)\n"
            "    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputDirLockedError, match="is in use by another run"):
            with OutputDirLock(tmp_path):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        holder.kill()
    deadline = time.time() + 10
    while True:
        try:
            with OutputDirLock(tmp_path):
                break
        except OutputDirLockedError:
            assert time.time() < deadline
            time.sleep(0.1)
    assert (tmp_path / LOCK_NAME).exists()


def test_disabled_for_non_chief_and_remote_folders(tmp_path):
    with OutputDirLock(tmp_path):
        with OutputDirLock(tmp_path, enabled=False):
            pass
    assert not OutputDirLock("gs://bucket/run").enabled
