"""The Beam graph of --beam_runner (imports apache_beam: only `beam_pipeline.run` loads it).

    block indices → Reshuffle → MakeRecords (reads the block's whole documents, makes and
    masks their instances: `parallel.BlockProcessor`) → WriteToTFRecord(--output_shards)
                                └→ per-block statistics → CombineGlobally → one side file

The side file carries the merged statistics back to the driver, which writes the summary; so
nothing but block indices and records goes through the runner's shuffle.
"""

from __future__ import annotations

import base64
import difflib
import os
import pickle
import shlex

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import Metrics, MetricsFilter
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.runners.runner import create_runner

from albert_tf import io_utils
from albert_tf.errors import UsageError
from albert_tf.pretraining_data import documents, parallel, sentence_tokens, summary
from albert_tf.pretraining_data.summary import Totals

NAMESPACE = "create_pretraining_data"


def open_input(path: str):
    """Any file Beam can read (gs://, s3://, hdfs://, ...); local files directly."""
    if io_utils.is_local(path):
        return open(path, "rb")
    from apache_beam.io.filesystem import CompressionTypes

    return FileSystems.open(path, mime_type="application/octet-stream",
                            compression_type=CompressionTypes.UNCOMPRESSED)


def match_inputs(spec: str) -> tuple[list[str], list[int]]:
    """--input_file's comma-separated globs → (files, sizes), as the local engine expands them."""
    files, sizes = [], []
    for pattern in spec.split(","):
        if not pattern:
            continue
        if io_utils.is_local(pattern):
            matched = documents.expand_input_patterns(pattern)
            files += matched
            sizes += [os.path.getsize(p) for p in matched]
            continue
        found = sorted((m.path, m.size_in_bytes)
                       for result in FileSystems.match([pattern]) for m in result.metadata_list)
        if not found:
            raise documents.InputError(f"--input_file pattern {pattern!r} matched no files")
        files += [p for p, _ in found]
        sizes += [s for _, s in found]
    if not files:
        raise documents.InputError("--input_file is empty")
    return files, sizes


def written_shards(prefix: str) -> list[str]:
    found = FileSystems.match([f"{prefix}-?????-of-?????"])[0].metadata_list
    return sorted(m.path for m in found)


def delete(paths: list[str]) -> None:
    existing = [p for p in paths if FileSystems.exists(p)]
    if existing:
        FileSystems.delete(existing)


class MergeTotals(beam.CombineFn):
    def create_accumulator(self):
        return Totals()

    def add_input(self, accumulator, totals):
        return accumulator.merge(totals)

    def merge_accumulators(self, accumulators):
        merged = Totals()
        for accumulator in accumulators:
            merged.merge(accumulator)
        return merged

    def extract_output(self, accumulator):
        return accumulator


class MakeRecords(beam.DoFn):
    """Block index → its serialized records, and its `Totals` on the "totals" output."""

    def __init__(self, options, corpus, share_of: int):
        self.options = options
        self.corpus = corpus
        self.share_of = share_of

    def setup(self):
        encoder = sentence_tokens.SentenceEncoder(self.options.make_tokenizer())
        reader = parallel.block_reader(self.options, self.corpus, opener=open_input)
        self.processor = parallel.BlockProcessor(self.options, encoder, reader)
        self.progress = parallel.Progress(self.corpus.total_bytes, self.options.progress_interval_s,
                                          share_of=self.share_of)
        self.counters = {name: Metrics.counter(NAMESPACE, name) for name in summary.BEAM_COUNTERS}

    def process(self, index):
        result = self.processor(int(index))
        for name, value in summary.beam_counter_increments(result, self.options.input_file_mode).items():
            self.counters[name].inc(value)
        self.progress.update(result)
        yield from result.records
        yield beam.pvalue.TaggedOutput("totals", Totals().add_block(result))


def _encode(totals: Totals) -> str:
    return base64.b64encode(pickle.dumps(totals)).decode("ascii")


def pipeline_options(options) -> PipelineOptions:
    """Beam's options from --beam_runner and --beam_pipeline_options, checked: a runner Beam
    does not have, a quote left open or an option Beam does not know (Beam would drop it with a
    warning) is a `UsageError` naming the flag."""
    try:
        flags = shlex.split(options.beam_pipeline_options or "")
    except ValueError as error:  # "No closing quotation"
        raise UsageError(f"--beam_pipeline_options: {error} in "
                         f"{options.beam_pipeline_options!r}") from None
    beam_options = PipelineOptions(flags, runner=options.beam_runner)
    _check_known(beam_options, flags)
    try:
        create_runner(options.beam_runner)
    except (ValueError, ImportError) as error:
        raise UsageError(f"--beam_runner={options.beam_runner}: Beam has no such runner "
                         f"({error})") from None
    if not any(f.startswith("--default_sdk_harness_log_level") for f in flags):
        # Workers log their own start-up at INFO; keep their warnings and our progress lines.
        flags += ["--default_sdk_harness_log_level=WARNING",
                  '--sdk_harness_log_level_overrides={"absl": "INFO"}']
    return PipelineOptions(flags, runner=options.beam_runner)


def _check_known(beam_options: PipelineOptions, flags: list) -> None:
    unknown = []
    # Beam's own parser of every option it knows, handed to this callback before it parses.
    known = beam_options.get_all_options(
        add_extra_args_fn=lambda parser: unknown.extend(parser.parse_known_args(flags)[1]))
    if unknown:
        close = difflib.get_close_matches(unknown[0].split("=", 1)[0].lstrip("-"), list(known),
                                          n=1)
        hint = f" (did you mean --{close[0]}?)" if close else ""
        raise UsageError(f"--beam_pipeline_options: Beam does not know {unknown[0]}{hint}")


def _share_of(beam_options: PipelineOptions) -> int:
    """Workers that split the blocks, for the per-worker progress estimate (DirectRunner only)."""
    if "Direct" not in (beam_options.view_as(StandardOptions).runner or ""):
        return 1
    workers = beam_options.view_as(DirectOptions).direct_num_workers
    return workers if workers and workers > 0 else (os.cpu_count() or 1)


def build(pipeline, options, corpus, totals_path: str, share_of: int = 1) -> None:
    made = (pipeline
            | "BlockIndices" >> beam.Create(list(range(corpus.num_blocks)))
            | "Spread" >> beam.Reshuffle()
            | "MakeRecords" >> beam.ParDo(MakeRecords(options, corpus, share_of)).with_outputs(
                "totals", main="records"))
    # One shard keeps --output_file's own name, as the local engine does; more are -SSSSS-of-NNNNN.
    # A fixed count shuffles every record to its shard (the DirectRunner holds that shuffle in
    # its main process); 0 writes each bundle's records where they are made.
    template = "" if options.output_shards == 1 else "-SSSSS-of-NNNNN"
    _ = made.records | "WriteRecords" >> beam.io.WriteToTFRecord(
        options.output_file, num_shards=options.output_shards, shard_name_template=template)
    _ = (made.totals
         | "MergeTotals" >> beam.CombineGlobally(MergeTotals())
         | "EncodeTotals" >> beam.Map(_encode)
         | "WriteTotals" >> beam.io.WriteToText(totals_path, num_shards=1, shard_name_template=""))


def run_pipeline(options, corpus, totals_path: str) -> tuple[Totals, dict]:
    """Runs to completion; returns the merged totals and the Beam counters' values."""
    beam_options = pipeline_options(options)
    pipeline = beam.Pipeline(options=beam_options)
    build(pipeline, options, corpus, totals_path, _share_of(beam_options))
    result = pipeline.run()
    result.wait_until_finish()
    try:
        with FileSystems.open(totals_path) as reader:
            totals = pickle.loads(base64.b64decode(reader.read().strip()))
    finally:
        delete([totals_path])
    return totals, _counter_values(result)


def _counter_values(result) -> dict:
    values = {}
    try:
        queried = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]
    except (NotImplementedError, AttributeError, KeyError):
        return values  # a runner without metrics
    for counter in queried:
        value = counter.committed if counter.committed is not None else counter.attempted
        values[counter.key.metric.name] = values.get(counter.key.metric.name, 0) + (value or 0)
    return {name: values[name] for name in summary.BEAM_COUNTERS if name in values}
