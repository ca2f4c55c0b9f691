"""The run flow behind `run_classifier.py`: train, evaluate checkpoints, predict test, export.

It follows the original's flow and files (spec §8.6) with its traps removed: cached features
are keyed (never stale), `model.ckpt-best` is a copy (nothing is renamed or deleted), and
re-running evaluation next to an existing best checkpoint works.
"""

from __future__ import annotations

from albert_tf.errors import UsageError
import dataclasses
import math
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf import tokenization
from albert_tf.config import AlbertConfig
from albert_tf.tasks.classifier import AlbertClassifier, per_example_loss
from albert_tf.tasks.glue.export import export_classifier
from albert_tf.tasks.glue import features as F
from albert_tf.tasks.glue import io as glue_io
from albert_tf.tasks.glue import metrics as M
from albert_tf.tasks.glue.processors import get_processor


class GlueRunError(UsageError):
    """Flags that cannot work together, or a missing input the run needs."""


@dataclasses.dataclass
class GlueRunConfig:
    """The original's `run_classifier.py` flags (same names and defaults) plus the runtime
    options shared with `run_pretraining.py`."""

    data_dir: str
    task_name: str
    output_dir: str
    albert_config_file: str | None = None
    vocab_file: str | None = None
    spm_model_file: str | None = None
    cached_dir: str | None = None
    init_checkpoint: str | None = None
    albert_hub_module_handle: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 512
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    train_step: int = 1000
    warmup_step: int = 0
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    iterations_per_loop: int = 1000
    use_tpu: bool = False
    optimizer: str = "adamw"
    tpu_name: str | None = None
    tpu_zone: str | None = None
    gcp_project: str | None = None
    master: str | None = None
    num_tpu_cores: int = 8
    export_dir: str | None = None
    threshold_to_export: float = float("nan")
    # Ours (as run_pretraining.py).
    distribution_strategy: str = "one_device"
    mixed_precision: str = "none"
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
    log_every_steps: int = 100
    shuffle_buffer: int = 100
    seed: int | None = None


CHECKPOINT_RE = re.compile(r"^model\.ckpt-(\d+)\.index$")


def list_checkpoints(directory: str) -> list[tuple[int, str]]:
    """(step, prefix) of `model.ckpt-<step>` in `directory`, ascending; `-best` is skipped."""
    if not tf.io.gfile.isdir(directory):
        return []
    found = []
    for name in tf.io.gfile.listdir(directory):
        match = CHECKPOINT_RE.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, name[:-len(".index")])))
    return sorted(found)


class GlueRun:
    def __init__(self, cfg: GlueRunConfig):
        self.cfg = cfg
        self._validate()
        self.processor = get_processor(cfg.task_name, use_spm=bool(cfg.spm_model_file),
                                       do_lower_case=cfg.do_lower_case)
        self.task = self.processor.name
        self.labels = self.processor.get_labels()
        self.regression = self.processor.task.is_regression
        self.config = AlbertConfig.from_json_file(cfg.albert_config_file)
        F.check_max_seq_length(cfg.max_seq_length, self.config.max_position_embeddings)
        self.tokenizer = tokenization.FullTokenizer(cfg.vocab_file, cfg.do_lower_case,
                                                    cfg.spm_model_file)
        self.cached_dir = cfg.cached_dir or cfg.output_dir
        tf.io.gfile.makedirs(cfg.output_dir)
        self._runtime = None
        self._model = None
        self._predict_fn = None
        self._eval = None

    # ------------------------------------------------------------------ set-up
    def _validate(self):
        cfg = self.cfg
        if not (cfg.do_train or cfg.do_eval or cfg.do_predict or cfg.export_dir):
            raise GlueRunError("At least one of `do_train`, `do_eval`, `do_predict` or "
                               "`export_dir` must be set.")
        if cfg.albert_hub_module_handle and not cfg.albert_config_file:
            raise GlueRunError(
                "--albert_hub_module_handle: TF-Hub modules are TF1 graphs that Keras 3 cannot "
                "fine-tune; pass --albert_config_file and --init_checkpoint=<module>/variables/"
                "variables (the module's weights are a TF1 checkpoint this package loads)")
        if not cfg.albert_config_file:
            raise GlueRunError("--albert_config_file is required")
        if not cfg.spm_model_file and not cfg.vocab_file:
            raise GlueRunError("--spm_model_file (or --vocab_file for WordPiece) is required")
        if cfg.optimizer not in ("adamw", "lamb"):
            raise GlueRunError(f"--optimizer must be adamw or lamb, got {cfg.optimizer!r}")

    @property
    def runtime(self):
        if self._runtime is None:
            from albert_tf.training import Runtime, RuntimeConfig

            self._runtime = Runtime(RuntimeConfig.from_options(self.cfg))
        return self._runtime

    @property
    def model(self) -> AlbertClassifier:
        if self._model is None:
            with self.runtime.scope():
                self._model = AlbertClassifier(self.config, len(self.labels))
        return self._model

    def features(self, split: str, examples, file_name: str) -> tuple[str, int]:
        path = os.path.join(self.cached_dir, file_name)
        key = F.cache_key(self.task, split, self.processor.split_path(self.cfg.data_dir, split),
                          self.cfg.max_seq_length, self.tokenizer, self.cfg.do_lower_case)
        return F.cached_features(examples, self.labels, self.cfg.max_seq_length, self.tokenizer,
                                 path, self.task, key)

    def _input_fn(self, path, training):
        return F.input_fn_builder(path, self.cfg.max_seq_length, training, drop_remainder=training,
                                  regression=self.regression, shuffle_buffer=self.cfg.shuffle_buffer,
                                  seed=self.cfg.seed)

    # ------------------------------------------------------------------ train
    def _loss_fn(self, outputs, features):
        losses = per_example_loss(outputs["logits"], features["label_ids"], self.regression)
        n = tf.cast(tf.size(losses), tf.float32)
        if self.regression:
            return tf.reduce_mean(losses), {}
        correct = tf.reduce_sum(tf.cast(tf.equal(outputs["predictions"],
                                                 tf.cast(features["label_ids"], tf.int32)), tf.float32))
        return tf.reduce_mean(losses), {"accuracy": (correct, n)}

    def train(self):
        from albert_tf.optimization import create_optimizer
        from albert_tf.training import Task, Trainer

        cfg = self.cfg
        examples = self.processor.get_train_examples(cfg.data_dir)
        path, count = self.features("train", examples, f"{self.task}_train.tf_record")
        logging.info("training on %d examples, batch %d, %d steps", count, cfg.train_batch_size,
                     cfg.train_step)
        model = self.model
        with self.runtime.scope():
            optimizer = create_optimizer(cfg.learning_rate, cfg.train_step, cfg.warmup_step,
                                         cfg.optimizer)
        # 0 keeps every checkpoint (what the original's RunConfig did whatever the flag said).
        trainer = Trainer(self.runtime, model, optimizer, self._task(Task), cfg.output_dir,
                          keep_checkpoint_max=cfg.keep_checkpoint_max or None)
        input_fn = self._input_fn(path, training=True)

        def dataset_fn(ctx):
            dataset = input_fn(ctx.get_per_replica_batch_size(cfg.train_batch_size))
            if ctx.num_input_pipelines > 1:
                dataset = dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
            return dataset

        on_checkpoint = None
        if cfg.do_eval:
            evaluator = self._evaluator()
            on_checkpoint = lambda step, path: evaluator.evaluate_current(step, path)  # noqa: E731
        if cfg.init_checkpoint and not list_checkpoints(cfg.output_dir):
            self.load(cfg.init_checkpoint)  # (a resumed run restores its own latest instead)
        trainer.train(dataset_fn, cfg.train_batch_size, cfg.train_step,
                      save_checkpoints_steps=cfg.save_checkpoints_steps,
                      log_every_steps=cfg.log_every_steps, on_checkpoint=on_checkpoint)
        return trainer

    def _task(self, task_cls):
        return task_cls(self._loss_fn)

    # ------------------------------------------------------------------ eval / predict
    def predict_logits(self, path, batch_size) -> dict[str, np.ndarray]:
        """Runs the model over a feature file; returns numpy logits/probabilities/predictions
        with labels and is_real_example, and `loss` (the mean of the per-batch mean losses)."""
        if self._predict_fn is None:
            model = self.model
            self._predict_fn = tf.function(lambda features: model(features, training=False),
                                           jit_compile=bool(self.cfg.jit_compile) or None)
        collected = {k: [] for k in ("logits", "probabilities", "predictions", "label_ids",
                                     "is_real_example")}
        batch_losses = []
        for batch in self._input_fn(path, training=False)(batch_size):
            outputs = self._predict_fn(batch)
            for key in ("logits", "probabilities", "predictions"):
                collected[key].append(outputs[key].numpy())
            collected["label_ids"].append(batch["label_ids"].numpy())
            collected["is_real_example"].append(batch["is_real_example"].numpy())
            losses = per_example_loss(outputs["logits"], batch["label_ids"], self.regression)
            batch_losses.append(float(tf.reduce_mean(losses)))
        result = {k: np.concatenate(v) for k, v in collected.items()}
        result["loss"] = float(np.mean(batch_losses)) if batch_losses else float("nan")
        return result

    def _evaluator(self):
        if self._eval is None:  # one per run: training-time evaluations continue in it
            self._eval = Evaluator(self)
        return self._eval

    def evaluate(self) -> dict | None:
        return self._evaluator().evaluate_directory()

    def prediction_checkpoint(self) -> str:
        best = os.path.join(self.cfg.output_dir, "model.ckpt-best")
        if tf.io.gfile.exists(best + ".index"):
            return best
        if self.cfg.init_checkpoint:
            logging.info("no %s: using --init_checkpoint %s", best, self.cfg.init_checkpoint)
            return self.cfg.init_checkpoint
        raise GlueRunError(
            f"prediction and export use {best}, which does not exist: run --do_eval first "
            "(it keeps the best checkpoint) or pass --init_checkpoint")

    def load(self, checkpoint):
        """An original TF1 checkpoint (pretrained or fine-tuned), one of our fine-tuning
        checkpoints (encoder and head) or one of our pretraining checkpoints (encoder only)."""
        from albert_tf.training import init_from_checkpoint

        logging.info("%s", init_from_checkpoint(self.model, checkpoint))

    def predict(self) -> dict:
        cfg = self.cfg
        self.load(self.prediction_checkpoint())
        examples = self.processor.get_test_examples(cfg.data_dir)
        path, _ = self.features("test", examples, "predict.tf_record")
        out = self.predict_logits(path, cfg.predict_batch_size)
        real = out["is_real_example"] > 0
        paths = glue_io.write_predictions(
            cfg.output_dir, self.task, [e.guid for e in examples], out["probabilities"][real],
            out["predictions"][real], self.labels)
        logging.info("wrote %s", ", ".join(paths.values()))
        return paths

    def export(self) -> str:
        cfg = self.cfg
        self.load(self.prediction_checkpoint())
        threshold = None if math.isnan(cfg.threshold_to_export) else cfg.threshold_to_export
        return export_classifier(self.model, cfg.export_dir, cfg.max_seq_length,
                                 cfg.spm_model_file, cfg.do_lower_case,
                                 self.processor.task.is_pair, threshold)

    def run(self) -> dict:
        summary = {}
        if self.cfg.do_train:
            self.train()
        if self.cfg.do_eval:
            summary["eval"] = self.evaluate()
        if self.cfg.do_predict:
            summary["predict"] = self.predict()
        if self.cfg.export_dir:
            summary["export"] = self.export()
        return summary


class Evaluator:
    """Evaluates checkpoints on the dev set and keeps the best one (the original's eval loop).

    Results go to eval_results.txt (one block per checkpoint); progress to best_trial.txt so a
    re-run skips what it already evaluated. The best checkpoint is copied to model.ckpt-best.
    """

    def __init__(self, run: GlueRun):
        from albert_tf.training import BestCheckpointKeeper

        self.run = run
        cfg = run.cfg
        self.results_path = os.path.join(cfg.output_dir, "eval_results.txt")
        self.trial_path = os.path.join(cfg.output_dir, "best_trial.txt")
        self.trial = glue_io.BestTrial.read(self.trial_path)
        if self.trial.last_step < 0 and tf.io.gfile.exists(self.results_path):
            tf.io.gfile.remove(self.results_path)  # a fresh evaluation starts a fresh file
        self.metric = M.selection_metric(run.task)
        self.keeper = BestCheckpointKeeper(cfg.output_dir, metric=self.metric,
                                           initial=self.trial.best_value)
        examples = run.processor.get_dev_examples(cfg.data_dir)
        self.path, self.count = run.features("dev", examples, f"{run.task}_eval.tf_record")
        self.last = None

    def _results(self, step) -> dict:
        out = self.run.predict_logits(self.path, self.run.cfg.eval_batch_size)
        result = M.glue_metrics(self.run.task, out["logits"], out["label_ids"],
                                out["is_real_example"])
        result["loss"] = out["loss"]
        result["global_step"] = int(step)
        return result

    def evaluate_current(self, step, checkpoint_path):
        """Evaluates the model as it is now, which is `checkpoint_path` (just saved)."""
        if step <= self.trial.last_step:
            return None
        result = self._results(step)
        best_before = self.trial.best_value
        value = float(result[self.metric])
        if checkpoint_path is not None and self.keeper.update(value, checkpoint_path):
            self.trial.best_step, self.trial.best_value = int(step), value
        self.trial.last_step = int(step)
        glue_io.append_eval_results(self.results_path, result, best_before)
        self.trial.write(self.trial_path)
        logging.info("eval at step %d: %s (best %s at step %d)", step,
                     {k: v for k, v in result.items() if np.ndim(v) == 0},
                     self.trial.best_value, self.trial.best_step)
        self.last = result
        return result

    def evaluate_directory(self):
        """Evaluates every checkpoint in output_dir newer than the last evaluated one, in step
        order (with none there, `--init_checkpoint` itself is evaluated)."""
        checkpoints = [(s, p) for s, p in list_checkpoints(self.run.cfg.output_dir)
                       if s > self.trial.last_step]
        if not checkpoints and not list_checkpoints(self.run.cfg.output_dir):
            if not self.run.cfg.init_checkpoint:
                raise GlueRunError(f"--do_eval: no checkpoint in {self.run.cfg.output_dir} to "
                                   "evaluate (train first or pass --init_checkpoint)")
            self.run.load(self.run.cfg.init_checkpoint)
            result = self._results(0)
            glue_io.append_eval_results(self.results_path, result, self.trial.best_value)
            return result
        for step, prefix in checkpoints:
            self.run.load(prefix)
            self.evaluate_current(step, prefix)
        return self.last
