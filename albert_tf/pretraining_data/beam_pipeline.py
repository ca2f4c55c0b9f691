"""--beam_runner: the streaming engine's records made by an Apache Beam pipeline (the driver side).

The pipeline runs the local engine's own `parallel.BlockProcessor` on the same byte blocks
(`corpus_blocks`), so it writes the same multiset of records whatever the runner, the number of
workers or the bundles; only the order of the records and their shard differ. Apache Beam is an
optional extra: this module does not import it; `run` checks that it is installed, then loads
the Beam graph (`beam_transforms`, which imports it).
"""

from __future__ import annotations

import contextlib
import importlib
import logging as python_logging
import re
import time

from absl import logging

from albert_tf import errors
from albert_tf.pretraining_data import corpus_blocks, documents, sentence_tokens, summary, writer

INSTALL = 'pip install -e ".[beam]"'


# Beam's TFRecord writer checksums with one of these ([beam] installs google-crc32c); without
# them it fails at the first record, inside a worker, with its own RuntimeError.
CRC32C_MODULES = ("google_crc32c", "snappy", "crcmod")


def require_beam() -> None:
    try:
        import apache_beam  # noqa: F401 - an optional extra: is it installed?
    except ImportError as error:
        raise errors.UsageError(f"--beam_runner needs Apache Beam, which is not installed ({error}); "
                                f"install it with: {INSTALL}") from None
    for name in CRC32C_MODULES:
        try:
            importlib.import_module(name)
            return
        except ImportError:
            continue
    raise errors.UsageError("--beam_runner: Beam writes TFRecords with google-crc32c, which is not "
                            f"installed; install it with: {INSTALL}")


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
        # beam_transforms imports apache_beam, an optional extra: only now that it is known to be
        # installed, and only for --beam_runner.
        from albert_tf.pretraining_data import beam_transforms

    beam_transforms.pipeline_options(options)  # --beam_runner and its options, before any work
    files, sizes = beam_transforms.match_inputs(options.input_file)
    if options.output_shards:
        output_files = writer.expand_output_files(options.output_file, options.output_shards)
    path = summary.summary_path(options)
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
    totals.counters.files = len(files)
    error = (summary.changed_input_error(files, sizes, totals.counters.input_bytes)
             or summary.empty_run_error(options, files, totals))
    if error:
        beam_transforms.delete(output_files)
        raise error
    result = summary.build_summary(options, "beam", None, files, output_files, totals,
                                   time.monotonic() - start)
    result["beam_runner"] = options.beam_runner
    result.update(totals.block_fields())
    result["beam_counters"] = counters_seen
    writer.write_summary(path, result)
    summary.report_unk(options, files, result)
    return result
