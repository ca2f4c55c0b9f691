"""The task interface every job implements (pretraining, GLUE, SQuAD, RACE), and the run config
shape they share: the task's own fields, plus `runtime` (where and how it runs) and `schedule`
(batch sizes, optimizer, steps, checkpoints).

A task says *what* to train and how to score it; `albert_tf.tasks.driver.Driver` says *how a run
goes*: lock the output_dir, train, evaluate each checkpoint, keep the best, predict, export.
A new task is one folder under `albert_tf/tasks/` with a `task.py` holding its config and its
`Task` subclass (see ARCHITECTURE.md).
"""

from __future__ import annotations

import abc
from typing import Callable

from albert_tf.errors import UsageError
from albert_tf.labels import LabelFile
from albert_tf.run_config import OPTIMIZERS, RunConfig, parse_tflite_kinds
from albert_tf.serving import openvino_export
from albert_tf.tokenization import FullTokenizer
from albert_tf.training.steps import Objective
from albert_tf.weights.model_folder import find_checkpoint
# check_model_inputs: where the tasks have always imported it from.
from albert_tf.weights.run_inputs import RunInputs, check_model_inputs, resolve_inputs  # noqa: F401


def replica_dataset_fn(input_fn, global_batch_size: int) -> Callable:
    """The trainer's `dataset_fn(input_context)`: `input_fn(per-replica batch size)`, one shard
    per input pipeline (multi-worker runs)."""
    def dataset_fn(ctx):
        dataset = input_fn(ctx.get_per_replica_batch_size(global_batch_size))
        if ctx.num_input_pipelines > 1:
            dataset = dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return dataset
    return dataset_fn


class Task(abc.ABC):
    """One job: what model to build, what to train it on, how to score and use it.

    Subclasses implement the methods below; the driver calls them. `model` arguments are built
    by `build_model` inside the runtime's strategy scope and hold the weights of the checkpoint
    being evaluated or used.
    """

    #: metric whose highest value selects `model.ckpt-best` (None: the task keeps no best).
    best_metric: str | None = None
    #: a checkpoint is kept as best only when its metric beats this (and every earlier one).
    best_initial_value: float = float("-inf")
    #: evaluate checkpoints as they are saved during training (with `--do_eval`).
    evaluate_during_training: bool = True

    #: the head this task's model ends in (`weights.heads`), checked against the source's.
    head: str | None = None

    @classmethod
    def head_for(cls, config: RunConfig) -> str | None:
        """The head a run of `config` ends in: `head`, unless the task's flags choose it."""
        return cls.head

    def __init__(self, config: RunConfig, inputs: RunInputs | None = None):
        # The model files, casing and labels, resolved once (`Driver.create` passes them);
        # the task works on a filled copy of `config`, which stays as the caller made it.
        self.inputs = (inputs if inputs is not None
                       else resolve_inputs(config, head=self.head_for(config)))
        self.config = self.inputs.run_config(config)
        self.runtime = None  # the driver's Runtime (strategy), for tasks that evaluate with it

    # -- set-up ----------------------------------------------------------------------------
    def validate(self) -> None:
        """Raises UsageError for flags that cannot work together (before anything is written)."""
        if self.config.schedule.optimizer not in OPTIMIZERS:
            raise UsageError(f"--optimizer must be adamw or lamb, got "
                             f"{self.config.schedule.optimizer!r}")

    def load_text_model(self, check_length: Callable | None = None) -> None:
        """Sets `albert_config` and `tokenizer` from the filled config and checks them against
        each other and `max_seq_length`. `check_length(max_seq_length, max_position_embeddings)`,
        when given, runs before the tokenizer is read (a task's own wording of that error)."""
        config = self.config
        self.albert_config = config.load_albert_config()
        if check_length is not None:
            check_length(config.max_seq_length, self.albert_config.max_position_embeddings)
        self.tokenizer = FullTokenizer(config.vocab_file, config.do_lower_case,
                                       config.spm_model_file)
        check_model_inputs(self.albert_config, config.max_seq_length, len(self.tokenizer.vocab),
                           config.spm_model_file or config.vocab_file)

    def recorded_labels(self) -> list | None:
        """The names the output_dir's labels.json records (None: none), checked against the
        --init_checkpoint's own labels when a run that does not train serves that model: the
        output_dir has no checkpoint of its own (the ones it has are what its labels.json
        names)."""
        output_dir = self.config.output_dir
        recorded = LabelFile.read(output_dir)
        if (recorded.names is None or self.config.do_train
                or find_checkpoint(output_dir, required=False)):
            return recorded.names
        self.inputs.check_labels(recorded.names, recorded.path,
                                 advice="use another --output_dir, or remove its labels.json "
                                        "to serve the model's own labels")
        return recorded.names

    def prepare_output_dir(self, is_chief: bool) -> None:
        """Called under the output_dir lock before training: check and write what the folder
        must describe (pretraining's albert_config.json)."""

    def wanted_splits(self) -> list[str]:
        """The splits this run reads: train (--do_train), dev (--do_eval), test (--do_predict)."""
        cfg = self.config
        return [split for split, wanted in (("train", cfg.do_train), ("dev", cfg.do_eval),
                                            ("test", cfg.do_predict)) if wanted]

    def prepare_data(self) -> None:
        """Reads (and caches) every input the run will use, before the first step: a bad file
        is found at once, not after hours of training. Called under the output_dir lock."""

    @abc.abstractmethod
    def build_model(self):
        """The Keras model (the driver calls it inside the strategy's scope)."""

    # -- training --------------------------------------------------------------------------
    @abc.abstractmethod
    def objective(self) -> Objective:
        """The training loss (and training metrics) for the train step."""

    @abc.abstractmethod
    def train_dataset_fn(self) -> Callable:
        """`dataset_fn(input_context)` of per-replica training batches."""

    @property
    def num_train_steps(self) -> int:
        return int(self.config.schedule.num_train_steps)

    @property
    def num_warmup_steps(self) -> int:
        return int(self.config.schedule.num_warmup_steps)

    # -- evaluation ------------------------------------------------------------------------
    @property
    def does_evaluate(self) -> bool:
        """Whether this run scores checkpoints (GLUE/RACE: --do_eval; SQuAD: --do_predict)."""
        return bool(self.config.do_eval)

    @abc.abstractmethod
    def evaluate(self, model) -> dict:
        """Metrics of `model` as it is now (a checkpoint just saved or restored)."""

    @abc.abstractmethod
    def eval_log(self):
        """The writer of this task's evaluation results file (`albert_tf.tasks.eval_log`)."""

    def describe_error(self, error) -> str | None:
        """One line for a TensorFlow runtime error raised while reading this task's data (the
        file at fault), or None to let the generic translation speak."""
        return None

    # -- use -------------------------------------------------------------------------------
    @property
    def does_predict(self) -> bool:
        return bool(self.config.do_predict)

    def predict(self, model) -> dict:
        """Writes the task's prediction files from `model`; returns {name: path or value}."""
        raise UsageError(f"--do_predict: {type(self).__name__} has no prediction step")

    def export(self, model, export_dir: str) -> str:
        """Writes a SavedModel of `model` under `export_dir`; returns its version folder."""
        raise UsageError(f"--export_dir: {type(self).__name__} has no export (use "
                         "export_saved_model.py)")


def check_export_formats(config) -> None:
    """`--tflite` / `--onnx` / `--openvino` on a classifier or tagger run: known kinds, the
    runtimes they need, and an `--export_dir` to write them under; UsageError otherwise."""
    if config.tflite:
        parse_tflite_kinds(config.tflite)
        if not config.export_dir:
            raise UsageError("--tflite needs --export_dir (the files go to <export_dir>/tflite)")
    if config.onnx or config.openvino:
        openvino_export.require(config.onnx, config.openvino)  # the kinds, then the runtimes
        if not config.export_dir:
            raise UsageError("--onnx / --openvino need --export_dir (the files go to "
                             "<export_dir>/onnx, <export_dir>/openvino)")
