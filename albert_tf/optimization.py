"""The original's optimizers and learning-rate schedule as Keras 3 optimizers.

`create_optimizer(...)` gives what the original's `optimization.create_optimizer` builds:
linear warmup over a polynomial decay (computed from step 0), AdamW or LAMB with β1=0.9,
β2=0.999, ε=1e-6, decoupled weight decay 0.01 that skips `LayerNorm`/`layer_norm`/`bias`
variables, and clipping of the *global* gradient norm at 1.0.

Keras' own `AdamW` and `Lamb` bias-correct m and v (and put ε inside the learning-rate
correction), and their decay is applied separately from the update; the original does neither,
so those classes cannot reproduce its checkpoints. These classes write the original's update.
"""

from __future__ import annotations

import re

import keras
import tensorflow as tf

DEFAULT_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias")


class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
    """lr(t) = init_lr·(1 − min(t, T)/T)^power, overridden by init_lr·u/W while
    u = t − start_warmup_step < W (so lr(0) = 0, a small jump where warmup ends, and a negative
    rate before `start_warmup_step`, all as the original). Computed in float32 like TF1."""

    def __init__(self, init_lr, num_train_steps, num_warmup_steps=0, poly_power=1.0,
                 start_warmup_step=0):
        self.init_lr = float(init_lr)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.poly_power = float(poly_power)
        self.start_warmup_step = int(start_warmup_step)
        if self.num_train_steps <= 0:
            raise ValueError(f"num_train_steps must be positive, got {num_train_steps}")

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        total = tf.constant(float(self.num_train_steps), tf.float32)
        fraction = tf.minimum(step, total) / total
        decayed = self.init_lr * tf.pow(1.0 - fraction, self.poly_power)
        if not self.num_warmup_steps:
            return decayed
        since_start = tf.cast(step, tf.int32) - self.start_warmup_step
        warmup = self.init_lr * (tf.cast(since_start, tf.float32) / float(self.num_warmup_steps))
        return tf.where(since_start < self.num_warmup_steps, warmup, decayed)

    def get_config(self):
        return {"init_lr": self.init_lr, "num_train_steps": self.num_train_steps,
                "num_warmup_steps": self.num_warmup_steps, "poly_power": self.poly_power,
                "start_warmup_step": self.start_warmup_step}


def variable_name(variable) -> str:
    """The name the exclusion patterns are searched in: the Keras path (`albert/.../LayerNorm/
    gamma`, `.../output_bias`), or a tf.Variable's name without `:0`."""
    path = getattr(variable, "path", None)
    if path:
        return path
    name = getattr(variable, "name", "")
    return name[:-2] if name.endswith(":0") else name


class AdamWeightDecay(keras.optimizers.Optimizer):
    """The original's AdamWeightDecayOptimizer: m, v without bias correction, update =
    m/(√v + ε) + decay·w (decay skipped for variables whose name matches an exclusion pattern
    by regex search), w ← w − lr·update.

    Gradients are summed over replicas and then clipped by their global norm (`clip_norm`)
    before the update, so one device, MirroredStrategy and multi-worker runs apply the same
    step for the same global batch. `skip_nonfinite=True` leaves every variable unchanged on a
    step whose gradient norm is not finite (dynamic loss scaling uses it).
    """

    def __init__(self, learning_rate=0.001, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None, clip_norm=None,
                 skip_nonfinite=False, name="adam_weight_decay", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.weight_decay_rate = float(weight_decay_rate)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.exclude_from_weight_decay = tuple(exclude_from_weight_decay or ())
        self.clip_norm = clip_norm
        self.skip_nonfinite = skip_nonfinite
        # Set by albert_tf.training, whose step sums and clips gradients itself.
        self.external_reduction = False
        # Set by albert_tf.training under --recompute: each variable's update waits for the
        # previous one's, so one variable's temporaries (m, v, the update: weight-sized) are
        # alive at a time instead of every variable's at once (2.5 GB of xxlarge's step).
        self.serial_updates = False

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m, self._v = self.add_optimizer_variables(var_list, ["adam_m", "adam_v"])
        self._decays = [self._decays_variable(variable_name(v)) for v in var_list]
        self._adapts = [self._adapts_variable(variable_name(v)) for v in var_list]

    def _decays_variable(self, name):
        if not self.weight_decay_rate:
            return False
        return not any(re.search(p, name) for p in self.exclude_from_weight_decay)

    def _adapts_variable(self, name):
        return False

    def decays(self, variable) -> bool:
        """Whether weight decay applies to this (built-for) variable."""
        return self._decays[self._get_variable_index(variable)]

    def apply_reduced(self, grads, trainable_variables, finite=None):
        """Applies gradients that are already summed over replicas and clipped (what the
        training loop does); `finite` (a bool tensor) skips the update when False."""
        self._pending_finite = finite
        try:
            self.apply(grads, trainable_variables)
        finally:
            self._pending_finite = None

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # Keras's (protected) TF-backend hook between apply() and update_step(): the only place
        # to sum across replicas before clipping, which no public optimizer option does.
        variables = [v.value if isinstance(v, keras.Variable) else v for v in trainable_variables]
        finite = getattr(self, "_pending_finite", None)
        if not self.external_reduction:
            # Keras clips before the cross-replica sum; the original clips the whole gradient,
            # so sum first (a no-op on one device), then clip, then update each variable.
            reduced = self._all_reduce_sum_gradients(list(zip(grads, variables)))
            grads = [g for g, _ in reduced]
            # A gather's gradient comes as IndexedSlices with one row per looked-up token
            # (duplicates not summed); like TF1's clip_by_global_norm, the norm counts those
            # rows separately. Only then are they summed into a dense tensor.
            if self.clip_norm:
                grads, norm = tf.clip_by_global_norm(grads, self.clip_norm)
            else:
                norm = tf.linalg.global_norm(grads)
            grads = [tf.convert_to_tensor(g) for g in grads]
            if self.skip_nonfinite:
                finite = tf.math.is_finite(norm)
        # As Keras's own TF optimizer does: no public API tells whether the strategy updates in
        # replica context (the public ReplicaContext.merge_call would always add a sync point).
        tf.__internal__.distribute.interim.maybe_merge_call(
            self._update_all, self._distribution_strategy, list(zip(grads, variables)),
            learning_rate, finite)

    def _update_all(self, distribution, grads_and_vars, learning_rate, finite):
        # The scalars once per step rather than a constant per variable and use: the update is
        # traced once per variable, and each op costs tracing time (same values, same result).
        scalars = self._scalars()
        after = []
        for grad, var in grads_and_vars:
            with tf.control_dependencies(after if self.serial_updates else []):
                done = distribution.extended.update(
                    var, self._update_one, args=(grad, learning_rate, finite, scalars),
                    group=False)
            after = [t for t in tf.nest.flatten(done) if t is not None]

    def _scalars(self) -> dict:
        values = {"beta_1": self.beta_1, "one_minus_beta_1": 1.0 - self.beta_1,
                  "beta_2": self.beta_2, "one_minus_beta_2": 1.0 - self.beta_2,
                  "epsilon": self.epsilon, "weight_decay_rate": self.weight_decay_rate,
                  "zero": 0.0, "one": 1.0}
        return {name: tf.constant(value, tf.float32) for name, value in values.items()}

    def _direction(self, gradient, weight, index, scalars):
        """(next m, next v, update) from the gradient and the variable's value `weight`."""
        c = {name: tf.cast(value, weight.dtype) for name, value in scalars.items()}
        m, v = self._m[index].value, self._v[index].value
        next_m = c["beta_1"] * m + c["one_minus_beta_1"] * gradient
        next_v = c["beta_2"] * v + c["one_minus_beta_2"] * tf.square(gradient)
        update = next_m / (tf.sqrt(next_v) + c["epsilon"])
        if self._decays[index]:
            update += c["weight_decay_rate"] * weight
        return next_m, next_v, update

    def _scaled_update(self, index, update, weight, lr, scalars):
        return lr * update

    def update_step(self, gradient, variable, learning_rate):
        self._update_one(variable, gradient, learning_rate, None, self._scalars())

    def _update_one(self, variable, gradient, learning_rate, finite, scalars):
        gradient = tf.cast(gradient, variable.dtype)
        lr = tf.cast(learning_rate, variable.dtype)
        index = self._get_variable_index(variable)
        weight = tf.convert_to_tensor(variable)  # read once: every use below sees this value
        next_m, next_v, update = self._direction(gradient, weight, index, scalars)
        next_w = weight - self._scaled_update(index, update, weight, lr, scalars)
        m, v = self._m[index], self._v[index]
        if finite is not None:
            next_w = tf.where(finite, next_w, weight)
            next_m = tf.where(finite, next_m, m.value)
            next_v = tf.where(finite, next_v, v.value)
        self.assign(variable, next_w)
        self.assign(m, next_m)
        self.assign(v, next_v)
        return [next_w, next_m, next_v]

    def get_config(self):
        config = super().get_config()
        config.update(weight_decay_rate=self.weight_decay_rate, beta_1=self.beta_1,
                      beta_2=self.beta_2, epsilon=self.epsilon,
                      exclude_from_weight_decay=list(self.exclude_from_weight_decay),
                      clip_norm=self.clip_norm, skip_nonfinite=self.skip_nonfinite)
        return config


class Lamb(AdamWeightDecay):
    """The original's LAMBOptimizer: the AdamW update above, scaled per variable by the trust
    ratio ‖w‖/‖update‖ (1 when either is 0, never clipped). Variables matching
    `exclude_from_layer_adaptation` (default: the decay exclusions) get ratio 1."""

    def __init__(self, learning_rate=0.001, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, clip_norm=None, skip_nonfinite=False,
                 name="lamb", **kwargs):
        super().__init__(learning_rate, weight_decay_rate, beta_1, beta_2, epsilon,
                         exclude_from_weight_decay, clip_norm, skip_nonfinite, name=name,
                         **kwargs)
        if exclude_from_layer_adaptation is None:
            exclude_from_layer_adaptation = self.exclude_from_weight_decay
        self.exclude_from_layer_adaptation = tuple(exclude_from_layer_adaptation)

    def _adapts_variable(self, name):
        return not any(re.search(p, name) for p in self.exclude_from_layer_adaptation)

    def _scaled_update(self, index, update, weight, lr, scalars):
        if not self._adapts[index]:
            return lr * update
        zero, one = (tf.cast(scalars[name], weight.dtype) for name in ("zero", "one"))
        # The Euclidean norms as tf.norm computes them, in fewer ops.
        w_norm = tf.sqrt(tf.reduce_sum(tf.square(weight)))
        u_norm = tf.sqrt(tf.reduce_sum(tf.square(update)))
        ratio = tf.where(w_norm > zero, tf.where(u_norm > zero, w_norm / u_norm, one), one)
        return ratio * lr * update

    def get_config(self):
        config = super().get_config()
        config["exclude_from_layer_adaptation"] = list(self.exclude_from_layer_adaptation)
        return config


def create_optimizer(init_lr, num_train_steps, num_warmup_steps, optimizer="adamw",
                     poly_power=1.0, start_warmup_step=0, weight_decay_rate=0.01,
                     beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                     exclude_from_weight_decay=DEFAULT_EXCLUSIONS, clip_norm=1.0,
                     skip_nonfinite=False):
    """The original's `create_optimizer` as a Keras optimizer (create it inside the strategy
    scope). Its `iterations` is the global step: the rate used by update k (k = 0, 1, ...) is
    lr(k), the original's intended schedule (its ResourceVariable behaviour)."""
    schedule = WarmupPolynomialDecay(init_lr, num_train_steps, num_warmup_steps, poly_power,
                                     start_warmup_step)
    common = dict(learning_rate=schedule, weight_decay_rate=weight_decay_rate, beta_1=beta_1,
                  beta_2=beta_2, epsilon=epsilon,
                  exclude_from_weight_decay=list(exclude_from_weight_decay),
                  clip_norm=clip_norm, skip_nonfinite=skip_nonfinite)
    if optimizer == "adamw":
        return AdamWeightDecay(**common)
    if optimizer == "lamb":
        return Lamb(**common)
    raise ValueError(f"unsupported optimizer {optimizer!r}: use 'adamw' or 'lamb'")
