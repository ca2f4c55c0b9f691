"""The Keras reference of an encoder or preprocessing export (`albert_tf.source_export` puts
them together): the model a weight source holds, sample inputs, and the outputs a fresh-process
check compares the export against."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertModel, AlbertPretrainer
from albert_tf.serving.saved_model import resolve_path
from albert_tf.text import text_preprocessor
from albert_tf.weights.loading import init_from_checkpoint
from albert_tf.weights.readers import open_source
from albert_tf.weights.source import WeightSource
from albert_tf.weights.tf1_checkpoint import restore_mismatch_error


def load_model(config: AlbertConfig, checkpoint, init_from_group0: bool = False):
    """An `AlbertPretrainer` when the source has the masked-LM head (its sentence-order head is
    served only when the source has that too: `"sop" in source.heads`), else an `AlbertModel`.
    `checkpoint` is any weight source (`weights.readers.open_source`) or an opened
    `WeightSource`."""
    source = checkpoint if isinstance(checkpoint, WeightSource) else \
        open_source(resolve_path(checkpoint))
    pretraining = "mlm" in source.heads
    model = AlbertPretrainer(config) if pretraining else AlbertModel(config)
    try:
        logging.info("%s", init_from_checkpoint(model, source, init_from_group0=init_from_group0))
    except ValueError as error:
        mismatch = restore_mismatch_error(error, model, source.path)
        if mismatch is None:
            raise
        raise mismatch from None
    return model


def sample_inputs(config: AlbertConfig, batch: int = 2, length: int = 16, predictions: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    length = min(length, config.max_position_embeddings)
    ids = rng.integers(5, config.vocab_size, (batch, length)).astype(np.int32)
    mask = np.ones((batch, length), np.int32)
    mask[-1, length // 2:] = 0
    types = np.zeros((batch, length), np.int32)
    types[:, length // 2:] = 1
    positions = rng.integers(1, length // 2, (batch, predictions)).astype(np.int32)
    return ids, mask, types, positions


def expected_encoder_outputs(model, config: AlbertConfig, sop: bool = True
                             ) -> tuple[dict, dict]:
    """({signature: inputs}, {signature: outputs}) computed with the Keras model itself
    (`sop=False`: an `AlbertPretrainer` whose export has no `sop` signature)."""
    ids, mask, types, positions = sample_inputs(config)
    encoder = model.encoder if isinstance(model, AlbertPretrainer) else model
    out = encoder({"input_ids": ids, "input_mask": mask, "segment_ids": types})
    hub = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}
    original = {"input_ids": ids, "input_mask": mask, "segment_ids": types}
    calls = {"serving_default": hub, "tokens": original}
    expected = {
        "serving_default": {"pooled_output": out["pooled_output"].numpy(),
                            "sequence_output": out["sequence_output"].numpy(),
                            "encoder_outputs": np.stack([x.numpy() for x in out["encoder_outputs"]])},
        "tokens": {"pooled_output": out["pooled_output"].numpy(),
                   "sequence_output": out["sequence_output"].numpy()}}
    if isinstance(model, AlbertPretrainer):
        full = model({**original, "masked_lm_positions": positions})
        calls["mlm"] = {**original, "mlm_positions": positions}
        if sop:
            calls["sop"] = original
            expected["sop"] = {"sop_log_probs":
                               tf.nn.log_softmax(full["sentence_order_logits"]).numpy()}
        logits = full["masked_lm_logits"].numpy()
        expected["mlm"] = {"mlm_logits": logits.reshape(-1, logits.shape[-1])}
    return calls, expected


def expected_preprocessing(spm_model_file, max_seq_length, do_lower_case, vocab_file=None,
                           albert_text_rules=True):
    text = np.array(["The quick brown fox jumps over the lazy dog.", "ALBERT shares layers.",
                     "我爱中国人，你好。"])
    packed = text_preprocessor(max_seq_length, do_lower_case, spm_model_file, vocab_file,
                               albert_text_rules)(tf.constant(text))
    expected = {"serving_default": {"input_word_ids": packed["input_ids"].numpy(),
                                    "input_mask": packed["input_mask"].numpy(),
                                    "input_type_ids": packed["segment_ids"].numpy()}}
    return {"serving_default": {"text": text}}, expected
