"""tf.data over the original's pretraining TFRecords (create_pretraining_data output), and the
checks that name the file, feature and flag when the files do not fit the run."""

from __future__ import annotations

import tensorflow as tf
from google.protobuf.message import DecodeError

from albert_tf import io_utils
from albert_tf.data import schema, tfrecords
from albert_tf.errors import InputError
from albert_tf.tf_errors import LENGTH_FLAGS, describe_tf_error, first_line


class NoInputFilesError(InputError, FileNotFoundError):
    """--input_file matches no file (an InputError, and a FileNotFoundError as before)."""


def input_files(input_file: str) -> list[str]:
    """Comma-separated globs → sorted file list; a clear error when a glob matches nothing.

    A glob skips our writers' temporaries and side files (`.x.tmp-<pid>-…`, `*.summary.json`):
    `dir/*` means the records in `dir`. A file named explicitly is kept.
    """
    return io_utils.glob_inputs(input_file, NoInputFilesError,
                                no_match="--input_file: no file matches {pattern!r}",
                                empty="--input_file is empty")


def _first_record(path: str):
    try:
        for record in tf.data.TFRecordDataset(path).take(1):
            return record.numpy()
    except tf.errors.DataLossError as error:
        raise InputError(f"{path}: not a TFRecord file, or corrupted or truncated "
                         f"({first_line(error.message)})") from None
    except tf.errors.OpError as error:
        raise InputError(f"{path}: cannot read it ({first_line(error.message)})") from None
    raise InputError(f"no records in {path}")


def _feature_values(path: str, example, name: str, dtype):
    feature = example.features.feature.get(name)
    kind = "float_list" if dtype == tf.float32 else "int64_list"
    if feature is None or feature.WhichOneof("kind") != kind:
        present = ", ".join(sorted(example.features.feature)) or "none"
        raise InputError(f"{path}: the first record has no {kind} feature {name!r} (features: "
                         f"{present}); is it a create_pretraining_data file?")
    return list(getattr(feature, kind).value)


def check_pretraining_files(files, max_seq_length: int, max_predictions_per_seq: int,
                            vocab_size: int | None = None) -> None:
    """Reads the first record of each file (cheap) and raises an `InputError` naming the file,
    the feature, the length found and the flag that does not fit; token ids outside
    [0, vocab_size) name the config key `vocab_size`. An empty file is "no records in FILE"."""
    spec = schema.pretraining_features(max_seq_length, max_predictions_per_seq)
    for path in files:
        record = _first_record(path)
        example = tf.train.Example()
        try:
            example.ParseFromString(record)
        except DecodeError:
            raise InputError(f"{path}: the first record is not a tf.train.Example") from None
        values = {}
        for name, feature in spec.items():
            values[name] = _feature_values(path, example, name, feature.dtype)
            expected = feature.shape[0]
            if len(values[name]) != expected:
                flag = LENGTH_FLAGS.get(name, "the reader's length")
                raise InputError(
                    f"{path}: feature {name!r} of the first record holds {len(values[name])} "
                    f"values but {flag}={expected}; pass {flag}={len(values[name])} (the length "
                    "the records were written with)")
        if vocab_size is not None:
            for name in ("input_ids", "masked_lm_ids"):
                bad = [i for i in values[name] if not 0 <= i < vocab_size]
                if bad:
                    raise InputError(
                        f"{path}: feature {name!r} of the first record holds token id {bad[0]}, "
                        f"outside the model's vocabulary (config key `vocab_size`={vocab_size}); "
                        "the records were made with another vocabulary")


def describe_read_error(error: BaseException, files) -> str | None:
    """One line for an error raised while reading `files` through `pretraining_dataset`, naming
    the file at fault (None when `error` is not a TensorFlow runtime error).

    A corrupted or truncated record is found by its offset (see `tfrecords`); the end of the
    data (every file empty) is "no records in FILES"."""
    files = list(files)
    if isinstance(error, tf.errors.DataLossError):
        culprits = tfrecords.find_damaged_file(files, error.message)
        return describe_tf_error(error, _name_files(culprits or files, "one of "))
    if isinstance(error, tf.errors.OutOfRangeError):
        return f"no records in {_name_files(files)}"
    return describe_tf_error(error, files[0] if len(files) == 1 else None)


def _name_files(files, several: str = "") -> str:
    if len(files) == 1:
        return files[0]
    return several + ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")


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
