"""GLUE fine-tuning as a `Task` (what `run_classifier.py` runs through the driver).

The original's flow and files, with its traps removed: cached features are keyed (never stale),
`model.ckpt-best` is a copy (nothing is renamed or deleted), re-running evaluation next to an
existing best checkpoint works, and prediction never falls back to a pretrained encoder.
"""

from __future__ import annotations

import math
import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf import tokenization
from albert_tf.errors import UsageError
from albert_tf.run_config import parse_tflite_kinds
from albert_tf.models import AlbertClassifier, per_example_loss
from albert_tf.tasks.base import Task, check_model_inputs
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.eval_log import EvalLog
from albert_tf.tasks.glue import features as F
from albert_tf.tasks.glue import results as glue_results
from albert_tf.tasks.glue import metrics as M
from albert_tf.tasks.glue.config import CUSTOM_FORMATS, GlueRunConfig, GlueRunError
from albert_tf.tasks.glue.processors import get_processor
from albert_tf.training.steps import Objective


class GlueEvalLog(EvalLog):
    """eval_results.txt as the original: one block per checkpoint (`glue_results.eval_block`)."""

    def __init__(self, output_dir):
        self.path = os.path.join(output_dir, "eval_results.txt")

    def start(self, evaluator):
        if evaluator.state.last_step < 0 and tf.io.gfile.exists(self.path):
            tf.io.gfile.remove(self.path)  # a fresh evaluation starts a fresh file

    def record(self, step, result, best_before, copied):
        glue_results.append_eval_results(self.path, {**result, "global_step": int(step)}, best_before)


class GlueTask(Task):
    def __init__(self, config: GlueRunConfig):
        super().__init__(config)
        self.validate()
        self.setup_data()
        self.albert_config = config.load_albert_config()
        F.check_max_seq_length(config.max_seq_length, self.albert_config.max_position_embeddings)
        self.tokenizer = tokenization.FullTokenizer(config.vocab_file, config.do_lower_case,
                                                    config.spm_model_file)
        check_model_inputs(self.albert_config, config.max_seq_length, len(self.tokenizer.vocab),
                           config.spm_model_file or config.vocab_file)
        self.cached_dir = config.cached_dir or config.output_dir
        self._predict_fn = None
        self._features = {}

    def setup_data(self):
        """What the task reads: its processor, name, labels, and whether it regresses."""
        cfg = self.config
        self.processor = get_processor(cfg.task_name, use_spm=bool(cfg.spm_model_file),
                                       do_lower_case=cfg.do_lower_case)
        self.name = self.processor.name
        self.labels = self.processor.get_labels()
        self.regression = self.processor.task.is_regression
        self.is_pair = self.processor.task.is_pair
        self.best_metric = M.selection_metric(self.name)

    required_flags = ("data_dir", "task_name", "output_dir")

    def validate(self):
        cfg = self.config
        if not (cfg.do_train or cfg.do_eval or cfg.do_predict or cfg.export_dir):
            raise GlueRunError("At least one of `do_train`, `do_eval`, `do_predict` or "
                               "`export_dir` must be set.")
        if cfg.albert_hub_module_handle and cfg.init_checkpoint != cfg.albert_hub_module_handle \
                and not cfg.albert_config_file:
            raise GlueRunError(
                "--albert_hub_module_handle: only a local TF-Hub v1 module folder (with "
                "tfhub_module.pb) is read, as --init_checkpoint; for a hub URL download the "
                "module and pass its folder")
        for name in self.required_flags:
            if not getattr(cfg, name):
                raise GlueRunError(f"--{name} is required")
        if not cfg.albert_config_file and cfg.albert_config is None:
            raise GlueRunError("--albert_config_file is required (or an --init_checkpoint that "
                               "holds a config)")
        if not cfg.spm_model_file and not cfg.vocab_file:
            raise GlueRunError("--spm_model_file or --vocab_file is required (--vocab_file "
                               "alone: a WordPiece model such as the Chinese ALBERTs)")
        if cfg.tflite:
            parse_tflite_kinds(cfg.tflite)
            if not cfg.export_dir:
                raise GlueRunError("--tflite needs --export_dir (the files go to "
                                   "<export_dir>/tflite)")
        try:
            super().validate()
        except UsageError as error:
            raise GlueRunError(str(error)) from None

    def build_model(self):
        return AlbertClassifier(self.albert_config, len(self.labels))

    def label_names(self) -> list[str] | None:
        """The class names in id order (None when regressing): labels.json, the export's
        `labels` output and test_predictions.tsv."""
        return None if self.regression else [str(label) for label in self.labels]

    def prepare_output_dir(self, is_chief: bool) -> None:
        names = self.label_names()
        if names is not None:
            glue_results.check_or_write_labels(self.config.output_dir, names, is_chief)

    # ---------------------------------------------------------------- data
    def source_file(self, split: str) -> str:
        """The data file of `split` (train, dev or test)."""
        return self.processor.split_path(self.config.data_dir, split)

    def read_split(self, split: str) -> list:
        """The `InputExample`s of `split`."""
        return self.processor.get_examples(self.config.data_dir, split)

    def cache_key(self, split: str) -> dict:
        return F.cache_key(self.name, split, self.source_file(split), self.config.max_seq_length,
                           self.tokenizer, self.config.do_lower_case)

    def features(self, split: str, examples, file_name: str) -> tuple[str, int]:
        path = os.path.join(self.cached_dir, file_name)
        return F.cached_features(examples, self.labels, self.config.max_seq_length,
                                 self.tokenizer, path, self.name, self.cache_key(split))

    def split_features(self, split: str) -> str:
        """The keyed feature file of `split` (train, dev or test), built once per run."""
        if split not in self._features:
            examples = self.read_split(split)
            name = {"train": f"{self.name}_train.tf_record", "dev": f"{self.name}_eval.tf_record",
                    "test": "predict.tf_record"}[split]
            path, count = self.features(split, examples, name)
            self._features[split] = (path, count, examples)
        return self._features[split]

    def prepare_data(self):
        cfg = self.config
        for split, wanted in (("train", cfg.do_train), ("dev", cfg.do_eval),
                              ("test", cfg.do_predict)):
            if wanted:
                self.split_features(split)

    def _input_fn(self, path, training):
        return F.input_fn_builder(path, self.config.max_seq_length, training,
                                  drop_remainder=training, regression=self.regression,
                                  shuffle_buffer=self.config.shuffle_buffer, seed=self.config.seed)

    def train_dataset_fn(self):
        cfg = self.config
        path, count, _ = self.split_features("train")
        logging.info("training on %d examples, batch %d, %d steps", count,
                     cfg.schedule.train_batch_size, self.num_train_steps)
        input_fn = self._input_fn(path, training=True)

        def dataset_fn(ctx):
            dataset = input_fn(ctx.get_per_replica_batch_size(cfg.schedule.train_batch_size))
            if ctx.num_input_pipelines > 1:
                dataset = dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
            return dataset
        return dataset_fn

    def objective(self):
        regression = self.regression

        def loss_fn(outputs, features):
            losses = per_example_loss(outputs["logits"], features["label_ids"], regression)
            if regression:
                return tf.reduce_mean(losses), {}
            n = tf.cast(tf.size(losses), tf.float32)
            correct = tf.reduce_sum(tf.cast(tf.equal(
                outputs["predictions"], tf.cast(features["label_ids"], tf.int32)), tf.float32))
            return tf.reduce_mean(losses), {"accuracy": (correct, n)}
        return Objective(loss_fn)

    # ---------------------------------------------------------------- eval / predict
    def predict_logits(self, model, path, batch_size) -> dict[str, np.ndarray]:
        """Runs the model over a feature file; numpy logits/probabilities/predictions with
        labels and is_real_example, and `loss` (the mean of the per-batch mean losses)."""
        if self._predict_fn is None:
            self._predict_fn = tf.function(lambda features: model(features, training=False),
                                           jit_compile=bool(self.config.runtime.jit_compile) or None)
        keys = ("logits", "probabilities", "predictions")
        collected = {k: [] for k in keys + ("label_ids", "is_real_example")}
        batch_losses = []
        for batch in self._input_fn(path, training=False)(batch_size):
            outputs = self._predict_fn(batch)
            for key in keys:
                collected[key].append(outputs[key].numpy())
            collected["label_ids"].append(batch["label_ids"].numpy())
            collected["is_real_example"].append(batch["is_real_example"].numpy())
            losses = per_example_loss(outputs["logits"], batch["label_ids"], self.regression)
            batch_losses.append(float(tf.reduce_mean(losses)))
        result = {k: np.concatenate(v) for k, v in collected.items()}
        result["loss"] = float(np.mean(batch_losses)) if batch_losses else float("nan")
        return result

    def evaluate(self, model) -> dict:
        path, _, _ = self.split_features("dev")
        out = self.predict_logits(model, path, self.config.schedule.eval_batch_size)
        result = self.metrics(out)
        result["loss"] = out["loss"]
        return result

    def metrics(self, out: dict) -> dict:
        """The dev-set result dict from `predict_logits`' output."""
        return M.glue_metrics(self.name, out["logits"], out["label_ids"], out["is_real_example"])

    def eval_log(self):
        return GlueEvalLog(self.config.output_dir)

    def predict(self, model) -> dict:
        cfg = self.config
        path, _, examples = self.split_features("test")
        out = self.predict_logits(model, path, cfg.schedule.predict_batch_size)
        real = out["is_real_example"] > 0
        guids = [e.guid for e in examples]
        paths = self.write_predictions(guids, out["probabilities"][real], out["predictions"][real])
        paths["test_predictions"] = glue_results.write_label_predictions(
            cfg.output_dir, guids, out["predictions"][real], self.label_names())
        logging.info("wrote %s", ", ".join(paths.values()))
        return paths

    def write_predictions(self, guids, probabilities, predictions) -> dict:
        """The task's own prediction files (GLUE: the original's and the leaderboard's)."""
        return glue_results.write_predictions(self.config.output_dir, self.name, guids,
                                              probabilities, predictions, self.labels)

    def export(self, model, export_dir) -> str:
        from albert_tf.tasks.glue.export import export_classifier

        cfg = self.config
        threshold = None if math.isnan(cfg.threshold_to_export) else cfg.threshold_to_export
        path = export_classifier(model, export_dir, cfg.max_seq_length, cfg.spm_model_file,
                                 cfg.do_lower_case, self.is_pair, threshold,
                                 label_names=self.label_names(), vocab_file=cfg.vocab_file)
        if cfg.tflite:
            from albert_tf.export.tflite import export_tflite

            export_tflite(model, os.path.join(export_dir, "tflite"), cfg.max_seq_length,
                          cfg.tflite, spm_model_file=cfg.spm_model_file,
                          vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
                          do_lower_case=cfg.do_lower_case, label_names=self.label_names())
        return path


def run_glue(config: GlueRunConfig) -> dict:
    """Train / evaluate / predict / export as the flags say; returns what each part produced.
    `--task_name=csv|tsv|jsonl` runs your own files (`albert_tf.tasks.custom`)."""
    if config.seed is not None:
        import keras

        keras.utils.set_random_seed(config.seed)
    task_class = GlueTask
    if (config.task_name or "").lower() in CUSTOM_FORMATS:
        from albert_tf.tasks.custom.task import CustomTask as task_class
    return Driver.create(task_class, config).run()
