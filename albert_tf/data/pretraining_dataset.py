"""tf.data over the original's pretraining TFRecords (create_pretraining_data output)."""

from __future__ import annotations

import tensorflow as tf

from albert_tf.data import schema


def input_files(input_file: str) -> list[str]:
    """Comma-separated globs → sorted file list; a clear error when a glob matches nothing."""
    files = []
    for pattern in (p.strip() for p in input_file.split(",")):
        if not pattern:
            continue
        matched = sorted(tf.io.gfile.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"--input_file: no file matches {pattern!r}")
        files.extend(matched)
    if not files:
        raise FileNotFoundError("--input_file is empty")
    return files


def pretraining_dataset(files, max_seq_length, max_predictions_per_seq, batch_size,
                        is_training=True, input_context=None, shuffle_buffer=1000, seed=None,
                        cycle_length=4):
    """Batches of int32 features (`next_sentence_labels` [B,1]) of `batch_size` examples.

    Training: files interleaved, records shuffled *before* repeating (every epoch is a
    permutation, so with N examples and batch N each batch holds each example once), repeated
    forever, parsed, batched with the remainder dropped, prefetched. Evaluation: files read in
    order, repeated, batched with the remainder dropped (the original's eval reads its train
    files this way). With several input pipelines (`input_context`), each reads its own share
    of the files, or of the records when there are fewer files than pipelines.
    """
    files = list(files)
    spec = schema.pretraining_features(max_seq_length, max_predictions_per_seq)
    dataset = tf.data.Dataset.from_tensor_slices(files)
    shard_records = False
    if input_context is not None and input_context.num_input_pipelines > 1:
        if len(files) >= input_context.num_input_pipelines:
            dataset = dataset.shard(input_context.num_input_pipelines,
                                    input_context.input_pipeline_id)
        else:
            shard_records = True
    if is_training:
        dataset = dataset.interleave(
            tf.data.TFRecordDataset, cycle_length=min(cycle_length, len(files)),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None)
    else:
        dataset = dataset.flat_map(tf.data.TFRecordDataset)
    if shard_records:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat()
    dataset = dataset.map(lambda record: schema.decode(record, spec),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def dataset_fn(input_file, max_seq_length, max_predictions_per_seq, global_batch_size,
               is_training=True, shuffle_buffer=1000, seed=None):
    """A `dataset_fn(input_context)` for `Trainer.train` / `Trainer.evaluate`."""
    files = input_files(input_file) if isinstance(input_file, str) else list(input_file)

    def make(input_context):
        batch = input_context.get_per_replica_batch_size(global_batch_size)
        return pretraining_dataset(files, max_seq_length, max_predictions_per_seq, batch,
                                   is_training, input_context, shuffle_buffer, seed)

    return make
