"""Entry point of pretraining-data generation: checks, mode dispatch, atomic outputs, summary."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import threading
import time

from absl import logging

from albert_tf import io_utils
from albert_tf.data import documents, exact_original, parallel, pretraining_writer, sentence_tokens, stats
from albert_tf.errors import InputError
from albert_tf.data.pretraining_options import PretrainingDataOptions


def summary_path(options: PretrainingDataOptions) -> str:
    if options.summary_file:
        return options.summary_file
    return options.output_file.split(",")[0] + ".summary.json"


def run(options: PretrainingDataOptions) -> dict:
    """Generates the records and returns (and writes, and logs) the JSON summary.

    Input that yields no instance is an `InputError` and nothing is written, unless
    `options.allow_empty`. Outputs appear only complete: a failed, interrupted (SIGINT/SIGTERM)
    or killed run leaves none, and a killed run's temporaries are removed by the next run.
    """
    start = time.monotonic()
    options.validate()
    if options.beam_runner:
        from albert_tf.data import beam_pipeline

        return beam_pipeline.run(options)
    files = documents.expand_input_patterns(options.input_file)
    output_files = pretraining_writer.expand_output_files(options.output_file, options.output_shards)
    path = summary_path(options)
    _remove_stale_temporaries(output_files + [path])
    logging.info("reading %d input file(s): %s%s", len(files), ", ".join(files[:5]),
                 " ..." if len(files) > 5 else "")
    encoder = sentence_tokens.SentenceEncoder(options.make_tokenizer())
    counters = documents.InputCounters()
    doc_counts: collections.Counter = collections.Counter()
    record_stats = stats.RecordStatistics()
    ngram_lengths: collections.Counter = collections.Counter()
    mode = exact_original if options.exact_original else parallel
    with _termination_as_interrupt(), pretraining_writer.RoundRobinWriter(output_files) as writer:
        extra = mode.run(options, files, encoder, writer, counters, doc_counts, record_stats,
                         ngram_lengths)
        if record_stats.instances == 0:
            if not options.allow_empty:
                raise InputError(no_instances_message(options, files, counters, doc_counts))
            logging.warning("no instances: %s", why_empty(counters, doc_counts))
    elapsed = time.monotonic() - start
    summary = build_summary(options, files, output_files, counters, doc_counts, record_stats,
                            ngram_lengths, elapsed)
    summary.update(extra)
    write_summary(path, summary)
    return summary


def write_summary(path: str, summary: dict) -> None:
    pretraining_writer.write_json_atomic(path, summary)
    print(json.dumps(summary, indent=1), flush=True)
    logging.info("wrote %d instances to %d file(s) in %.1fs; summary: %s", summary["instances"],
                 len(summary["output_files"]), summary["elapsed_s"], path)


def _remove_stale_temporaries(paths) -> None:
    """Temporaries of killed runs beside our outputs (a killed writer cannot clean up)."""
    for directory in sorted({os.path.dirname(os.path.abspath(p)) for p in paths if "://" not in p}):
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


def why_empty(counters: documents.InputCounters, doc_counts) -> str:
    if counters.input_bytes == 0:
        return "the input is empty"
    if counters.lines and counters.undecodable_lines == counters.lines:
        return f"all {counters.lines} lines are undecodable UTF-8 (skipped; see --undecodable_lines)"
    if doc_counts["documents"] == 0:
        return f"none of its {counters.lines} lines holds text (after preprocessing and tokenization)"
    return (f"its {doc_counts['documents']} document(s) ({doc_counts['corpus_tokens']} tokens) are "
            "too short to make an instance")


def no_instances_message(options, files, counters, doc_counts) -> str:
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"no pretraining instances from --input_file={options.input_file} ({shown}): "
            f"{why_empty(counters, doc_counts)}; nothing was written (--allow_empty writes empty "
            "files instead)")


def build_summary(options, files, output_files, counters, doc_counts, record_stats, ngram_lengths,
                  elapsed) -> dict:
    summary = {
        "mode": "exact_original" if options.exact_original else "streaming",
        "num_workers": 1 if options.exact_original else options.workers(),
        "input_files": len(files),
        "output_files": output_files,
        "documents": doc_counts["documents"],
        "sentences": doc_counts["sentences"],
        "corpus_tokens": doc_counts["corpus_tokens"],
        "single_sentence_documents": doc_counts["single_sentence_documents"],
        "empty_documents": counters.empty_documents + doc_counts["empty_after_tokenization"],
        "undecodable_lines": counters.undecodable_lines,
        "undecodable_policy": "ignore_bytes" if options.input_file_mode == "rb" else options.undecodable_lines,
        "overlong_lines": counters.overlong_lines,
        "split_documents": counters.split_documents,
        "input_lines": counters.lines,
        "input_bytes": counters.input_bytes,
        "ngram_length_histogram": {str(k): ngram_lengths[k] for k in sorted(ngram_lengths)},
        "elapsed_s": round(elapsed, 3),
        "instances_per_s": round(record_stats.instances / elapsed, 1) if elapsed > 0 else None,
        "documents_per_s": round(doc_counts["documents"] / elapsed, 1) if elapsed > 0 else None,
        "input_mb_per_s": round(counters.input_bytes / 1e6 / elapsed, 3) if elapsed > 0 else None,
        "peak_rss_mb_main": round(parallel.peak_rss_mb(), 1),
    }
    summary.update(record_stats.as_dict())
    return summary
