"""Default mode: streaming, reproducible, parallel generation of pretraining records.

The input is cut into blocks of `block_bytes` input bytes (`corpus_blocks`: each block reads its
own whole documents). Worker processes turn block indices into serialized records: every random
choice comes from a `random.Random` seeded by (seed, document offset, pass) — or (seed, block)
for the shuffle of the block's records — so the output does not depend on which worker ran a
block, nor on how many there are, nor on the engine (the Beam pipeline runs the same
`BlockProcessor`). Random-document B segments are drawn from the same block (as the original
draws them from its input shard). The main process writes records in block order through a
seeded shuffle buffer. At most a few blocks are in flight, so memory does not grow with the corpus.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
import multiprocessing
import os
import random
import signal
import threading
import time
from typing import Iterable, Iterator, NamedTuple

from absl import logging

from albert_tf import io_utils
from albert_tf.errors import WorkerDiedError
from albert_tf.pretraining_data import (corpus_blocks, documents, example_encoder, instances,
                                        masking, stats)
from albert_tf.pretraining_data.summary import Totals, count_document, peak_rss_mb


class BlockResult(NamedTuple):
    index: int
    records: list  # serialized Examples, shuffled within the block
    record_stats: stats.RecordStatistics
    ngram_lengths: collections.Counter
    doc_counts: collections.Counter
    counters: documents.InputCounters  # of the lines that start in the block
    peak_rss_mb: float  # of the process that made it

    @property
    def input_bytes(self) -> int:
        return self.counters.input_bytes


def block_reader(options, corpus: corpus_blocks.Layout, opener=io_utils.open_binary):
    return corpus_blocks.BlockReader(
        corpus, options.preprocess, opener=opener, on_undecodable=options.undecodable_lines,
        ignore_decode_errors=options.input_file_mode == "rb", max_line_bytes=options.max_line_bytes,
        max_document_bytes=4 * options.block_bytes)


class BlockProcessor:
    """Block index → records, for both engines (the local pool and Beam); picklable except for
    the encoder, which forked workers share and Beam workers load themselves."""

    def __init__(self, options, encoder, reader: corpus_blocks.BlockReader):
        self.seed = options.random_seed
        self.dupe_factor = options.dupe_factor
        self.ngram = options.ngram
        self.favor_shorter_ngram = options.favor_shorter_ngram
        self.encoder = encoder
        self.reader = reader
        self.instance_cfg = options.instance_config()
        self.mask_cfg = options.masking_config(encoder)
        self.example_encoder = example_encoder.ExampleEncoder(
            options.max_seq_length, options.max_predictions_per_seq, options.do_permutation)

    def __call__(self, index: int) -> BlockResult:
        counters = documents.InputCounters()
        docs = self.reader.read(index, counters)
        return self.records(index, docs, counters)

    def records(self, index: int, docs: list, counters: documents.InputCounters) -> BlockResult:
        """The block's records: every draw for a document comes from a generator seeded by
        (seed, document offset, pass); random B segments come from the block's documents."""
        doc_counts: collections.Counter = collections.Counter()
        lines = [line for document in docs for line in document.lines]
        codes = iter(self.encoder.encode(lines))
        corpus, doc_ids = [], []
        for document in docs:
            sentences = [c for c in (next(codes) for _ in document.lines) if c]
            count_document(sentences, doc_counts, self.encoder.unk_codes)
            if sentences:
                corpus.append(sentences)
                doc_ids.append(document.offset)

        record_stats = stats.RecordStatistics()
        lengths: list = []
        records = []
        serialize = self.example_encoder.serialize
        mask_id = self.encoder.mask_id
        for dupe in range(self.dupe_factor):
            for local_index, doc_id in enumerate(doc_ids):
                rng = random.Random(f"{self.seed}/document/{doc_id}/pass/{dupe}")
                draw_ngram = masking.PythonNgramSampler(rng, self.ngram, self.favor_shorter_ngram)
                for instance in instances.create_instances_from_document(
                        corpus, local_index, self.instance_cfg, self.mask_cfg, rng, draw_ngram, lengths):
                    records.append(serialize(instance))
                    record_stats.add(instance.input_ids, instance.len_a, instance.masked_lm_positions,
                                     instance.masked_lm_ids, instance.sentence_order_label, mask_id)
        random.Random(f"{self.seed}/block/{index}").shuffle(records)
        return BlockResult(index, records, record_stats, collections.Counter(lengths), doc_counts,
                           counters, peak_rss_mb())


_PROCESSOR: BlockProcessor | None = None


def _init_worker(processor: BlockProcessor, parent: int) -> None:
    global _PROCESSOR
    _PROCESSOR = processor
    # A forked worker inherits the parent's objects, TensorFlow's among them; collecting one
    # here would run its finalizer against a TensorFlow runtime that was not forked with it (a
    # segfault seen in the suite). Freezing keeps the collector off everything inherited.
    gc.freeze()
    # The parent stops the workers (pool.terminate, SIGTERM) when it ends, is interrupted or
    # terminated: a worker ignores Ctrl-C (sent to the whole process group) and dies on SIGTERM
    # even though fork copied the parent's SIGTERM handler.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    """A parent killed outright (SIGKILL, OOM killer) cannot stop its workers; a watchdog
    thread ends the worker within a quarter second of being orphaned, so it does not run on
    until its block is done. (Not PR_SET_PDEATHSIG: that follows the thread that forked, and
    the pool forks a replacement worker from its handler thread, whose end at shutdown then
    killed the replacement while it held the task queue's lock: terminate() hung on it.)"""
    def watch():
        while os.getppid() == parent:
            time.sleep(0.25)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before the worker started
        os._exit(1)
    threading.Thread(target=watch, name="orphan-watchdog", daemon=True).start()


def _process_in_worker(index: int) -> BlockResult:
    return _PROCESSOR(index)


def _pool_context():
    # fork shares the loaded tokenizer without pickling and starts fast; workers never touch
    # TensorFlow (imported by the parent), they run numpy/sentencepiece/pure Python only.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def process_blocks(blocks: Iterable[int], processor: BlockProcessor,
                   num_workers: int) -> Iterator[BlockResult]:
    """Results in block order; with workers, at most 2 × workers + 1 blocks are in flight."""
    if num_workers <= 1:
        for block in blocks:
            yield processor(block)
        return
    others = _live_children()
    with _pool_context().Pool(num_workers, initializer=_init_worker,
                              initargs=(processor, os.getpid())) as pool:
        workers = _live_children() - others  # the pool starts its workers before returning
        pending: collections.deque = collections.deque()
        for block in blocks:
            pending.append((block, pool.apply_async(_process_in_worker, (block,))))
            if len(pending) > 2 * num_workers:
                yield _result(*pending.popleft(), workers)
        while pending:
            yield _result(*pending.popleft(), workers)
        pool.close()
        pool.join()  # reaped workers count in the parent's resource usage (summary's peak memory)


def _result(block: int, result, workers: set, poll_seconds: float = 2.0) -> BlockResult:
    """`result.get()`, except that a worker which died (a crash, the OOM killer) ends the wait:
    the pool replaces a dead worker but never answers for the block it held. Pool workers only
    exit when the pool closes, so a start-up pid gone from the live children is a dead one."""
    while True:
        try:
            return result.get(timeout=poll_seconds)
        except multiprocessing.TimeoutError:
            dead = workers - _live_children()
            if dead:
                raise WorkerDiedError(
                    f"a worker process (pid {min(dead)}) died while blocks from {block} on were "
                    "being made (killed, out of memory or crashed); nothing was published. "
                    "Run again, with fewer --num_workers if memory is short (--num_workers=1: "
                    "no worker processes)") from None


def _live_children() -> set:
    return {process.pid for process in multiprocessing.active_children()}


class ShuffleBuffer:
    """Seeded, bounded shuffle across blocks: mixes neighbouring blocks' records before writing."""

    def __init__(self, size: int, seed: int, write):
        self._size = size
        self._rng = random.Random(f"{seed}/output")
        self._buffer: list = []
        self._write = write

    def extend(self, records: list) -> None:
        buffer, size, write = self._buffer, self._size, self._write
        randbelow = self._rng.randrange  # one positive argument: the draws of `_randbelow`
        for record in records:
            if len(buffer) < size:
                buffer.append(record)
            elif size:
                j = randbelow(size)
                write(buffer[j])
                buffer[j] = record
            else:
                write(record)

    def drain(self) -> None:
        self._rng.shuffle(self._buffer)
        for record in self._buffer:
            self._write(record)
        self._buffer = []


@dataclasses.dataclass
class Progress:
    total_bytes: int
    interval_s: float
    start: float = dataclasses.field(default_factory=time.monotonic)
    last: float = 0.0
    documents: int = 0
    instances: int = 0
    input_bytes: int = 0
    # A Beam worker sees only its share of the blocks: it scales its fraction by the number of
    # workers (an estimate that assumes an even share) and says so.
    share_of: int = 1

    def update(self, result: BlockResult, force: bool = False) -> None:
        self.documents += result.doc_counts["documents"]
        self.instances += len(result.records)
        self.input_bytes += result.input_bytes
        now = time.monotonic()
        if not force and now - self.last < self.interval_s:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        done = self.input_bytes * self.share_of / self.total_bytes if self.total_bytes else 1.0
        done = min(done, 1.0)
        eta = elapsed * (1 - done) / done if done > 0 else float("nan")
        scope = f" (this worker, 1 of {self.share_of})" if self.share_of > 1 else ""
        logging.info("progress%s: %.1f%% of input, %d documents (%.1f/s), %d instances (%.1f/s), "
                     "elapsed %.0fs, ETA %.0fs", scope, 100 * done, self.documents,
                     self.documents / elapsed, self.instances, self.instances / elapsed, elapsed, eta)


def write_records(options, files, encoder, out, totals: Totals) -> dict:
    """The input's blocks through the workers into `out` (a `writer.RoundRobinWriter`), counted
    into `totals`; returns the summary's last fields."""
    corpus = corpus_blocks.layout(files, [io_utils.file_size(f) for f in files], options.block_bytes)
    totals.counters.files += len(files)
    processor = BlockProcessor(options, encoder, block_reader(options, corpus))
    progress = Progress(corpus.total_bytes, options.progress_interval_s)
    shuffle = ShuffleBuffer(options.shuffle_buffer, options.random_seed, out.write)
    # closing(): an error or interrupt in this loop stops the pool at once (not when the
    # suspended generator is garbage-collected).
    with contextlib.closing(process_blocks(range(corpus.num_blocks), processor,
                                           options.workers())) as results:
        for result in results:
            shuffle.extend(result.records)
            totals.add_block(result)
            progress.update(result)
    shuffle.drain()
    return totals.block_fields()
