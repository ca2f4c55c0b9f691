"""The MLM + SOP pretraining objective for the train step: exact global-batch losses and the original's
eval metrics (`masked_lm_accuracy`, `masked_lm_loss`, `sentence_order_accuracy`,
`sentence_order_loss`, `loss`).

`sentence_order_loss_weight` (run_pretraining's flag, default 1: the original) scales the
sentence-order loss in the total; 0 trains the masked LM alone (the paper's "None" row of
Table 5). Its metrics are still reported, for a head that then stays at its initial weights."""

from __future__ import annotations

import tensorflow as tf

from albert_tf.models import (masked_lm_example_loss, pretraining_losses,
                              sentence_order_example_loss)
from albert_tf.training.steps import Objective


def _parts(outputs, features):
    weights = tf.cast(tf.reshape(features["masked_lm_weights"], [-1]), tf.float32)
    mlm_logits = outputs["masked_lm_logits"]
    mlm_ids = tf.reshape(features["masked_lm_ids"], [-1])
    mlm_logits = tf.reshape(mlm_logits, [-1, tf.shape(mlm_logits)[-1]])
    mlm_loss = tf.reshape(masked_lm_example_loss(mlm_logits, mlm_ids), [-1])
    mlm_correct = tf.cast(tf.equal(tf.argmax(mlm_logits, -1, output_type=tf.int32),
                                   tf.cast(mlm_ids, tf.int32)), tf.float32)
    labels = tf.reshape(features["next_sentence_labels"], [-1])
    sop_logits = outputs["sentence_order_logits"]
    sop_loss = sentence_order_example_loss(sop_logits, labels)
    sop_correct = tf.cast(tf.equal(tf.argmax(sop_logits, -1, output_type=tf.int32),
                                   tf.cast(labels, tf.int32)), tf.float32)
    return weights, mlm_loss, mlm_correct, sop_loss, sop_correct


def pretraining_totals(features):
    return {"masked_lm_weight": tf.reduce_sum(tf.cast(features["masked_lm_weights"], tf.float32))}


def pretraining_loss(outputs, features, totals, sentence_order_loss_weight=1.0):
    """This (micro-)batch's share of the global loss Σw·l/(Σw+1e-5) + c · mean SOP loss (c:
    `sentence_order_loss_weight`), with Σw and the example count taken over the whole global
    batch (so shares add up exactly)."""
    weights, mlm_loss, mlm_correct, sop_loss, sop_correct = _parts(outputs, features)
    mlm_share = tf.reduce_sum(weights * mlm_loss) / (totals["masked_lm_weight"] + 1e-5)
    sop_share = tf.reduce_sum(sop_loss) / totals["examples"]
    n = tf.cast(tf.size(sop_loss), tf.float32)
    metrics = {
        "masked_lm_loss": (tf.reduce_sum(weights * mlm_loss), tf.reduce_sum(weights)),
        "masked_lm_accuracy": (tf.reduce_sum(weights * mlm_correct), tf.reduce_sum(weights)),
        "sentence_order_loss": (tf.reduce_sum(sop_loss), n),
        "sentence_order_accuracy": (tf.reduce_sum(sop_correct), n),
    }
    return mlm_share + sentence_order_loss_weight * sop_share, metrics  # x·1.0 is exact


def pretraining_metrics(outputs, features, sentence_order_loss_weight=1.0):
    """The original's streaming eval metrics as (numerator, denominator) pairs; `loss` is the
    mean over eval batches of each batch's total loss (MLM + c · SOP)."""
    weights, mlm_loss, mlm_correct, sop_loss, sop_correct = _parts(outputs, features)
    _, mlm, sop = pretraining_losses(outputs, features)
    total = mlm + sentence_order_loss_weight * sop
    n = tf.cast(tf.size(sop_loss), tf.float32)
    return {
        "loss": (total, 1.0),
        "masked_lm_accuracy": (tf.reduce_sum(weights * mlm_correct), tf.reduce_sum(weights)),
        "masked_lm_loss": (tf.reduce_sum(weights * mlm_loss), tf.reduce_sum(weights)),
        "sentence_order_accuracy": (tf.reduce_sum(sop_correct), n),
        "sentence_order_loss": (tf.reduce_sum(sop_loss), n),
    }


def pretraining_objective(sentence_order_loss_weight: float = 1.0) -> Objective:
    weight = float(sentence_order_loss_weight)

    def loss_fn(outputs, features, totals):
        return pretraining_loss(outputs, features, totals, weight)

    def metric_fn(outputs, features):
        return pretraining_metrics(outputs, features, weight)

    return Objective(loss_fn, totals_fn=pretraining_totals, metric_fn=metric_fn,
                     call_kwargs={"heads_only": True})
