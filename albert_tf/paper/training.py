"""Pretrains the plan's models with the normal pretraining code (`run_pretraining`), each in its
own folder `<output_dir>/models/<name>`, and measures their training speed.

Resumable: `paper_model.json` is written before training (the settings) and again after it (the
result). A finished model is not retrained; a half-trained one resumes from its latest checkpoint
(the pretraining driver does that); a folder trained with other settings is refused.

Speed (Table 2's "speedup"): the examples/s the trainer logs every `log_every_steps` (also
written to the folder's TensorBoard events), the first interval of each process left out (it
holds the graph tracing), median of the rest.
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import time

import tensorflow as tf
from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.io_utils import write_text_atomically
from albert_tf.paper.data import check_same_settings
from albert_tf.paper.plan import ModelSpec, PaperOptions
from albert_tf.tasks.pretraining.config import PretrainingRunConfig
from albert_tf.tasks.pretraining.task import run_pretraining
from albert_tf.training.logs import format_duration

MARKER = "paper_model.json"


def model_dir(options: PaperOptions, spec: ModelSpec) -> str:
    return os.path.join(options.output_dir, "models", spec.name)


def albert_config(options: PaperOptions, spec: ModelSpec, vocab_size: int) -> AlbertConfig:
    """ALBERT v2's recipe (no dropout) at the run's size, with the spec's E and sharing."""
    return AlbertConfig(
        vocab_size=vocab_size, embedding_size=spec.embedding_size,
        hidden_size=options.hidden_size, num_hidden_layers=options.num_hidden_layers,
        num_attention_heads=options.num_attention_heads,
        intermediate_size=options.intermediate_size, max_position_embeddings=max(
            options.max_seq_length, 128), share_parameters=spec.share,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def log_every_steps(options: PaperOptions) -> int:
    return max(1, options.steps // 20)


def run_config(options: PaperOptions, spec: ModelSpec, data: dict) -> PretrainingRunConfig:
    directory = model_dir(options, spec)
    flat = {
        "albert_config_file": os.path.join(directory, "albert_config.json"),
        "input_file": data[f"train_{spec.data_kind}"], "output_dir": directory,
        "max_seq_length": options.max_seq_length,
        "max_predictions_per_seq": options.max_predictions_per_seq,
        "do_train": True, "do_eval": False, "train_batch_size": options.train_batch_size,
        "learning_rate": options.learning_rate, "optimizer": options.optimizer,
        "num_train_steps": options.steps,
        "num_warmup_steps": int(options.steps * options.warmup_fraction),
        "save_checkpoints_steps": max(1, options.steps // 4), "keep_checkpoint_max": 2,
        "log_every_steps": log_every_steps(options), "shuffle_seed": options.seed,
        "sentence_order_loss_weight": spec.sentence_order_loss_weight,
    }
    return PretrainingRunConfig.from_flat(flat)


def model_settings(options: PaperOptions, spec: ModelSpec, data: dict) -> dict:
    return {**options.model_settings(), "objective": spec.objective, "share": spec.share,
            "embedding_size": spec.embedding_size, "vocab_size": data["vocab_size"],
            "data": data["key"]}


def logged_scalars(directory: str, tag: str) -> list:
    """Per events file of `directory` (one per training process, in order), the [(step, value)]
    the trainer logged under `tag`; a killed run's truncated last record is left out."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        values = []
        try:
            for event in tf.compat.v1.train.summary_iterator(path):
                for value in event.summary.value:
                    if value.tag == tag:
                        values.append((int(event.step), float(tf.make_ndarray(value.tensor))))
        except tf.errors.DataLossError:
            pass
        found.append(values)
    return found


def measured_speed(directory: str, batch_size: int) -> dict:
    """Examples/s and steps/s from the trainer's logged `examples_per_second` (see the module
    docstring); NaN when nothing was logged."""
    kept, first = [], []
    for values in logged_scalars(directory, "examples_per_second"):
        first += [v for _, v in values[:1]]
        kept += [v for _, v in values[1:]]
    pool = kept or first
    examples = statistics.median(pool) if pool else float("nan")
    return {"examples_per_second": examples, "steps_per_second": examples / batch_size,
            "intervals": len(pool)}


class Progress:
    """The run's progress line: models done, and an ETA from the steps/s seen so far."""

    def __init__(self, total_models: int, steps_to_train: int, printer=print):
        self.total_models, self.steps_left = total_models, steps_to_train
        self.steps_done, self.seconds = 0, 0.0
        self.started = time.time()
        self.print = printer

    def eta(self) -> str:
        if not self.steps_done:
            return "?"
        return format_duration(self.steps_left * self.seconds / self.steps_done)

    def before(self, index: int, spec: ModelSpec, steps: int) -> None:
        self.print(f"[paper] model {index}/{self.total_models} {spec.name}: training {steps} "
                   f"steps (elapsed {format_duration(time.time() - self.started)}, training "
                   f"ETA {self.eta()})", flush=True)

    def after(self, steps: int, seconds: float) -> None:
        self.steps_done += steps
        self.steps_left -= steps
        self.seconds += seconds


def _trained_steps(directory: str) -> int:
    state = tf.train.latest_checkpoint(directory)
    return int(state.rsplit("-", 1)[1]) if state and state.rsplit("-", 1)[1].isdigit() else 0


def train_models(options: PaperOptions, models, data: dict, runtime, printer=print) -> dict:
    """Trains every model not finished yet; returns {name: paper_model.json's result}."""
    results, todo = {}, []
    for spec in models:
        record = check_same_settings(os.path.join(model_dir(options, spec), MARKER),
                                     model_settings(options, spec, data), "model folder")
        if record is not None and record.get("result"):
            results[spec.name] = record["result"]
        else:
            todo.append(spec)
    for spec in models:
        if spec.name in results:
            printer(f"[paper] model {spec.name}: trained already, reused", flush=True)
    steps_left = sum(options.steps - _trained_steps(model_dir(options, s)) for s in todo)
    progress = Progress(len(models), steps_left, printer)
    for spec in todo:
        index = models.index(spec) + 1
        directory = model_dir(options, spec)
        settings = model_settings(options, spec, data)
        os.makedirs(directory, exist_ok=True)
        write_text_atomically(os.path.join(directory, MARKER),
                              json.dumps({"settings": settings}, indent=1))
        albert_config(options, spec, data["vocab_size"]).to_json_file(
            os.path.join(directory, "albert_config.json"))
        before = _trained_steps(directory)
        progress.before(index, spec, options.steps - before)
        start = time.time()
        run_pretraining(run_config(options, spec, data), runtime)
        seconds = time.time() - start
        progress.after(options.steps - before, seconds)
        result = {"directory": directory, "train_seconds_last_session": round(seconds, 1),
                  "resumed_from_step": before,
                  **measured_speed(directory, options.train_batch_size)}
        write_text_atomically(os.path.join(directory, MARKER),
                              json.dumps({"settings": settings, "result": result}, indent=1))
        logging.info("%s: %s", spec.name, result)
        results[spec.name] = result
    return results
