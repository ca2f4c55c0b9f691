"""Fine-tuning loop shared by SQuAD and RACE on top of `albert_tf.training`.

`train` runs the generic Trainer (runtime, AdamW with the original's schedule, checkpoints with
resume) and calls an `EvalLoop` after every checkpoint, which reproduces the original runners'
eval loop: score each checkpoint, copy the best to `model.ckpt-best`, write `eval_results.txt`
(`key = value` lines, `saved … to …`, `best <key> = …`, separators) and finally re-score the
best and note its step.
"""

from __future__ import annotations

import logging
import os
import re

import tensorflow as tf

from albert_tf.io_utils import write_text_atomically
from albert_tf.optimization import create_optimizer
from albert_tf.training import Runtime, RuntimeConfig, Task, Trainer
from albert_tf.training.checkpoints import checkpoint_step, copy_checkpoint, init_from_checkpoint

_STEP = re.compile(r"model\.ckpt-(\d+)\.index$")
BEST = "model.ckpt-best"


def make_runtime(runtime_config: RuntimeConfig | None = None) -> Runtime:
    return Runtime(runtime_config or RuntimeConfig())


def train(runtime, model, loss_fn, dataset_fn, output_dir, global_batch_size: int,
          num_train_steps: int, num_warmup_steps: int, learning_rate: float,
          save_checkpoints_steps: int, init_checkpoint=None, on_checkpoint=None):
    """Trains `model` (built inside `runtime.scope()`) with AdamW, as the original fine-tuners.
    `dataset_fn(input_context)` returns per-replica batches; `loss_fn(outputs, features)`."""
    with runtime.scope():
        optimizer = create_optimizer(learning_rate, num_train_steps, num_warmup_steps, "adamw")
    task = Task(lambda outputs, features: (loss_fn(outputs, features), {}))
    trainer = Trainer(runtime, model, optimizer, task, output_dir, keep_checkpoint_max=None)
    return trainer.train(dataset_fn, global_batch_size, num_train_steps,
                         save_checkpoints_steps=save_checkpoints_steps,
                         init_checkpoint=init_checkpoint, on_checkpoint=on_checkpoint)


def load_weights(model, prefix) -> str:
    """Model weights from an original (TF1-named) checkpoint or one of ours."""
    return init_from_checkpoint(model, prefix)


def checkpoints_by_step(output_dir) -> list:
    """[(step, prefix)] of `model.ckpt-<step>` in step order (`model.ckpt-best` excluded)."""
    found = []
    for name in tf.io.gfile.listdir(output_dir) if tf.io.gfile.isdir(output_dir) else []:
        match = _STEP.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(output_dir, name[:-len(".index")])))
    return sorted(found)


class EvalLoop:
    """`evaluate(prefix)` → {name: value}; the best by `key` (higher is better) is kept."""

    def __init__(self, output_dir, evaluate, key: str, results_name: str = "eval_results.txt"):
        self.output_dir, self.evaluate, self.key = os.fspath(output_dir), evaluate, key
        self.path = os.path.join(self.output_dir, results_name)
        self.best_prefix = os.path.join(self.output_dir, BEST)
        self.lines: list = []
        self.best_value, self.best_result = None, None
        if tf.io.gfile.exists(self.best_prefix + ".index"):  # seed from an earlier run
            self.best_result = evaluate(self.best_prefix)
            self.best_value = self.best_result[key]

    def _write(self):
        write_text_atomically(self.path, "\n".join(self.lines) + "\n")

    def on_checkpoint(self, step, prefix) -> None:
        if prefix is None:
            return
        result = self.evaluate(prefix)
        logging.info("step %d: %s", step, result)
        self.lines += [f"{name} = {value}" for name, value in sorted(result.items())]
        if self.best_value is None or result[self.key] > self.best_value:
            self.best_value, self.best_result = result[self.key], result
            for source, target in copy_checkpoint(prefix, self.best_prefix):
                self.lines.append(f"saved {source} to {target}")
        self.lines += [f"best {self.key} = {self.best_value}", "=" * 50]
        self._write()

    def finish(self) -> dict:
        """Re-scores `model.ckpt-best` and appends its step; returns its results."""
        if tf.io.gfile.exists(self.best_prefix + ".index"):
            self.best_result = self.evaluate(self.best_prefix)
            self.lines += [f"{name} = {value}" for name, value in sorted(self.best_result.items())]
            self.lines.append(f"best perf happened at step: {checkpoint_step(self.best_prefix)}")
            self._write()
        return self.best_result or {}


def evaluate_all(output_dir, evaluate, key: str) -> dict:
    """The eval loop over checkpoints already in `output_dir` (evaluation without training)."""
    loop = EvalLoop(output_dir, evaluate, key)
    for step, prefix in checkpoints_by_step(output_dir):
        loop.on_checkpoint(step, prefix)
    return loop.finish()


def inference_fn(model):
    """model(features, training=False) as one tf.function per model (built once, so evaluating
    many checkpoints does not retrace)."""
    if getattr(model, "_albert_inference_fn", None) is None:
        model._albert_inference_fn = tf.function(lambda features: model(features, training=False),
                                                 reduce_retracing=True)
    return model._albert_inference_fn
