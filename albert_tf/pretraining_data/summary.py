"""The run summary: what every engine counts (`Totals`), Beam's counters, and the JSON summary
written beside the output (`<first output file>.summary.json`, or --summary_file) and printed.

The keys and their order are the same for every engine; each engine appends its own last fields
(the streaming and Beam engines: blocks and the workers' peak memory; Beam: the runner and its
counters).
"""

from __future__ import annotations

import collections
import itertools
import sys

from absl import logging

from albert_tf import io_utils
from albert_tf.pretraining_data import documents, stats
from albert_tf.tokenization import load_vocab, unk

# Beam's counters (the summary's "beam_counters"), in the summary's order.
BEAM_COUNTERS = ("blocks", "documents", "instances", "input_bytes", "lines", "undecodable_lines",
                 "skipped_lines", "overlong_lines")


def peak_rss_mb() -> float:
    try:
        import resource
    except ImportError:  # Windows
        return float("nan")
    scale = 1 / 1024 ** 2 if sys.platform == "darwin" else 1 / 1024  # bytes on macOS, else KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def count_document(sentences: list, doc_counts: dict, unk_codes=()) -> None:
    """One tokenized document (its non-empty sentences) in the document counts; `unk_codes`:
    the codes of the unknown piece (`SentenceEncoder.unk_codes`), counted as unk_tokens."""
    if not sentences:
        doc_counts["empty_after_tokenization"] += 1
        return
    doc_counts["documents"] += 1
    doc_counts["sentences"] += len(sentences)
    doc_counts["corpus_tokens"] += sum(len(s) for s in sentences)
    for code in unk_codes:
        doc_counts["unk_tokens"] += sum(s.count(code) for s in sentences)
    if len(sentences) == 1:
        doc_counts["single_sentence_documents"] += 1


class Totals:
    """What the summary needs from the whole run (mergeable, picklable: Beam's workers send
    theirs to the driver)."""

    def __init__(self):
        self.blocks = 0
        self.counters = documents.InputCounters()
        self.doc_counts: collections.Counter = collections.Counter()
        self.record_stats = stats.RecordStatistics()
        self.ngram_lengths: collections.Counter = collections.Counter()
        self.peak_rss_mb = 0.0  # of the processes that made the blocks

    def merge(self, other: "Totals") -> "Totals":
        return self._add(other.blocks, other)

    def add_block(self, result) -> "Totals":
        """One block's `parallel.BlockResult` (it has the same fields, but for `blocks`)."""
        return self._add(1, result)

    def _add(self, blocks: int, part) -> "Totals":
        self.blocks += blocks
        self.counters.add(part.counters)
        self.doc_counts.update(part.doc_counts)
        self.record_stats.merge(part.record_stats)
        self.ngram_lengths.update(part.ngram_lengths)
        self.peak_rss_mb = max(self.peak_rss_mb, part.peak_rss_mb)
        return self

    def block_fields(self) -> dict:
        """The last fields of the block engines' summaries."""
        return {"blocks": self.blocks, "peak_rss_mb_worker": round(self.peak_rss_mb, 1)}


def beam_counter_increments(result, input_file_mode: str) -> dict:
    """What one block (a `parallel.BlockResult`) adds to each of Beam's counters."""
    counters = result.counters
    skipped = 0 if input_file_mode == "rb" else counters.undecodable_lines
    return {"blocks": 1, "documents": result.doc_counts["documents"],
            "instances": len(result.records), "input_bytes": counters.input_bytes,
            "lines": counters.lines, "undecodable_lines": counters.undecodable_lines,
            "skipped_lines": skipped, "overlong_lines": counters.overlong_lines}


def summary_path(options) -> str:
    if options.summary_file:
        return options.summary_file
    return options.output_file.split(",")[0] + ".summary.json"


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


def changed_input_error(files, sizes, read: int) -> documents.InputError | None:
    """An input that shrank (or grew) while it was read: its records would silently miss (or
    mis-place) text, so nothing is published."""
    if read == sum(sizes):
        return None
    changed = [(path, before, io_utils.file_size(path)) for path, before in zip(files, sizes)]
    changed = [c for c in changed if c[1] != c[2]] or [(", ".join(files[:3]), sum(sizes), None)]
    named = "; ".join(f"{path}: {before} bytes at the start" + (f", {now} now" if now is not None
                                                                  else "")
                      for path, before, now in changed)
    return documents.InputError(
        f"the input changed while it was read ({read} of {sum(sizes)} bytes read; {named}); "
        "nothing was written: run again on input that no other program is writing")


def empty_run_error(options, files, totals: Totals) -> documents.InputError | None:
    """The error of a run that made no instance (None with --allow_empty, which logs why)."""
    if totals.record_stats.instances:
        return None
    if not options.allow_empty:
        return documents.InputError(no_instances_message(options, files, totals.counters,
                                                         totals.doc_counts))
    logging.warning("no instances: %s", why_empty(totals.counters, totals.doc_counts))
    return None


def build_summary(options, mode: str, num_workers: int | None, files, output_files,
                  totals: Totals, elapsed: float) -> dict:
    counters, doc_counts, record_stats = totals.counters, totals.doc_counts, totals.record_stats
    ngram_lengths = totals.ngram_lengths
    summary = {
        "mode": mode,
        "num_workers": num_workers,
        "input_files": len(files),
        "output_files": output_files,
        "documents": doc_counts["documents"],
        "sentences": doc_counts["sentences"],
        "corpus_tokens": doc_counts["corpus_tokens"],
        "unk_tokens": doc_counts["unk_tokens"],
        "unk_rate": round(doc_counts["unk_tokens"] / max(doc_counts["corpus_tokens"], 1), 5),
        "do_lower_case": bool(options.do_lower_case),
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
        "peak_rss_mb_main": round(peak_rss_mb(), 1),
    }
    summary.update(record_stats.as_dict())
    return summary


def report_unk(options, files, summary: dict) -> None:
    """The run's [UNK] rate in one log line; above 5 % a warning, naming the casing flag when
    the casing is the cause (checked on the first lines of the first local input file)."""
    cause = None
    if summary["unk_rate"] > unk.WARN_RATE and options.vocab_file and not options.spm_model_file \
            and io_utils.is_local(files[0]):
        with open(files[0], encoding="utf-8", errors="ignore") as f:
            sample = [line for line in itertools.islice(f, 5000) if line.strip()]
        cause = unk.casing_cause(sample, load_vocab(options.vocab_file), options.do_lower_case)
    unk.report(summary["unk_tokens"], summary["corpus_tokens"],
               f"--input_file (do_lower_case={str(bool(options.do_lower_case)).lower()})", cause)
