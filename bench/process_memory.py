"""Peak memory of a process tree, sampled from /proc (Linux), for the benchmarks.

`ru_maxrss` cannot tell a child's own peak: a process started by fork+exec reports at least its
parent's resident size at the fork (the kernel carries the high-water mark across exec), so a
worker started by a big driver seems big. Sampling VmRSS and PSS (shared pages split among the
processes that map them) of every process in the tree gives what each one really holds, and the
tree's total.
"""

from __future__ import annotations

import os
import subprocess
import time


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(name))
    return tree


def _field_kb(path: str, field: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_sampled(command, interval_s: float = 0.25, **popen) -> tuple[subprocess.CompletedProcess, dict]:
    """Runs `command` to completion (stdout/stderr captured as text); returns it and the peaks in
    MB: main process RSS, largest other process RSS, and the tree's total PSS."""
    peaks = {"main_rss_mb": 0.0, "largest_child_rss_mb": 0.0, "tree_pss_mb": 0.0}
    with open(os.devnull, "rb") as stdin:
        process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, **popen)
        import threading

        out: dict = {}
        reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"), process.communicate())))
        reader.start()
        while reader.is_alive():
            tree, stack, members = _children(), [process.pid], []
            while stack:
                pid = stack.pop()
                members.append(pid)
                stack.extend(tree.get(pid, []))
            pss = 0
            for pid in members:
                rss = _field_kb(f"/proc/{pid}/status", "VmRSS:") / 1024
                key = "main_rss_mb" if pid == process.pid else "largest_child_rss_mb"
                peaks[key] = max(peaks[key], rss)
                pss += _field_kb(f"/proc/{pid}/smaps_rollup", "Pss:")
            peaks["tree_pss_mb"] = max(peaks["tree_pss_mb"], pss / 1024)
            time.sleep(interval_s)
        reader.join()
    completed = subprocess.CompletedProcess(command, process.returncode, out.get("stdout", ""),
                                            out.get("stderr", ""))
    return completed, {k: round(v, 1) for k, v in peaks.items()}
