"""--beam_runner: the streaming engine's records made by an Apache Beam pipeline.

The pipeline runs the local engine's own `parallel.BlockProcessor` on the same byte blocks
(`corpus_blocks`), so it writes the same multiset of records whatever the runner, the number of
workers or the bundles; only the order of the records and their shard differ. Apache Beam is an
optional extra: it is imported here, only when asked for (`beam_transforms` needs it).
"""

from __future__ import annotations

import contextlib
import re
import time

from absl import logging

from albert_tf import errors
from albert_tf.data import corpus_blocks, documents, pretraining_data, pretraining_writer, sentence_tokens

INSTALL = 'pip install -e ".[beam]"'


def require_beam() -> None:
    try:
        import apache_beam  # noqa: F401
    except ImportError as error:
        raise errors.UsageError(f"--beam_runner needs Apache Beam, which is not installed ({error}); "
                                f"install it with: {INSTALL}") from None


# An error of ours raised in a worker comes back inside the runner's own error, as text.
_OUR_ERROR = re.compile(r"\b(?:albert_tf\.[\w.]+\.)?(InputError|OutputError): ([^\n]+)")
_BEAM_SUFFIX = re.compile(r"""(?: \[while running '[^']*'\])+['"]?$""")


def _our_error(error: Exception) -> Exception | None:
    if isinstance(error, errors.AlbertError):  # re-raised in the driver, with Beam's step appended
        return type(error)(_BEAM_SUFFIX.sub("", str(error)))
    match = _OUR_ERROR.search(str(error))
    if not match:
        return None
    kind = documents.InputError if match.group(1) == "InputError" else errors.OutputError
    message = _BEAM_SUFFIX.sub("", match.group(2).strip())
    return kind(message)


@contextlib.contextmanager
def _quiet_import():
    """Beam's import warns about optional cloud clients (some to the root logger), and Beam
    relays each worker's log at INFO: our progress lines come from the workers directly, and our
    errors as one line. --verbosity=1 shows it all."""
    if logging.get_verbosity() >= logging.DEBUG:
        yield
        return
    import logging as python_logging

    python_logging.getLogger("apache_beam").setLevel(python_logging.ERROR)
    python_logging.disable(python_logging.WARNING)
    try:
        yield
    finally:
        python_logging.disable(python_logging.NOTSET)


def run(options) -> dict:
    """Runs the pipeline, then writes (and returns) the local engine's summary."""
    start = time.monotonic()
    with _quiet_import():
        require_beam()
        from albert_tf.data import beam_transforms

    files, sizes = beam_transforms.match_inputs(options.input_file)
    if options.output_shards:
        output_files = pretraining_writer.expand_output_files(options.output_file, options.output_shards)
    path = pretraining_data.summary_path(options)
    # The driver loads the tokenizer once, so a missing or bad model fails here, at once.
    sentence_tokens.SentenceEncoder(options.make_tokenizer())
    corpus = corpus_blocks.layout(files, sizes, options.block_bytes)
    logging.info("Beam %s: %d input file(s), %.1f MB in %d blocks", options.beam_runner, len(files),
                 corpus.total_bytes / 1e6, corpus.num_blocks)
    try:
        totals, counters_seen = beam_transforms.run_pipeline(options, corpus, path + ".beam-stats")
    except Exception as error:  # noqa: BLE001 - the runner wraps worker errors in its own types
        ours = _our_error(error)
        if ours is None:
            raise
        raise ours from None
    if not options.output_shards:  # as many as the runner made
        output_files = beam_transforms.written_shards(options.output_file)
    counters, doc_counts = totals.counters, totals.doc_counts
    counters.files = len(files)
    if totals.record_stats.instances == 0:
        if not options.allow_empty:
            beam_transforms.delete(output_files)
            raise documents.InputError(pretraining_data.no_instances_message(
                options, files, counters, doc_counts))
        logging.warning("no instances: %s", pretraining_data.why_empty(counters, doc_counts))
    summary = pretraining_data.build_summary(
        options, files, output_files, counters, doc_counts, totals.record_stats,
        totals.ngram_lengths, time.monotonic() - start)
    summary.update({"mode": "beam", "beam_runner": options.beam_runner, "num_workers": None,
                    "blocks": totals.blocks, "peak_rss_mb_worker": round(totals.peak_rss_mb, 1),
                    "beam_counters": counters_seen})
    pretraining_data.write_summary(path, summary)
    return summary
