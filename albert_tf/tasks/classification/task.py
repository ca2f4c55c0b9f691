"""Classifier fine-tuning as one `Task` (what `run_classifier.py` runs through the driver), for
every example source (`sources`): a GLUE task folder, your own files, texts held in memory.

The original's flow and files, with its traps removed: cached features are keyed (never stale),
`model.ckpt-best` is a copy (nothing is renamed or deleted), re-running evaluation next to an
existing best checkpoint works, and prediction never falls back to a pretrained encoder.
Labels are written to `<output_dir>/labels.json` before training and checked by every later run
on the same folder (prediction, export), so ids and names always agree.
"""

from __future__ import annotations

import functools
import math
import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.labels import LabelFile
from albert_tf.tokenization import unk
from albert_tf.errors import UsageError
from albert_tf.serving import openvino_export, tflite
from albert_tf.models import AlbertClassifier, classifier_outputs, per_example_loss
from albert_tf.tasks.base import Task, check_export_formats, replica_dataset_fn
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification import results
from albert_tf.tasks.classification.config import ClassifierRunConfig, ClassifierRunError
from albert_tf.tasks.distill import check_teacher, distilled, load_teacher
from albert_tf.tasks.classification.export import export_classifier
from albert_tf.tasks.classification.sources import ExampleSource, source_for
from albert_tf.tasks.classification.windows import pool
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.eval_log import EvalLog
from albert_tf.tasks.inference import array_batches, predict_function
from albert_tf.training.health import label_entropy
from albert_tf.training.steps import Objective

# The cached feature file of each split (the original's names).
FEATURE_FILES = {"train": "{name}_train.tf_record", "dev": "{name}_eval.tf_record",
                 "test": "predict.tf_record"}


class ClassifierEvalLog(EvalLog):
    """eval_results.txt as the original: one block per checkpoint (`results.eval_block`)."""

    def __init__(self, output_dir):
        self.path = os.path.join(output_dir, "eval_results.txt")

    def start(self, evaluator):
        if evaluator.state.last_step < 0 and tf.io.gfile.exists(self.path):
            tf.io.gfile.remove(self.path)  # a fresh evaluation starts a fresh file

    def record(self, step, result, best_before, copied):
        results.append_eval_results(self.path, {**result, "global_step": int(step)}, best_before)


class ClassificationTask(Task):
    """Fine-tunes, evaluates, predicts and exports a classifier of `source`'s examples (by
    default the source `--task_name` names: `sources.source_for`)."""

    head = "classifier"
    teacher = teacher_inputs = None  # --distill_from: its inputs (checked), then its model

    def __init__(self, config: ClassifierRunConfig, source: ExampleSource | None = None,
                 inputs=None):
        super().__init__(config, inputs)
        config = self.config  # the filled copy (the caller's is left as given)
        if source is not None:  # made for the caller's config: it reads the filled one
            source.config = config
        self.source = source if source is not None else source_for(config)
        self.source.model_labels = self.inputs.model_labels()[0]
        self.validate()
        self.source.open()
        if not config.reads_files and not self.source.regression:
            # A GLUE task's labels are fixed by its processor: a model of the task whose
            # classifier names them in another order would have every id renamed.
            self.inputs.check_labels(self.source.labels,
                                     f"the labels of --task_name={config.task_name}", trains=True)
        elif not config.do_train and not getattr(self.source, "label_list", True):
            # Own data without --label_list: served with the names its output_dir records.
            self.recorded_labels()
        self.load_text_model(F.check_max_seq_length)
        if config.distill_from and config.do_train:
            self.teacher_inputs = check_teacher(self, self.label_names())
        self.cached_dir = config.cached_dir or config.output_dir
        self.layout = F.Layout(self.source.multi_label,
                               config.stride if config.long_document == "windows" else None)
        self._predict_fn = None
        self._features = {}

    @property
    def best_metric(self) -> str:
        return self.source.best_metric

    def validate(self):
        cfg = self.config
        self.source.validate()
        if not (cfg.do_train or cfg.do_eval or cfg.do_predict or cfg.export_dir):
            raise ClassifierRunError("At least one of `do_train`, `do_eval`, `do_predict` or "
                                     "`export_dir` must be set.")
        if cfg.albert_hub_module_handle and cfg.init_checkpoint != cfg.albert_hub_module_handle \
                and not cfg.albert_config_file:
            raise ClassifierRunError(
                "--albert_hub_module_handle: only a local TF-Hub v1 module folder (with "
                "tfhub_module.pb) is read, as --init_checkpoint; for a hub URL download the "
                "module and pass its folder")
        for name in self.source.required_flags:
            if not getattr(cfg, name):
                raise ClassifierRunError(f"--{name} is required")
        if not cfg.albert_config_file and cfg.albert_config is None:
            raise ClassifierRunError("--albert_config_file is required (or an --init_checkpoint "
                                     "that holds a config)")
        if not cfg.spm_model_file and not cfg.vocab_file:
            raise ClassifierRunError("--spm_model_file or --vocab_file is required (--vocab_file "
                                     "alone: a WordPiece model such as the Chinese ALBERTs)")
        try:
            check_export_formats(cfg)
            super().validate()
        except UsageError as error:
            raise ClassifierRunError(str(error)) from None

    def build_model(self):
        model = AlbertClassifier(self.albert_config, len(self.source.labels),
                                 multi_label=self.source.multi_label,
                                 threshold=self.config.threshold)
        if self.teacher_inputs is not None:  # run beside the student in each step
            self.teacher = load_teacher(self.teacher_inputs)
        return model

    @property
    def separator(self) -> str:
        return self.config.files.label_separator

    def label_settings(self) -> dict:
        """What labels.json records beside the names (multi-label, long documents), so an
        export or a reopened `TextClassifier` serves as this run; {} keeps the original list."""
        cfg, settings = self.config, {}
        if self.source.multi_label:
            settings.update(task_type="multi_label", threshold=float(cfg.threshold),
                            label_separator=self.separator)
        if self.layout.windows:
            settings.update(long_document="windows", doc_stride=cfg.stride,
                            window_pooling=cfg.window_pooling)
        return settings

    def label_names(self) -> list[str] | None:
        """The class names in id order (None when regressing): labels.json, the export's
        `labels` output and test_predictions.tsv."""
        return None if self.source.regression else [str(label) for label in self.source.labels]

    def prepare_output_dir(self, is_chief: bool) -> None:
        names = self.label_names()
        if names is not None:
            LabelFile.read(self.config.output_dir).check_or_write(names, is_chief,
                                                                  self.label_settings())

    # ---------------------------------------------------------------- data
    def cache_key(self, split: str) -> dict:
        return {**F.cache_key(self.source.name, split, self.source.source_file(split),
                              self.config.max_seq_length, self.tokenizer,
                              self.config.do_lower_case),
                **self.source.cache_key(split),
                **({"multi_label": True} if self.layout.multi_label else {}),
                **({"doc_stride": self.layout.stride} if self.layout.windows else {})}

    def features(self, split: str, examples, file_name: str) -> tuple[str, int]:
        """The keyed feature file `file_name` (in cached_dir) of `split`: (path, records)."""
        path = os.path.join(self.cached_dir, file_name)
        return F.cached_features(examples, self.source.labels, self.config.max_seq_length,
                                 self.tokenizer, path, self.source.name, self.cache_key(split),
                                 self.layout)

    def split_features(self, split: str) -> tuple:
        """(features, count, examples) of `split` (train, dev or test), built once per run: the
        features are a keyed file, or arrays when the source holds its examples in memory."""
        if split not in self._features:
            examples = self.source.examples(split)
            self.report_unk(split, examples)
            if self.source.source_file(split) is None:
                data = F.feature_arrays(examples, self.source.labels, self.config.max_seq_length,
                                        self.tokenizer, self.source.name, self.layout)
                count = len(data["input_ids"])
            else:
                data, count = self.features(split, examples,
                                            FEATURE_FILES[split].format(name=self.source.name))
            self._features[split] = (data, count, examples)
        return self._features[split]

    def use_examples(self, splits: dict, pair: bool) -> None:
        """Other examples held in memory for the same model (a Python API's next call):
        the source's splits replaced, their features built on first use."""
        self.source.replace(splits, pair)
        self._features.clear()

    def report_unk(self, split: str, examples) -> None:
        """The [UNK] rate of a split's texts in one log line."""
        unk.report_sample(self.tokenizer, examples, lambda e: (e.text_a, e.text_b),
                          self.source.source_file(split) or f"the {split} examples",
                          self.config.do_lower_case)

    def prepare_data(self):
        for split in self.wanted_splits():
            self.split_features(split)

    def _input_fn(self, data, training):
        spec = self.layout.spec(self.config.max_seq_length, self.source.regression,
                                len(self.source.labels))
        return F.input_fn_builder(data, self.config.max_seq_length, training,
                                  drop_remainder=training, regression=self.source.regression,
                                  shuffle_buffer=self.config.shuffle_buffer, seed=self.config.seed,
                                  spec=spec)

    def train_dataset_fn(self):
        cfg = self.config
        data, count, _ = self.split_features("train")
        logging.info("training on %d %s, batch %d, %d steps", count,
                     "windows" if self.layout.windows else "examples",
                     cfg.schedule.train_batch_size, self.num_train_steps)
        input_fn = self._input_fn(data, training=True)
        return replica_dataset_fn(input_fn, cfg.schedule.train_batch_size)

    def objective(self):
        regression, multi_label = self.source.regression, self.source.multi_label

        def loss_fn(outputs, features):
            losses = per_example_loss(outputs["logits"], features["label_ids"], regression,
                                      multi_label)
            if "window_weight" in features:  # a long document's windows share its weight
                weights = features["window_weight"]
                loss = tf.reduce_sum(losses * weights) / tf.maximum(tf.reduce_sum(weights),
                                                                     1e-9)
                return loss, {}
            if regression or multi_label:
                return tf.reduce_mean(losses), {}
            n = tf.cast(tf.size(losses), tf.float32)
            correct = tf.reduce_sum(tf.cast(tf.equal(
                outputs["predictions"], tf.cast(features["label_ids"], tf.int32)), tf.float32))
            return tf.reduce_mean(losses), {"accuracy": (correct, n)}
        if self.teacher is not None:
            return distilled(Objective(loss_fn), self.teacher, self.config.distill_temperature,
                             self.config.distill_alpha)
        return Objective(loss_fn)

    # ---------------------------------------------------------------- eval / predict
    def predict_logits(self, model, data, batch_size, with_loss=True) -> dict[str, np.ndarray]:
        """Runs the model over features (a feature file or `split_features` arrays); numpy
        logits/probabilities/predictions with labels and is_real_example, and `loss` (the mean
        of the per-batch mean losses; NaN without `with_loss`: a prediction needs none)."""
        if self._predict_fn is None:
            self._predict_fn = predict_function(model, self.config.runtime.jit_compile)
        keys = ("logits", "probabilities", "predictions")
        fed = ("label_ids", "is_real_example") + (("example_index",) if self.layout.windows
                                                  else ())
        collected = {k: [] for k in keys + fed}
        batch_losses = []
        batches = (array_batches(data, batch_size) if isinstance(data, dict)
                   else self._input_fn(data, training=False)(batch_size))
        for batch in batches:
            outputs = self._predict_fn(batch)
            for key in keys:
                collected[key].append(outputs[key].numpy())
            for key in fed:
                collected[key].append(batch[key].numpy())
            if with_loss:
                losses = per_example_loss(outputs["logits"], batch["label_ids"],
                                          self.source.regression, self.source.multi_label)
                batch_losses.append(float(tf.reduce_mean(losses)))
        result = {k: np.concatenate(v) for k, v in collected.items()}
        result["loss"] = float(np.mean(batch_losses)) if batch_losses else float("nan")
        return result

    def split_outputs(self, model, split: str, batch_size: int,
                      with_loss: bool = True) -> dict[str, np.ndarray]:
        """`predict_logits` over the features of `split`, one row per example (a long
        document's windows pooled: `pool_windows`)."""
        data, _, examples = self.split_features(split)
        out = self.predict_logits(model, data, batch_size, with_loss)
        return self.pool_windows(out, len(examples)) if self.layout.windows else out

    def pool_windows(self, out: dict, num_examples: int) -> dict:
        """Per example, its windows' logits pooled (`--window_pooling`), and the outputs the
        model gives for such logits; the label of its first window; `windows`: how many."""
        index = out["example_index"]
        logits = pool(out["logits"], index, num_examples, self.config.window_pooling)
        first = np.unique(index, return_index=True)[1]
        pooled = classifier_outputs(tf.constant(logits), self.source.regression,
                                    self.source.multi_label, self.config.threshold)
        return {**{k: np.asarray(v) for k, v in pooled.items()},
                "label_ids": out["label_ids"][first], "loss": out["loss"],
                "is_real_example": np.ones(num_examples, np.int32),
                "windows": np.bincount(index, minlength=num_examples)}

    def evaluate(self, model, batch_size: int | None = None) -> dict:
        out = self.split_outputs(model, "dev", batch_size or self.config.schedule.eval_batch_size)
        result = self.source.metrics(out)
        result["loss"] = out["loss"]
        real = out["is_real_example"] > 0  # what the driver's health check reads
        self.eval_predictions = None if self.source.regression else (
            out["predictions"][real], out["label_ids"][real], self.label_names())
        return result

    def chance_loss(self) -> float | None:
        """The training loss of a model that learned only the label prior (its entropy), the
        level a classifier that does not learn stays at; None when regressing or multi-label."""
        if self.source.regression or self.source.multi_label:
            return None
        names = [str(label) for label in self.source.labels]
        ids = [names.index(str(e.label)) for e in self.split_features("train")[2]
               if str(e.label) in names]
        return label_entropy(ids, len(names))

    def eval_log(self):
        return ClassifierEvalLog(self.config.output_dir)

    def predict(self, model) -> dict:
        cfg = self.config
        out = self.split_outputs(model, "test", cfg.schedule.predict_batch_size)
        real = out["is_real_example"] > 0
        guids = [e.guid for e in self.split_features("test")[2]]
        paths = self.source.write_predictions(guids, out["probabilities"][real],
                                              out["predictions"][real])
        paths["test_predictions"] = results.write_label_predictions(
            cfg.output_dir, guids, out["predictions"][real], self.label_names(), self.separator)
        logging.info("wrote %s", ", ".join(paths.values()))
        return paths

    def export(self, model, export_dir) -> str:
        cfg = self.config
        threshold = None if math.isnan(cfg.threshold_to_export) else cfg.threshold_to_export
        # The TFLite files are versioned with the SavedModel (<export_dir>/tflite/<version>).
        lite = tflite.extras(model, cfg.max_seq_length, cfg.tflite,
                             spm_model_file=cfg.spm_model_file,
                             vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
                             do_lower_case=cfg.do_lower_case, label_names=self.label_names())
        lite.update(openvino_export.extras(  # <export_dir>/onnx/<version>, openvino/<version>
            model, cfg.max_seq_length, cfg.onnx, cfg.openvino, spm_model_file=cfg.spm_model_file,
            vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
            do_lower_case=cfg.do_lower_case, label_names=self.label_names(),
            **self.calibration_texts()))
        return export_classifier(model, export_dir, cfg.max_seq_length, cfg.spm_model_file,
                                 cfg.do_lower_case, self.source.is_pair, threshold,
                                 label_names=self.label_names(), vocab_file=cfg.vocab_file,
                                 extras=lite, windows=self.windowing(),
                                 label_separator=self.separator)

    def calibration_texts(self, count: int = 200) -> dict:
        """{texts, text_pairs}: the first `count` dev texts, which OpenVINO's static_int8 file
        calibrates on (and each int8 file's agreement is measured on), where the run names
        static_int8 and has dev examples; else {}."""
        if "static_int8" not in openvino_export.parse_kinds(self.config.openvino):
            return {}
        try:
            examples = self.source.examples("dev")[:count]
        except (UsageError, OSError, ValueError):  # no dev split: the check texts calibrate
            return {}
        if not examples:
            return {}
        pairs = [e.text_b or "" for e in examples] if self.source.is_pair else None
        return {"texts": [e.text_a for e in examples], "text_pairs": pairs}

    def windowing(self) -> tuple[int, str] | None:
        """(doc_stride, window_pooling) of `serve_text` with --long_document=windows."""
        return (self.layout.stride, self.config.window_pooling) if self.layout.windows else None


def classification_driver(config: ClassifierRunConfig, source: ExampleSource | None = None,
                          inputs=None):
    """The driver of a `ClassificationTask` on `source` (default: the one `--task_name` names),
    with `--seed` applied first; `inputs`: the run's `RunInputs`, when already resolved."""
    if config.seed is not None:
        keras.utils.set_random_seed(config.seed)
    return Driver.create(functools.partial(ClassificationTask, source=source), config,
                         inputs=inputs)


def run_classifier(config: ClassifierRunConfig) -> dict:
    """Train / evaluate / predict / export as the flags say; returns what each part produced.
    `--task_name=csv|tsv|jsonl` runs your own files, any other name a GLUE task."""
    return classification_driver(config).run()


run_glue = run_classifier  # the name run_classifier.py and older callers use
