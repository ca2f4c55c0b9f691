"""The demo's console: a header per stage, progress with an ETA (a bar on a terminal, a line
every tenth otherwise), one closing line per stage, and warnings; everything the library logs
at INFO goes to `<output_dir>/demo.log` instead, so the console stays a page long.

Progress comes from the library's own log records (the trainer's `step N/T ... eta=` lines,
create_pretraining_data's `progress: x% ... ETA` lines); a stage part without such records (an
export, a fresh process) gets a heartbeat with its elapsed time and expected length.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading
import time

from absl import logging as absl_logging

_STEP = re.compile(r"^step (\d+)/(\d+) .*eta=(\d+):(\d\d):(\d\d)$")
_SHARE = re.compile(r"^progress.*?: ([\d.]+)% of input.* ETA (\d+)s$")
HEARTBEAT_S = 15.0
BAR = 30


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Console:
    """Writes to `stream` (stdout); `total`: the number of stages, for the headers."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stdout
        self.total = total
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._part = None  # (what, started, expected seconds) of the part running now
        self._progressed = False  # the running part has reported progress
        self._after = (None, None)  # what the running part does after its progress
        self._shown = -1  # the last tenth printed (non-terminal progress)
        self._open_line = False  # a terminal bar is on the current line
        self._last_output = time.monotonic()

    # ------------------------------------------------------------------ lines
    def line(self, text: str = "") -> None:
        with self._lock:
            self._end_bar()
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last_output = time.monotonic()

    def end_bar(self) -> None:
        """Ends a terminal's progress bar line, so another writer starts on a fresh line."""
        with self._lock:
            self._end_bar()
            self.stream.flush()

    def _end_bar(self) -> None:
        if self._open_line:
            self.stream.write("\n")
            self._open_line = False

    def header(self, number: int, name: str, what: str) -> None:
        self.line(f"[{number}/{self.total}] {name}: {what}")

    def note(self, text: str) -> None:
        self.line(f"      {text}")

    # --------------------------------------------------------------- progress
    def progress(self, fraction: float, eta_s: float, label: str) -> None:
        """`fraction` done of the running part, `eta_s` seconds left (as the library estimates
        them); `label`: what is counted ("step 80/800")."""
        fraction = min(max(fraction, 0.0), 1.0)
        self._progressed = True
        self._show_progress(fraction, eta_s, label)
        after, after_s = self._after
        if fraction >= 1.0 and after and self._part is not None:
            # The progress is complete, the part goes on: heartbeats again from here.
            self._after = (None, None)
            self.note(after)
            self._part = (after, time.monotonic(), after_s)
            self._progressed = False

    def _show_progress(self, fraction: float, eta_s: float, label: str) -> None:
        if self.tty:
            filled = int(BAR * fraction)
            with self._lock:
                self.stream.write(f"\r      [{'#' * filled}{'.' * (BAR - filled)}] {label}  "
                                  f"ETA {_clock(eta_s)}  ")
                self.stream.flush()
                self._open_line = True
                self._last_output = time.monotonic()
            return
        tenth = int(fraction * 10)
        if tenth > self._shown:
            self._shown = tenth
            self.note(f"{100 * fraction:3.0f} %  {label}  ETA {_clock(eta_s)}")

    @contextlib.contextmanager
    def part(self, what: str, expected_s: float | None = None, after: str | None = None,
             after_s: float | None = None, stderr: bool = False):
        """A part of a stage (a note line): its progress starts afresh, and while it reports
        none a heartbeat shows its elapsed time (each second on a terminal, else every 15 s),
        with the time left when `expected_s` (a rough length) is given. `after`: what the part
        does once its progress is complete (a note line; `after_s` its rough length).
        `stderr`: what Python code prints on stderr (train_spm's lines) is indented too."""
        self.note(what)
        self._shown, self._progressed = -1, False
        self._after = (after, after_s)
        self._part = (what, time.monotonic(), expected_s)
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(stop,), daemon=True)
        beat.start()
        try:
            # What the library prints (create_pretraining_data's gist, train_spm's lines) is
            # indented under the part like the rest.
            with contextlib.redirect_stdout(_Lines(self.note)), \
                    contextlib.redirect_stderr(_Lines(self.note) if stderr else sys.stderr):
                yield
        finally:
            stop.set()
            beat.join()
            self._part = None
            with self._lock:
                self._end_bar()

    def _heartbeat(self, stop: threading.Event) -> None:
        while not stop.wait(1.0):
            part = self._part
            if part is None or self._progressed:
                continue
            what, started, expected = part
            now = time.monotonic()
            elapsed = now - started
            # Lines: after 15 s of quiet, then at 30 s, 1, 2, 4 minutes... (a slow, shared
            # machine gets a few more lines, not one every 15 s).
            quiet = now - self._last_output
            if not self.tty and (quiet < HEARTBEAT_S or quiet < elapsed / 2):
                continue
            left = f", about {_clock(expected - elapsed)} left" if expected and \
                elapsed < expected else ""
            if self.tty:
                with self._lock:
                    self.stream.write(f"\r      {_clock(elapsed)} elapsed{left}   ")
                    self.stream.flush()
                    self._open_line = True
            else:
                self.note(f"... {_clock(elapsed)} elapsed{left}")

    # ------------------------------------------------------------ log records
    def on_record(self, record: logging.LogRecord) -> None:
        """A progress record (the trainer's steps, create_pretraining_data's share of the input)
        as progress; any other record is not the console's (demo.log has it)."""
        message = record.getMessage()
        step = _STEP.match(message)
        if step:
            done, total, h, m, s = (int(g) for g in step.groups())
            self.progress(done / max(total, 1), h * 3600 + m * 60 + s, f"step {done}/{total}")
            return
        share = _SHARE.match(message)
        if share:
            self.progress(float(share.group(1)) / 100, float(share.group(2)), "of the input")


class _Lines:
    """A text stream that hands each complete line to `emit`."""

    def __init__(self, emit):
        self.emit, self.pending = emit, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.emit(line)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _ConsoleFilter:
    """On absl's console handler: warnings and errors only, each on a line of its own (a
    terminal's progress bar is ended first)."""

    def __init__(self, console: Console):
        self.console = console

    def filter(self, record) -> bool:
        if record.levelno < logging.WARNING:
            return False
        self.console.end_bar()
        return True


class _ProgressHandler(logging.Handler):
    """Progress records to the console's progress display."""

    def __init__(self, console: Console):
        super().__init__(logging.INFO)
        self.console = console

    def emit(self, record) -> None:
        if record.levelno < logging.WARNING:
            self.console.on_record(record)


@contextlib.contextmanager
def demo_logging(console: Console, log_path: str):
    """While inside: absl's console handler shows warnings and errors only, progress records
    drive the console's progress display, and every INFO record goes to `log_path`."""
    handler = absl_logging.get_absl_handler()
    console_filter = _ConsoleFilter(console)
    handler.addFilter(console_filter)
    to_file = logging.FileHandler(log_path, encoding="utf-8")
    to_file.setLevel(logging.INFO)
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(module)s: %(message)s"))
    progress = _ProgressHandler(console)
    root = logging.getLogger()  # absl's records reach it (absl's own handler sits there too)
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    if absl_logger.getEffectiveLevel() > logging.INFO:  # a library call: absl's flags unparsed
        absl_logger.setLevel(logging.INFO)
    root.addHandler(to_file)
    root.addHandler(progress)
    try:
        yield
    finally:
        root.removeHandler(progress)
        root.removeHandler(to_file)
        to_file.close()
        absl_logger.setLevel(level)
        handler.removeFilter(console_filter)
