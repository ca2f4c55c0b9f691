"""`--exact_original`: the original script's output, record for record, held in memory like it.

Flow of the original: read and tokenize every document; shuffle the documents; `dupe_factor`
passes over all of them; shuffle all instances; write them round-robin. One `random.Random(seed)`
drives everything except the n-gram length, which comes from numpy's legacy global RNG — here a
private `RandomState(seed)`, which is what the original gives after `np.random.seed(seed)`.

Input the original could not read differs by design: undecodable lines are skipped or fail
(`--undecodable_lines`; the original raised), lines over `--max_line_bytes` are cut (0 = no cap).
"""

from __future__ import annotations

import random
import time

from absl import logging

from albert_tf.pretraining_data import (documents, example_encoder, instances, masking,
                                        sentence_tokens)
from albert_tf.pretraining_data.summary import Totals, count_document


def read_corpus(files, options, encoder: sentence_tokens.SentenceEncoder,
                counters: documents.InputCounters, doc_counts: dict) -> list:
    """All non-empty documents as lists of code sentences, in file order."""
    lines = documents.iter_lines(files, counters, on_undecodable=options.undecodable_lines,
                                 ignore_decode_errors=options.input_file_mode == "rb",
                                 max_line_bytes=options.max_line_bytes)
    corpus = []
    for document in documents.iter_documents(lines, options.preprocess, counters):
        sentences = [codes for codes in encoder.encode(document) if codes]
        count_document(sentences, doc_counts, encoder.unk_codes)
        if sentences:
            corpus.append(sentences)
    return corpus


def generate(corpus: list, options, encoder, ngram_lengths: list | None = None) -> list:
    """The original's `create_training_instances` after reading: a list of `Instance`."""
    rng = random.Random(options.random_seed)
    draw_ngram = masking.LegacyNumpyNgramSampler(options.random_seed, options.ngram,
                                                 options.favor_shorter_ngram)
    instance_cfg = options.instance_config()
    mask_cfg = options.masking_config(encoder)
    rng.shuffle(corpus)
    result = []
    start = time.monotonic()
    for dupe in range(options.dupe_factor):
        for document_index in range(len(corpus)):
            result.extend(instances.create_instances_from_document(
                corpus, document_index, instance_cfg, mask_cfg, rng, draw_ngram, ngram_lengths))
        elapsed = time.monotonic() - start
        logging.info("progress: pass %d/%d, %d instances (%.1f/s), ETA %.0fs", dupe + 1,
                     options.dupe_factor, len(result), len(result) / max(elapsed, 1e-9),
                     elapsed / (dupe + 1) * (options.dupe_factor - dupe - 1))
    rng.shuffle(result)
    return result


def write_records(options, files, encoder, out, totals: Totals) -> dict:
    """The original's records in its order into `out` (a `writer.RoundRobinWriter`), counted
    into `totals`; no extra summary fields."""
    corpus = read_corpus(files, options, encoder, totals.counters, totals.doc_counts)
    logging.info("read %d documents; generating instances in memory (--exact_original)", len(corpus))
    records = example_encoder.ExampleEncoder(options.max_seq_length,
                                             options.max_predictions_per_seq, options.do_permutation)
    record_stats = totals.record_stats
    lengths: list = []
    for instance in generate(corpus, options, encoder, lengths):
        out.write(records.serialize(instance))
        record_stats.add(instance.input_ids, instance.len_a, instance.masked_lm_positions,
                         instance.masked_lm_ids, instance.sentence_order_label, encoder.mask_id)
    totals.ngram_lengths.update(lengths)
    return {}
