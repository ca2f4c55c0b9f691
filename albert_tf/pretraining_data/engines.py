"""Entry point of pretraining-data generation: one engine interface, its three engines, the choice.

An `Engine` turns the options (the script's flags) into records and returns the run summary
(`summary`), also written beside the output and printed. `select_engine` picks one:

- `StreamingEngine` (default): byte blocks of the input made into records by local worker
  processes (`parallel`), memory bounded whatever the corpus;
- `ExactOriginalEngine` (--exact_original): the original script's records, record for record,
  in memory (`exact_original`);
- `BeamEngine` (--beam_runner): the streaming engine's blocks on Apache Beam (`beam_pipeline`;
  Apache Beam is an optional extra, imported only there and only then).

The first two share one frame (`LocalFilesEngine`): this process writes the records round-robin
into --output_file's files, which appear only complete.
"""

from __future__ import annotations

import abc
import contextlib
import os
import signal
import threading
import time
from typing import Protocol

from absl import logging

from albert_tf import io_utils
from albert_tf.pretraining_data import (beam_pipeline, documents, exact_original, parallel,
                                        sentence_tokens, summary, writer)
from albert_tf.pretraining_data.options import PretrainingDataOptions


class Engine(Protocol):
    mode: str  # the summary's "mode"

    def run(self, options: PretrainingDataOptions) -> dict:
        """Checks the options, writes the records and the summary; returns the summary."""


def select_engine(options: PretrainingDataOptions) -> Engine:
    if options.beam_runner:
        return BeamEngine()
    if options.exact_original:
        return ExactOriginalEngine()
    return StreamingEngine()


def run(options: PretrainingDataOptions) -> dict:
    """Generates the records and returns (and writes, and logs) the JSON summary.

    Input that yields no instance is an `InputError` and nothing is written, unless
    `options.allow_empty`. Outputs appear only complete: a failed, interrupted (SIGINT/SIGTERM)
    or killed run leaves none, and a killed run's temporaries are removed by the next run.
    """
    return select_engine(options).run(options)


class LocalFilesEngine(abc.ABC):
    """The frame of the engines whose own process writes the output files: the inputs, the
    outputs (atomic, round-robin), SIGTERM as Ctrl-C, no instance → an error, the summary.
    A subclass says how it makes the records (`write_records`)."""

    mode = ""

    @abc.abstractmethod
    def num_workers(self, options: PretrainingDataOptions) -> int:
        """The summary's "num_workers"."""

    @abc.abstractmethod
    def write_records(self, options, files, encoder, out: writer.RoundRobinWriter,
                      totals: summary.Totals) -> dict:
        """Writes every record into `out`, counting into `totals`; returns the summary's last fields."""

    def run(self, options: PretrainingDataOptions) -> dict:
        start = time.monotonic()
        options.validate()
        files = documents.expand_input_patterns(options.input_file)
        output_files = writer.expand_output_files(options.output_file, options.output_shards)
        path = summary.summary_path(options)
        _remove_stale_temporaries(output_files + [path])
        logging.info("reading %d input file(s): %s%s", len(files), ", ".join(files[:5]),
                     " ..." if len(files) > 5 else "")
        encoder = sentence_tokens.SentenceEncoder(options.make_tokenizer())
        totals = summary.Totals()
        sizes = [io_utils.file_size(f) for f in files]
        with _termination_as_interrupt(), writer.RoundRobinWriter(output_files) as out:
            extra = self.write_records(options, files, encoder, out, totals)
            error = (summary.changed_input_error(files, sizes, totals.counters.input_bytes)
                     or summary.empty_run_error(options, files, totals))
            if error:
                raise error  # inside the writer's block: no output file appears
        result = summary.build_summary(options, self.mode, self.num_workers(options), files,
                                       output_files, totals, time.monotonic() - start)
        result.update(extra)
        writer.write_summary(path, result)
        summary.report_unk(options, files, result)
        return result


class StreamingEngine(LocalFilesEngine):
    mode = "streaming"

    def num_workers(self, options):
        return options.workers()

    def write_records(self, options, files, encoder, out, totals):
        return parallel.write_records(options, files, encoder, out, totals)


class ExactOriginalEngine(LocalFilesEngine):
    mode = "exact_original"

    def num_workers(self, options):
        return 1

    def write_records(self, options, files, encoder, out, totals):
        return exact_original.write_records(options, files, encoder, out, totals)


class BeamEngine:
    mode = "beam"

    def run(self, options: PretrainingDataOptions) -> dict:
        options.validate()
        return beam_pipeline.run(options)


def _remove_stale_temporaries(paths) -> None:
    """Temporaries of killed runs beside our outputs (a killed writer cannot clean up)."""
    for directory in sorted({os.path.dirname(os.path.abspath(p)) for p in paths if io_utils.is_local(p)}):
        for removed in io_utils.remove_stale_temporaries(directory):
            logging.warning("removed %s, left by a run that was killed", removed)


@contextlib.contextmanager
def _termination_as_interrupt():
    """SIGTERM (a scheduler stopping the job, `kill`) ends the run as Ctrl-C does: the workers
    are stopped and the partial outputs removed, instead of the process dying on the spot."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"terminated by signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
