"""The distributed train and eval steps: micro-batch accumulation, cross-replica sums, global
clipping with the original's norm convention, dynamic loss scaling, metric sums."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Callable

import tensorflow as tf

from albert_tf.layers.encoder import use_recompute

SUM = tf.distribute.ReduceOp.SUM


@dataclasses.dataclass
class Objective:
    """What a training job needs besides the model.

    loss_fn(outputs, features) -> (loss, metrics): `loss` is the mean over the (micro-)batch
      it is given; the step weights it by that batch's share of the global batch.
      With `totals_fn`, it is called as loss_fn(outputs, features, totals) and must return its
      *share* of the global loss (e.g. Σ w·l / (totals["weight"] + 1e-5)); the shares of all
      micro-batches and replicas are summed, so the update equals one over the global batch.
    totals_fn(features) -> {name: scalar}: sums over the whole global batch (all replicas and
      micro-batches), computed before the forward pass. `examples` is always added.
    metric_fn(outputs, features) -> {name: value or (numerator, denominator)} for evaluation;
      results are Σ numerator / Σ denominator over all batches (a bare value v counts as (v, 1)).
      Training metrics come from the second item `loss_fn` returns, with the same convention.
    call_kwargs: extra keyword arguments for every model call (pretraining passes
      `heads_only=True`).
    """

    loss_fn: Callable
    totals_fn: Callable | None = None
    metric_fn: Callable | None = None
    call_kwargs: dict = dataclasses.field(default_factory=dict)

    @property
    def loss_takes_totals(self) -> bool:
        return len(inspect.signature(self.loss_fn).parameters) >= 3


def _as_pair(value):
    if isinstance(value, (tuple, list)):
        return tf.cast(value[0], tf.float32), tf.cast(value[1], tf.float32)
    return tf.cast(value, tf.float32), tf.constant(1.0)


def _pairs(metrics):
    return {k: _as_pair(v) for k, v in (metrics or {}).items()}


def _batch_size(features):
    return tf.shape(tf.nest.flatten(features)[0])[0]


def _dense_and_square_sum(grad):
    """(dense gradient, Σ squares counted the way TF1's clip_by_global_norm counts them): an
    IndexedSlices gradient (a gather's) counts every looked-up row on its own, duplicates
    included, which the original's clipping does and the golden checkpoints reflect."""
    if isinstance(grad, tf.IndexedSlices):
        values = tf.cast(grad.values, tf.float32)
        return tf.convert_to_tensor(grad), tf.reduce_sum(tf.square(values)), True
    return grad, None, False


class TrainStep:
    """Builds the per-replica step for (model, optimizer, task) under a `Runtime`."""

    def __init__(self, runtime, model, optimizer, task: Objective):
        self.runtime = runtime
        self.model = model
        self.optimizer = optimizer
        self.task = task
        self.accumulation = int(runtime.config.gradient_accumulation_steps)
        self.clip_norm = getattr(optimizer, "clip_norm", None)
        self.fp16 = runtime.config.mixed_precision == "fp16"
        if getattr(runtime.config, "recompute", False):
            use_recompute(model)  # each pass recomputed in the backward step
            if hasattr(optimizer, "serial_updates"):  # and one variable's update at a time
                optimizer.serial_updates = True
        # The step all-reduces and clips itself; the optimizer only applies.
        optimizer.external_reduction = True
        with runtime.scope():
            self.loss_scale = tf.Variable(
                2.0 ** 15 if self.fp16 else 1.0, trainable=False, name="loss_scale",
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
            self.good_steps = tf.Variable(
                0, trainable=False, dtype=tf.int64, name="loss_scale_good_steps",
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        # The steps branch on Python values only: autograph's source rewrite of every function
        # they reach would only add tracing time (a third of a tiny model's first step).
        self._compute = tf.function(self._compute_gradients,
                                    jit_compile=bool(runtime.config.jit_compile), autograph=False)
        self._step = tf.function(self._distributed_step, autograph=False)

    # --- per replica -------------------------------------------------------------------------
    def _micro_loss(self, features, totals):
        outputs = self.model(features, training=True, **self.task.call_kwargs)
        if self.task.loss_takes_totals:
            loss, metrics = self.task.loss_fn(outputs, features, totals)
        else:
            loss, metrics = self.task.loss_fn(outputs, features)
            share = tf.cast(_batch_size(features), tf.float32) / totals["examples"]
            loss = loss * share
        return tf.cast(loss, tf.float32), _pairs(metrics)

    def _micro_gradients(self, features, totals):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            loss, metrics = self._micro_loss(features, totals)
            scaled = loss * self.loss_scale if self.fp16 else loss
        grads = tape.gradient(scaled, variables)
        dense, squares, flags = [], [], []
        for g, v in zip(grads, variables):
            if g is None:
                g = tf.zeros_like(v)
            d, sq, is_slices = _dense_and_square_sum(g)
            if self.fp16:
                d = d / self.loss_scale
                sq = None if sq is None else sq / tf.square(self.loss_scale)
            dense.append(tf.cast(d, tf.float32))
            squares.append(tf.constant(0.0) if sq is None else sq)
            flags.append(is_slices)
        self._slice_flags = flags  # static: which gradients come as IndexedSlices
        return loss, metrics, dense, squares

    def _compute_gradients(self, features, totals):
        k = self.accumulation
        if k == 1:
            return self._micro_gradients(features, totals)
        size = _batch_size(features) // k

        def micro(i):
            part = tf.nest.map_structure(lambda t: t[i * size:(i + 1) * size], features)
            return self._micro_gradients(part, totals)

        first = micro(0)

        def body(i, acc):
            new = micro(i)
            return i + 1, tf.nest.map_structure(tf.add, acc, new)

        _, total = tf.while_loop(lambda i, acc: i < k, body, (tf.constant(1), first))
        return total

    def _replica_step(self, features):
        ctx = tf.distribute.get_replica_context()
        totals = dict(self.task.totals_fn(features)) if self.task.totals_fn else {}
        totals["examples"] = _batch_size(features)
        totals = {k: tf.cast(v, tf.float32) for k, v in totals.items()}
        totals = ctx.all_reduce(SUM, totals)
        loss, metrics, dense, squares = self._compute(features, totals)
        loss, metrics, dense = ctx.all_reduce(SUM, (loss, metrics, dense))
        squares = ctx.all_reduce(SUM, squares)
        norm = tf.sqrt(tf.add_n([sq if is_slices else tf.reduce_sum(tf.square(g))
                                 for g, sq, is_slices in zip(dense, squares, self._slice_flags)]))
        finite = tf.math.is_finite(norm)
        if self.clip_norm:
            scale = self.clip_norm * tf.minimum(1.0 / norm, 1.0 / self.clip_norm)
            dense = [g * scale for g in dense]
        if self.fp16:
            self._update_loss_scale(finite)
        lr = self.optimizer.learning_rate
        self.optimizer.apply_reduced(dense, self.model.trainable_variables,
                                     finite if self.fp16 else None)
        return loss, metrics, lr, norm

    def _update_loss_scale(self, finite):
        grown = tf.logical_and(finite, self.good_steps + 1 >= 2000)
        new_scale = tf.where(finite, tf.where(grown, self.loss_scale * 2.0, self.loss_scale),
                             tf.maximum(self.loss_scale / 2.0, 1.0))
        new_good = tf.where(tf.logical_and(finite, tf.logical_not(grown)), self.good_steps + 1,
                            tf.zeros_like(self.good_steps))
        self.loss_scale.assign(new_scale)
        self.good_steps.assign(new_good)

    def _distributed_step(self, iterator):
        features = next(iterator)
        loss, metrics, lr, norm = self.runtime.strategy.run(self._replica_step, args=(features,))
        strategy = self.runtime.strategy
        first = lambda t: strategy.experimental_local_results(t)[0]  # identical after all_reduce
        return (first(loss), tf.nest.map_structure(first, metrics), first(lr), first(norm))

    def __call__(self, iterator):
        return self._step(iterator)


class EvalStep:
    """Forward pass + `metric_fn` sums over replicas (no gradients)."""

    def __init__(self, runtime, model, task: Objective):
        self.runtime = runtime
        self.model = model
        self.task = task
        self._step = tf.function(self._distributed_step, autograph=False)

    def _replica_step(self, features):
        outputs = self.model(features, training=False, **self.task.call_kwargs)
        pairs = _pairs(self.task.metric_fn(outputs, features))
        return tf.distribute.get_replica_context().all_reduce(SUM, pairs)

    def _distributed_step(self, iterator):
        result = self.runtime.strategy.run(self._replica_step, args=(next(iterator),))
        strategy = self.runtime.strategy
        return tf.nest.map_structure(lambda t: strategy.experimental_local_results(t)[0], result)

    def __call__(self, iterator):
        return self._step(iterator)
