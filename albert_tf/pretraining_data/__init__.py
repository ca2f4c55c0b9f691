"""Pretraining data: raw text → masked-LM + sentence-order TFRecords (create_pretraining_data.py).

    engines.py         entry point: the `Engine` interface, its three engines and the choice
    options.py         the run's settings (the script's flags)
    documents.py       reading the corpus: lines → documents, bad input counted
    sentence_tokens.py sentences → token codes (id + word-start flag)
    instances.py, masking.py    the original's instances and masking
    example_encoder.py instance → record bytes (no TensorFlow: what the workers import)
    writer.py          atomic round-robin TFRecord files, the summary file
    summary.py         the run summary (counts, statistics, Beam's counters)
    stats.py           statistics of records
    exact_original.py  --exact_original: the original's records, in memory
    corpus_blocks.py, parallel.py    the streaming engine: byte blocks, made by local workers
    beam_pipeline.py, beam_transforms.py   --beam_runner: the blocks on Apache Beam (optional)

Nothing is imported here, so a module of the package loads only what it needs.
"""
