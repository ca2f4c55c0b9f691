"""Fine-tuning steps and the checkpoint-by-checkpoint evaluation shared by SQuAD and RACE.

Stand-in until `albert_tf.training` (the generic runtime) lands: the smallest loop that trains
with the original's optimizer (`albert_tf.optimization.create_optimizer`, AdamW, clip 1.0) and
saves TF1-named `model.ckpt-<step>` checkpoints the original code can read.
"""

from __future__ import annotations

import logging
import os
import re

import tensorflow as tf

from albert_tf import checkpoint
from albert_tf.optimization import create_optimizer

_STEP = re.compile(r"model\.ckpt-(\d+)\.index$")


def train(model, loss_fn, dataset, output_dir, num_train_steps: int, num_warmup_steps: int,
          learning_rate: float, save_checkpoints_steps: int) -> str:
    """Runs `num_train_steps` updates; checkpoints every `save_checkpoints_steps` and at the end.
    Returns the last checkpoint prefix."""
    optimizer = create_optimizer(learning_rate, num_train_steps, num_warmup_steps, "adamw")

    @tf.function
    def step(features):
        with tf.GradientTape() as tape:
            loss = loss_fn(model(features, training=True), features)
        variables = model.trainable_variables
        gradients = tape.gradient(loss, variables)
        # the pooler is unused by span heads: it has no gradient and must not be updated
        optimizer.apply_gradients([(g, v) for g, v in zip(gradients, variables) if g is not None])
        return loss

    last = None
    batches = iter(dataset)
    for index in range(1, num_train_steps + 1):
        loss = step(next(batches))
        if index % 100 == 0 or index == 1:
            logging.info("step %d loss %.4f", index, float(loss))
        if index % save_checkpoints_steps == 0 or index == num_train_steps:
            last = checkpoint.save_tf1_checkpoint(
                model, os.path.join(output_dir, f"model.ckpt-{index}"), global_step=index)
    return last


def checkpoints_by_step(output_dir) -> list:
    """[(step, prefix)] of `model.ckpt-<step>` in step order (`model.ckpt-best` excluded)."""
    found = []
    for name in tf.io.gfile.listdir(output_dir) if tf.io.gfile.isdir(output_dir) else []:
        match = _STEP.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(output_dir, name[:-len(".index")])))
    return sorted(found)


def checkpoint_step(prefix) -> int:
    reader = tf.train.load_checkpoint(prefix)
    return int(reader.get_tensor("global_step")) if reader.has_tensor("global_step") else 0


def copy_checkpoint(prefix, target_prefix) -> list:
    """Copies the checkpoint's files (index last) to `target_prefix`; returns the copies."""
    copied = []
    for suffix in (".data-00000-of-00001", ".index", ".meta"):
        if tf.io.gfile.exists(prefix + suffix):
            tf.io.gfile.copy(prefix + suffix, target_prefix + suffix, overwrite=True)
            copied.append((prefix + suffix, target_prefix + suffix))
    return copied


def evaluate_all(output_dir, evaluate, key: str, results_name: str = "eval_results.txt") -> dict:
    """The original's eval loop, run after training: seed with `model.ckpt-best` if present,
    evaluate each checkpoint in step order, keep the best by `key` as `model.ckpt-best`, then
    re-evaluate the best and note its step. `evaluate(prefix)` → {name: value}."""
    best_prefix = os.path.join(output_dir, "model.ckpt-best")
    best_value, best_result = None, None
    lines = []
    if tf.io.gfile.exists(best_prefix + ".index"):
        best_result = evaluate(best_prefix)
        best_value = best_result[key]
    for step, prefix in checkpoints_by_step(output_dir):
        result = evaluate(prefix)
        lines += [f"{name} = {value}" for name, value in sorted(result.items())]
        if best_value is None or result[key] > best_value:
            best_value, best_result = result[key], result
            for source, target in copy_checkpoint(prefix, best_prefix):
                lines.append(f"saved {source} to {target}")
        lines += [f"best {key} = {best_value}", "=" * 50]
    if best_result is not None and tf.io.gfile.exists(best_prefix + ".index"):
        final = evaluate(best_prefix)
        lines += [f"{name} = {value}" for name, value in sorted(final.items())]
        lines.append(f"best perf happened at step: {checkpoint_step(best_prefix)}")
        best_result = final
    path = os.path.join(output_dir, results_name)
    tmp = f"{path}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(tmp, "w") as writer:
        writer.write("\n".join(lines) + "\n")
    tf.io.gfile.rename(tmp, path, overwrite=True)
    return best_result or {}


def inference_fn(model):
    """model(features, training=False) as one tf.function per model (built once, so evaluating
    many checkpoints does not retrace)."""
    if getattr(model, "_albert_inference_fn", None) is None:
        model._albert_inference_fn = tf.function(lambda features: model(features, training=False),
                                                 reduce_retracing=True)
    return model._albert_inference_fn
