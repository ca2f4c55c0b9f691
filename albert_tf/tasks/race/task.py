"""RACE (4-way multiple choice) as a `Task` (what `run_race.py` runs through the driver):
TFRecord caches, fine-tuning, per-checkpoint evaluation keeping the best by accuracy, and
accuracy reported for middle, high and all."""

from __future__ import annotations

import os

import numpy as np

from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.labels import LabelFile
from albert_tf.models import AlbertMultipleChoice, multiple_choice_loss
from albert_tf.tasks.race import data
from albert_tf.tasks.race.config import RaceRunConfig
from albert_tf.tasks.base import Task
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.eval_log import RunnerEvalLog
from albert_tf.tasks.inference import inference_fn
from albert_tf.tokenization import unk
from albert_tf.training.steps import Objective
from albert_tf.weights.model_folder import write_lengths


def _check_length(max_seq_length: int, max_position_embeddings: int) -> None:
    if max_seq_length > max_position_embeddings:
        raise UsageError(f"Cannot use sequence length {max_seq_length} because the ALBERT "
                         f"model was only trained up to {max_position_embeddings} "
                         "(max_position_embeddings)")


class RaceTask(Task):
    best_metric = "eval_accuracy"
    head = "multiple_choice"

    def __init__(self, config: RaceRunConfig, inputs=None):
        super().__init__(config, inputs)  # works on a filled copy of `config` (self.config)
        self.validate()
        self.load_text_model(_check_length)
        self._splits = {}

    def validate(self):
        cfg = self.config
        cfg.require("data_dir", "albert_config_file", "output_dir")
        if not cfg.spm_model_file and not cfg.vocab_file:
            raise UsageError("--spm_model_file or --vocab_file is required (--vocab_file alone: "
                             "a WordPiece model such as the Chinese ALBERTs)")
        if not (cfg.do_train or cfg.do_eval or cfg.do_predict):
            raise UsageError("At least one of `do_train`, `do_eval` or `do_predict` must be True.")
        super().validate()

    def prepare_output_dir(self, is_chief: bool) -> None:
        """labels.json names the choices and says the head is RACE's (`task_type`): by TF1
        names and shapes its weights are a one-label classifier's, so the folder's export and
        every later reader serve it as multiple choice. sequence_lengths.json records the
        features' --max_seq_length and --max_qa_length for the folder's export."""
        cfg = self.config
        LabelFile.read(cfg.output_dir).check_or_write(
            data.LABELS, is_chief, {"task_type": self.head}, word="choices")
        if is_chief:  # a training run replaces the record; other runs write one where none is
            write_lengths(cfg.output_dir, {"max_seq_length": cfg.max_seq_length,
                                           "max_qa_length": cfg.max_qa_length}, cfg.do_train)

    def build_model(self):
        return AlbertMultipleChoice(self.albert_config, self.config.dropout_prob)

    def split(self, split: str):
        """(TFRecord path, examples) of a split; the cache is keyed on its source files and
        settings, so a changed file or flag rebuilds it."""
        if split not in self._splits:
            cfg = self.config
            name = {"train": cfg.train_file, "dev": cfg.eval_file, "test": cfg.predict_file}[split]
            path = name or os.path.join(cfg.output_dir, f"{split}.tf_record")
            self._splits[split] = data.cached_tfrecord(
                path, cfg.data_dir, split, self.tokenizer, cfg.max_seq_length, cfg.max_qa_length,
                cfg.do_lower_case, cfg.high_only, cfg.middle_only)
            unk.report_sample(self.tokenizer, self._splits[split][1],
                              lambda e: [e.context, *e.endings],
                              os.path.join(cfg.data_dir, "RACE", split), cfg.do_lower_case)
        return self._splits[split]

    def prepare_data(self):
        for split in self.wanted_splits():
            self.split(split)

    def train_dataset_fn(self):
        cfg = self.config
        path, _ = self.split("train")

        def dataset_fn(context):
            return data.race_dataset(path, cfg.max_seq_length, True,
                                     context.get_per_replica_batch_size(
                                         cfg.schedule.train_batch_size), drop_remainder=True)
        return dataset_fn

    def objective(self):
        return Objective(lambda outputs, features: (multiple_choice_loss(outputs, features), {}))

    def accuracy_by_level(self, model, split, batch_size) -> dict:
        """`eval_accuracy`/`eval_loss` over all questions plus `middle_accuracy`/`high_accuracy`."""
        path, examples = self.split(split)
        call = inference_fn(model)
        logits = np.concatenate([call(batch)["logits"].numpy() for batch in
                                 data.race_dataset(path, self.config.max_seq_length, False,
                                                   batch_size)])
        labels = np.array([e.label for e in examples])
        levels = np.array([e.level for e in examples])
        correct = logits.argmax(-1) == labels
        shifted = logits - logits.max(-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        result = {"eval_accuracy": float(correct.mean()),
                  "eval_loss": float(-log_probs[np.arange(len(labels)), labels].mean()),
                  "num_examples": int(len(labels))}
        for level in data.LEVELS:
            if (levels == level).any():
                result[f"{level}_accuracy"] = float(correct[levels == level].mean())
        return result

    def evaluate(self, model) -> dict:
        return self.accuracy_by_level(model, "dev", self.config.schedule.eval_batch_size)

    def eval_log(self):
        return RunnerEvalLog(self.config.output_dir, "eval_accuracy")

    def predict(self, model) -> dict:
        """As the original: the accuracy of the prediction checkpoint on the test split."""
        test = self.accuracy_by_level(model, "test", self.config.schedule.predict_batch_size)
        lines = ["***** Predict results *****"] + [f"{k} = {v}" for k, v in sorted(test.items())]
        lines.append(f"best = {test['eval_accuracy']}")
        write_text_atomically(os.path.join(self.config.output_dir, "predict_results.txt"),
                              "\n".join(lines) + "\n")
        return {f"test_{k}": v for k, v in test.items()}


def run_race(config: RaceRunConfig, runtime=None) -> dict:
    summary = Driver.create(RaceTask, config, runtime).run()
    return {**(summary.get("eval") or {}), **(summary.get("predict") or {})}
