"""From a checkpoint (original TF1 or ours) to verified encoder + preprocessing SavedModels."""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.export.encoder import export_encoder
from albert_tf.export.preprocessing import export_preprocessing
from albert_tf.export.saved_model import versioned_dir
from albert_tf.export.verify import compare, verify_in_fresh_process
from albert_tf.models import AlbertModel, AlbertPretrainer


def _has_pretraining_heads(prefix) -> bool:
    names = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    return any(n.startswith("cls/predictions/") or "/masked_lm/" in n for n in names)


def load_model(config: AlbertConfig, checkpoint, init_from_group0: bool = False):
    """An `AlbertPretrainer` when the checkpoint has pretraining heads, else an `AlbertModel`."""
    from albert_tf.training.checkpoints import init_from_checkpoint, resolve_checkpoint

    prefix = resolve_checkpoint(checkpoint)
    model = AlbertPretrainer(config) if _has_pretraining_heads(prefix) else AlbertModel(config)
    init_from_checkpoint(model, prefix, init_from_group0=init_from_group0)
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


def expected_encoder_outputs(model, config: AlbertConfig) -> tuple[dict, dict]:
    """({signature: inputs}, {signature: outputs}) computed with the Keras model itself."""
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
        calls["sop"] = original
        calls["mlm"] = {**original, "mlm_positions": positions}
        expected["sop"] = {"sop_log_probs": tf.nn.log_softmax(full["sentence_order_logits"]).numpy()}
        logits = full["masked_lm_logits"].numpy()
        expected["mlm"] = {"mlm_logits": logits.reshape(-1, logits.shape[-1])}
    return calls, expected


def export_pretrained(config: AlbertConfig, checkpoint, export_dir, spm_model_file=None,
                      max_seq_length: int = 128, do_lower_case: bool = True,
                      version: int | None = None, verify: bool = True,
                      init_from_group0: bool = False) -> dict:
    """Writes `<export_dir>/encoder/<version>` (and `<export_dir>/preprocessing/<version>` when
    an spm model is given), then checks each in a fresh process against the Keras model."""
    model = load_model(config, checkpoint, init_from_group0)
    result = {"model": type(model).__name__}
    encoder_dir = export_encoder(model, versioned_dir(os.path.join(export_dir, "encoder"), version))
    result["encoder"] = encoder_dir
    if verify:
        calls, expected = expected_encoder_outputs(model, config)
        result["encoder_check"] = compare(expected, verify_in_fresh_process(encoder_dir, calls))
    if spm_model_file:
        pre_dir = export_preprocessing(
            spm_model_file, versioned_dir(os.path.join(export_dir, "preprocessing"), version),
            max_seq_length, do_lower_case)
        result["preprocessing"] = pre_dir
        if verify:
            from albert_tf.text import AlbertPreprocessor

            text = np.array(["The quick brown fox jumps over the lazy dog.", "ALBERT shares layers."])
            packed = AlbertPreprocessor(spm_model_file, max_seq_length, do_lower_case)(tf.constant(text))
            expected = {"serving_default": {"input_word_ids": packed["input_ids"].numpy(),
                                            "input_mask": packed["input_mask"].numpy(),
                                            "input_type_ids": packed["segment_ids"].numpy()}}
            actual = verify_in_fresh_process(pre_dir, {"serving_default": {"text": text}})
            result["preprocessing_check"] = compare(expected, actual, atol=0)
    return result
