"""Table 2's speed column: the training steps/s of every model, timed in turns.

Each model gets the normal train step (`training.steps.TrainStep` with the pretraining objective
and optimizer of its run) on its training records; after one traced step, the models run
`steps` steps each in turn, `rounds` times, and a model's speed is its fastest round (as
`timeit` takes the best: other load only ever slows a round down). In turns, a change in the
machine's load (a shared machine, a throttling laptop) falls on every model alike, which the
rates logged during training (minutes apart) cannot promise.
`<output_dir>/speed.json` keeps the result for the same models and settings.
"""

from __future__ import annotations

import json
import os
import time

from albert_tf.data.pretraining_dataset import dataset_fn
from albert_tf.io_utils import write_text_atomically
from albert_tf.models import AlbertPretrainer
from albert_tf.optimization import create_optimizer
from albert_tf.paper.data import read_record
from albert_tf.paper.plan import PaperOptions
from albert_tf.paper.training import albert_config
from albert_tf.tasks.pretraining.objective import pretraining_objective
from albert_tf.training.steps import TrainStep

ROUNDS, STEPS = 7, 10


def _train_step(runtime, options: PaperOptions, spec, data: dict):
    with runtime.scope():
        model = AlbertPretrainer(albert_config(options, spec, data["vocab_size"]))
        optimizer = create_optimizer(options.learning_rate, options.steps,
                                     int(options.steps * options.warmup_fraction),
                                     options.optimizer)
        optimizer.build(model.trainable_variables)
    step = TrainStep(runtime, model, optimizer,
                     pretraining_objective(spec.sentence_order_loss_weight))
    make = dataset_fn(data[f"train_{spec.data_kind}"], options.max_seq_length,
                      options.max_predictions_per_seq, options.train_batch_size, True,
                      seed=options.seed)
    iterator = iter(runtime.strategy.distribute_datasets_from_function(make))
    float(step(iterator)[0])  # traced (and compiled) before any timing
    return step, iterator


def measure(runtime, options: PaperOptions, models, data: dict, rounds: int = ROUNDS,
            steps: int = STEPS, printer=print) -> dict:
    """{model name: {"steps_per_second", "rounds"}} (see the module docstring)."""
    settings = {"models": [spec.name for spec in models], "data": data["key"],
                "rounds": rounds, "steps": steps, **options.model_settings()}
    path = os.path.join(options.output_dir, "speed.json")
    if os.path.exists(path):
        record = read_record(path)
        if record.get("settings") == settings:
            return record["result"]
    printer(f"[paper] speed: {len(models)} models, {rounds} rounds of {steps} steps each, in "
            "turns", flush=True)
    runners = {spec.name: _train_step(runtime, options, spec, data) for spec in models}
    seconds = {name: [] for name in runners}
    for _ in range(rounds):
        for name, (step, iterator) in runners.items():
            start = time.perf_counter()
            for _ in range(steps):
                loss = step(iterator)[0]
            float(loss)  # waits for the device
            seconds[name].append(time.perf_counter() - start)
    result = {name: {"steps_per_second": steps / min(times),
                     "rounds": [round(steps / t, 3) for t in times]}
              for name, times in seconds.items()}
    write_text_atomically(path, json.dumps({"settings": settings, "result": result}, indent=1))
    return result
