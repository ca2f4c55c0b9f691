"""What `run_pretraining.py` does, as a library call: `run_pretraining(PretrainingOptions(...))`."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.data.pretraining_dataset import dataset_fn, input_files
from albert_tf.optimization import create_optimizer
from albert_tf.training.checkpoints import (BestCheckpointKeeper, checkpoint_step,
                                            resolve_checkpoint)
from albert_tf.training.loop import Trainer
from albert_tf.training.pretraining import pretraining_task
from albert_tf.io_utils import write_text_atomically
from albert_tf.training.runtime import Runtime, RuntimeConfig


@dataclasses.dataclass
class PretrainingOptions:
    """The original's flags (same names and defaults) plus the TF2 runtime ones."""

    albert_config_file: str
    input_file: str
    output_dir: str
    init_checkpoint: str | None = None
    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    do_train: bool = True
    do_eval: bool = False
    train_batch_size: int = 4096
    eval_batch_size: int = 64
    optimizer: str = "lamb"
    learning_rate: float = 0.00176
    poly_power: float = 1.0
    num_train_steps: int = 125000
    num_warmup_steps: int = 3125
    start_warmup_step: int = 0
    save_checkpoints_steps: int = 5000
    keep_checkpoint_max: int = 5
    iterations_per_loop: int = 1000
    max_eval_steps: int = 100
    use_tpu: bool = False
    tpu_name: str | None = None
    tpu_zone: str | None = None
    gcp_project: str | None = None
    master: str | None = None
    num_tpu_cores: int = 8
    init_from_group0: bool = False
    masked_lm_budget: int = 0
    distribution_strategy: str = "one_device"
    mixed_precision: str = "none"
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
    log_every_steps: int = 100
    shuffle_seed: int | None = None


def _check(options: PretrainingOptions):
    if not options.do_train and not options.do_eval:
        raise ValueError("At least one of `do_train` or `do_eval` must be True.")
    if options.masked_lm_budget:
        raise ValueError("--masked_lm_budget is not supported: the original never implemented "
                         "on-the-fly masking (its model reads the masked_lm_* features)")
    if options.optimizer not in ("lamb", "adamw"):
        raise ValueError(f"--optimizer must be lamb or adamw, got {options.optimizer!r}")


def runtime_config(options: PretrainingOptions) -> RuntimeConfig:
    return RuntimeConfig.from_options(options)


def format_eval_results(results: dict) -> list[str]:
    """`key = value` lines in sorted key order, values printed as the original's float32."""
    lines = []
    for key in sorted(results):
        value = results[key]
        text = str(int(value)) if key == "global_step" else str(np.float32(value))
        lines.append(f"{key} = {text}")
    return lines


def run_pretraining(options: PretrainingOptions, runtime: Runtime | None = None) -> dict:
    """Trains and/or evaluates as the original script; returns the eval results (or {})."""
    _check(options)
    config = AlbertConfig.from_json_file(options.albert_config_file)
    files = input_files(options.input_file)
    tf.io.gfile.makedirs(options.output_dir)
    runtime = runtime or Runtime(runtime_config(options))
    logging.info("runtime: %s", runtime.describe())
    if runtime.is_chief:
        # export_checkpoints.py and later evaluations rebuild the model from this file.
        write_text_atomically(os.path.join(options.output_dir, "albert_config.json"),
                          config.to_json_string())
    from albert_tf.models import AlbertPretrainer

    with runtime.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(
            options.learning_rate, options.num_train_steps, options.num_warmup_steps,
            options.optimizer, options.poly_power, options.start_warmup_step,
            skip_nonfinite=options.mixed_precision == "fp16")
    trainer = Trainer(runtime, model, optimizer, pretraining_task(), options.output_dir,
                      options.keep_checkpoint_max)
    if options.do_train:
        trainer.train(
            dataset_fn(files, options.max_seq_length, options.max_predictions_per_seq,
                       options.train_batch_size, True, seed=options.shuffle_seed),
            options.train_batch_size, options.num_train_steps, options.save_checkpoints_steps,
            options.log_every_steps, options.init_checkpoint, options.init_from_group0)
    if not options.do_eval:
        return {}
    if options.do_train:
        evaluated, step = tf.train.latest_checkpoint(options.output_dir), trainer.step
    else:
        source = options.init_checkpoint or options.output_dir
        evaluated = resolve_checkpoint(source)
        if options.init_checkpoint:
            logging.info("evaluating %s", trainer.restore(evaluated))
        else:
            logging.info("evaluating %s", trainer.restore())
        step = checkpoint_step(evaluated)
    results = trainer.evaluate(
        dataset_fn(files, options.max_seq_length, options.max_predictions_per_seq,
                   options.eval_batch_size, False),
        options.max_eval_steps)
    results = {"global_step": step, **results}
    if runtime.is_chief:
        write_eval_results(options.output_dir, results)
    return results


def write_eval_results(output_dir, results, keeper: BestCheckpointKeeper | None = None):
    """eval_results.txt as the original writes it, including its `model.ckpt-best` copy of the
    latest checkpoint (with a `saved <src> to <dst>` line per file after `global_step`)."""
    keeper = keeper or BestCheckpointKeeper(output_dir, "masked_lm_accuracy")
    latest = tf.train.latest_checkpoint(output_dir)
    lines = []
    for line in format_eval_results(results):
        lines.append(line)
        if line.startswith("global_step") and latest:
            for src, dst in keeper.update(float(results["masked_lm_accuracy"]), latest):
                lines.append(f"saved {src} to {dst}")
    for line in lines:
        logging.info("  %s", line)
    write_text_atomically(os.path.join(output_dir, "eval_results.txt"), "\n".join(lines) + "\n")
    return lines
