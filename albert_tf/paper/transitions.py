"""The TensorFlow half of Figure 1: an encoder's per-layer states on some input, measured by
`smoothness.TransitionStats`.

The states are x_0 (the embedding after the E→H projection: the first layer's input) and each
block's output (`encoder_outputs`). Input is pretraining TFRecords (their masked tokens put back,
so the text is the original) or plain text packed into [CLS] … [SEP] windows.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf

from albert_tf.weights.run_inputs import resolve_inputs
from albert_tf.data import schema
from albert_tf.errors import InputError, UsageError
from albert_tf.io_utils import glob_inputs, is_local
from albert_tf.models import AlbertModel
from albert_tf.paper.smoothness import TransitionStats
from albert_tf.pretraining_data.heldout import unmasked
from albert_tf.tokenization import FullTokenizer, preprocess_text
from albert_tf.weights.loading import init_from_checkpoint


class NoInputError(InputError, FileNotFoundError):
    """--input_file names no file."""


def encoder_states(encoder: AlbertModel, features: dict):
    """([x_0, x_1, …, x_L] as numpy [B,S,H], input_mask [B,S]) for one batch."""
    inputs = {k: features[k] for k in ("input_ids", "input_mask", "segment_ids")}
    outputs = encoder(inputs, training=False)
    first = outputs["embedding_output"]
    projection = encoder.transformer.embedding_projection
    if projection is not None:
        first = projection(first)
    states = [np.asarray(first, np.float32)] + [np.asarray(s, np.float32)
                                                 for s in outputs["encoder_outputs"]]
    return states, np.asarray(inputs["input_mask"])


def measure(encoder: AlbertModel, batches) -> dict:
    """Figure 1's per-layer values over every batch (see `smoothness`)."""
    stats = TransitionStats()
    for features in batches:
        stats.add(*encoder_states(encoder, features))
    return stats.result()


def record_batches(files, max_seq_length, max_predictions_per_seq, max_examples, batch_size):
    """Up to `max_examples` records of `files`, each once, in batches, unmasked."""
    spec = schema.pretraining_features(max_seq_length, max_predictions_per_seq)
    dataset = tf.data.TFRecordDataset(list(files)).take(max_examples)
    dataset = dataset.map(lambda r: schema.decode(r, spec)).batch(batch_size)
    for features in dataset:
        yield unmasked({k: v.numpy() for k, v in features.items()})


def text_windows(lines, tokenizer: FullTokenizer, do_lower_case: bool, max_seq_length: int,
                 max_examples: int):
    """[CLS] + pieces + [SEP] windows of consecutive lines' pieces (id lists)."""
    room = max_seq_length - 2
    cls, sep = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    pending, made = [], 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        text = preprocess_text(line, lower=do_lower_case) if tokenizer.sp_model else line
        pending += tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
        while len(pending) >= room and made < max_examples:
            yield [cls] + pending[:room] + [sep]
            pending, made = pending[room:], made + 1
        if made >= max_examples:
            return
    if pending and made < max_examples:
        yield [cls] + pending[:room] + [sep]


def text_batches(files, tokenizer, do_lower_case, max_seq_length, max_examples, batch_size):
    def lines():
        for path in files:
            with tf.io.gfile.GFile(path, "rb") as reader:
                for raw in reader:
                    yield raw.decode("utf-8", "replace")

    def batch(windows):
        ids = np.zeros((len(windows), max_seq_length), np.int32)
        mask = np.zeros_like(ids)
        for row, window in enumerate(windows):
            ids[row, :len(window)] = window
            mask[row, :len(window)] = 1
        return {"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)}

    pending = []
    for window in text_windows(lines(), tokenizer, do_lower_case, max_seq_length, max_examples):
        pending.append(window)
        if len(pending) == batch_size:
            yield batch(pending)
            pending = []
    if pending:
        yield batch(pending)


def is_tfrecord_file(path: str) -> bool:
    """Whether the file's first record reads as a TFRecord (a text file fails the checksum)."""
    try:
        for _ in tf.data.TFRecordDataset(path).take(1):
            return True
    except (tf.errors.DataLossError, tf.errors.OutOfRangeError):
        return False
    return False


def input_batches(input_file, max_seq_length, max_examples, batch_size, tokenizer_files,
                  do_lower_case=True, max_predictions_per_seq=20):
    files = glob_inputs(input_file, NoInputError, no_match="--input_file: no file matches "
                        "{pattern!r}", empty="--input_file is empty")
    if is_tfrecord_file(files[0]):
        return record_batches(files, max_seq_length, max_predictions_per_seq, max_examples,
                              batch_size)
    spm_model_file, vocab_file = tokenizer_files
    if not spm_model_file and not vocab_file:
        raise UsageError("--input_file is text: pass --spm_model_file or --vocab_file (the "
                         "--init_checkpoint source holds no tokenizer)")
    tokenizer = FullTokenizer(vocab_file=vocab_file, do_lower_case=do_lower_case,
                              spm_model_file=spm_model_file)
    return text_batches(files, tokenizer, do_lower_case, max_seq_length, max_examples, batch_size)


def load_encoder(init_checkpoint, albert_config_file=None, spm_model_file=None, vocab_file=None):
    """(encoder with the source's weights, (spm_model_file, vocab_file)) for any weight source."""
    local = is_local(init_checkpoint)
    if local and not (os.path.exists(init_checkpoint) or glob.glob(init_checkpoint + ".*")):
        raise InputError(f"--init_checkpoint={init_checkpoint}: no such file or folder")
    inputs = resolve_inputs(init_checkpoint=init_checkpoint, albert_config_file=albert_config_file,
                            spm_model_file=spm_model_file, vocab_file=vocab_file)
    if inputs.albert_config is None:
        raise UsageError(f"--init_checkpoint={init_checkpoint} holds no model config: pass "
                         "--albert_config_file")
    encoder = AlbertModel(inputs.albert_config)
    init_from_checkpoint(encoder, inputs.weights(init_checkpoint))  # the source opened once
    return encoder, (inputs.spm_model_file, inputs.vocab_file)
