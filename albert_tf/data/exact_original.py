"""`--exact_original`: the original script's output, record for record, held in memory like it.

Flow of the original: read and tokenize every document; shuffle the documents; `dupe_factor`
passes over all of them; shuffle all instances; write them round-robin. One `random.Random(seed)`
drives everything except the n-gram length, which comes from numpy's legacy global RNG — here a
private `RandomState(seed)`, which is what the original gives after `np.random.seed(seed)`.
"""

from __future__ import annotations

import random

from absl import logging

from albert_tf.data import documents, instances, masking, sentence_tokens, stats


def read_corpus(files, options, encoder: sentence_tokens.SentenceEncoder,
                counters: documents.InputCounters, doc_counts: dict) -> list:
    """All non-empty documents as lists of code sentences, in file order."""
    lines = documents.iter_lines(files, counters, on_undecodable=options.undecodable_lines,
                                 ignore_decode_errors=options.input_file_mode == "rb",
                                 max_line_bytes=options.max_line_bytes)
    corpus = []
    for document in documents.iter_documents(lines, options.preprocess, counters):
        sentences = [codes for codes in encoder.encode(document) if codes]
        count_document(sentences, doc_counts)
        if sentences:
            corpus.append(sentences)
    return corpus


def count_document(sentences: list, doc_counts: dict) -> None:
    if not sentences:
        doc_counts["empty_after_tokenization"] += 1
        return
    doc_counts["documents"] += 1
    doc_counts["sentences"] += len(sentences)
    doc_counts["corpus_tokens"] += sum(len(s) for s in sentences)
    if len(sentences) == 1:
        doc_counts["single_sentence_documents"] += 1


def generate(corpus: list, options, encoder, ngram_lengths: list | None = None) -> list:
    """The original's `create_training_instances` after reading: a list of `Instance`."""
    rng = random.Random(options.random_seed)
    draw_ngram = masking.LegacyNumpyNgramSampler(options.random_seed, options.ngram,
                                                 options.favor_shorter_ngram)
    instance_cfg = options.instance_config()
    mask_cfg = options.masking_config(encoder)
    rng.shuffle(corpus)
    result = []
    for _ in range(options.dupe_factor):
        for document_index in range(len(corpus)):
            result.extend(instances.create_instances_from_document(
                corpus, document_index, instance_cfg, mask_cfg, rng, draw_ngram, ngram_lengths))
    rng.shuffle(result)
    return result


def run(options, files, encoder, writer, counters, doc_counts, record_stats: stats.RecordStatistics,
        ngram_lengths) -> dict:
    corpus = read_corpus(files, options, encoder, counters, doc_counts)
    logging.info("read %d documents; generating instances in memory (--exact_original)", len(corpus))
    example_encoder = _example_encoder(options)
    lengths: list = []
    for instance in generate(corpus, options, encoder, lengths):
        writer.write(example_encoder.serialize(instance))
        record_stats.add(instance.input_ids, instance.len_a, instance.masked_lm_positions,
                         instance.masked_lm_ids, instance.sentence_order_label, encoder.mask_id)
    ngram_lengths.update(lengths)
    return {}


def _example_encoder(options):
    from albert_tf.data import pretraining_writer

    return pretraining_writer.ExampleEncoder(options.max_seq_length, options.max_predictions_per_seq,
                                             options.do_permutation)
