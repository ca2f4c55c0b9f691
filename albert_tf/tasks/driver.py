"""The one run flow of every task: lock the output_dir, train, evaluate each checkpoint and keep
the best, predict, export.

    summary = Driver(GlueTask(config)).run()

What the driver guarantees, whatever the task:
- One run per output_dir: an exclusive lock (`albert_tf.lock`, held by the chief) makes a second
  run on the same folder stop at once with one line, before it writes anything.
- Checkpoints never hold non-finite weights, and a run never resumes from one that does
  (`albert_tf.training.checkpoint_files`).
- Every load (initialisation, evaluation, prediction, export) is `albert_tf.weights.load`; the
  trainer gets it as its `initialize` callable.
- Evaluation state (`best_trial.txt`: last evaluated step, best step, best value) survives
  restarts, so a re-run evaluates only new checkpoints; `model.ckpt-best` is a copy of the best.
- Prediction and export use the checkpoint the output_dir serves (`model_folder.find_checkpoint`,
  the rule of every folder reader: `model.ckpt-best`, else the newest), else `--init_checkpoint`
  (a folder: by the same rule) only when it holds the task's trained head: never a pretrained
  encoder with an untrained head.
"""

from __future__ import annotations

import tensorflow as tf
from absl import logging

from albert_tf import io_utils
from albert_tf.errors import CheckpointError, InputError, UsageError
from albert_tf.models.lora import merged_lora, parameter_counts, word_lora_rank
from albert_tf.optimization import create_optimizer
from albert_tf.tasks.base import Task
from albert_tf.tasks.eval_state import CheckpointEvaluator
from albert_tf.tasks.output_lock import OutputDirLock
from albert_tf.training.checkpoint_files import list_checkpoints
from albert_tf.training.health import TrainingHealth, encoder_spread, settings_of
from albert_tf.training.loop import Trainer, check_batch_split
from albert_tf.training.memory import GB, check_step_fits
from albert_tf.training.runtime import Runtime
from albert_tf.weights.loading import load
from albert_tf.weights.lora_base import keep_adapter, read_record, start_lora, write_record
from albert_tf.weights.model_folder import find_checkpoint, write_model_files
from albert_tf.weights.our_checkpoints import checkpoint_step
from albert_tf.weights.readers import open_source
from albert_tf.weights.run_inputs import resolve_inputs


class StopTraining(Exception):
    """Raised by a checkpoint hook to end training at that checkpoint (e.g. Keras'
    EarlyStopping through `TextClassifier.fit(callbacks=...)`); the run goes on from there."""


class Driver:
    """Runs `task` as its config's do_train / do_eval / do_predict / export_dir say.

    `checkpoint_hooks`: more `hook(step, path)` calls after each checkpoint saved in training
    (after its evaluation, whose result is `evaluator.last`); `step_hooks`: `hook(step, loss)`
    after each training step (a Python API's progress bar)."""

    def __init__(self, task: Task, runtime=None):
        self.task = task
        self.config = task.config
        self._runtime = runtime
        self._model = None
        self.evaluator = None
        self.checkpoint_hooks = []
        self.step_hooks = []
        self.optimizer = None  # training's, once built (checkpoint hooks may read it)
        # {role: (name, value)} a caller names in the health advice in place of the flags
        # (a Python API's own arguments: `training.health.settings_of`).
        self.advice_names = {}
        # The run's health (`training.health`): its findings go into every evaluation's
        # results and the summary as `health = ...`.
        self.health = TrainingHealth(settings_of(self.config))
        self._eval_step = None  # the step of the checkpoint being evaluated
        self._final_step = None  # the step of the run's last evaluation (health judges it)
        self._lora_base = None  # --lora_rank: the base checkpoint's prefix

    @classmethod
    def create(cls, task_class, config, runtime=None, inputs=None) -> "Driver":
        """Sets the runtime up first, then builds the task: a multi-worker strategy must exist
        before TensorFlow runs anything (the task's input checks read files with it).
        `inputs`: the `RunInputs` a caller already resolved (a Python API's, for all its runs)."""
        runtime = runtime or Runtime(config.runtime)
        # The run's inputs (weight source, model config, tokenizer, casing, labels), resolved
        # and checked once; the task gets them and keeps the caller's config as it is.
        task_type = getattr(task_class, "func", task_class)
        head_for = getattr(task_type, "head_for", None)
        head = head_for(config) if head_for else getattr(task_type, "head", None)
        task = task_class(config, inputs=inputs or resolve_inputs(config, head=head))
        task.runtime = runtime
        return cls(task, runtime)

    # ---------------------------------------------------------------- set-up
    @property
    def runtime(self):
        if self._runtime is None:
            self._runtime = Runtime(self.config.runtime)
        return self._runtime

    @property
    def model(self):
        if self._model is None:
            with self.runtime.scope():
                model = self.task.build_model()
                if self.lora_rank:
                    self._start_lora(model)
                self._model = model
        return self._model

    @property
    def lora_rank(self) -> int:
        """--lora_rank of a training run (0: none): the encoder frozen, adapters trained."""
        return int(getattr(self.config, "lora_rank", None) or 0) if self.config.do_train else 0

    def _check_lora_start(self) -> str | None:
        """Before anything is written: a LoRA run's base (--init_checkpoint, a checkpoint that
        is not itself a LoRA run's), returned; a full run refuses to start from a LoRA folder."""
        path = self.config.init_checkpoint
        weights = self.task.inputs.weights(path) if path else None
        base = getattr(weights, "checkpoint_prefix", None)
        adapters = bool(base) and read_record(base) is not None
        if not self.lora_rank:
            if adapters:
                raise UsageError(f"--init_checkpoint={path} holds LoRA adapters (its lora.json), "
                                 "not a model to train on: start from its base (lora.json "
                                 "names it), with or without --lora_rank")
            return None
        if not path:
            raise UsageError("--lora_rank needs --init_checkpoint: the base model the adapters "
                             "are trained on (lora.json records it)")
        if not base or not tf.io.gfile.exists(f"{base}.index"):
            raise UsageError(f"--lora_rank: --init_checkpoint={path} is not a checkpoint (an "
                             "original TF1 one or a run's output_dir); convert it first")
        if adapters:
            raise UsageError(f"--lora_rank: --init_checkpoint={path} is a LoRA run's folder; "
                             "pass its base (its lora.json names it)")
        return base

    def _start_lora(self, model) -> None:
        """The base (--init_checkpoint) loaded into `model`, then frozen with adapters."""
        base = self._lora_base or self._check_lora_start()
        weights = self.task.inputs.weights(self.config.init_checkpoint)
        group0 = getattr(self.config, "init_from_group0", False)
        start_lora(model, base, self.lora_rank, lambda target: logging.info(
            "%s", load(target, weights, init_from_group0=group0, new_head=True)),
            getattr(self.config, "lora_word_rank", None))
        self._lora_base = base

    @property
    def output_dir(self) -> str:
        return self.config.output_dir

    def load(self, checkpoint, require_head=False) -> str:
        # --init_checkpoint is the source the task's inputs opened: not opened (or read) again.
        description = load(self.model, self.task.inputs.weights(checkpoint),
                           require_head=require_head)
        logging.info("%s", description)
        return description

    # ---------------------------------------------------------------- the run
    def run(self) -> dict:
        try:
            return self._run()
        except tf.errors.OpError as error:
            message = self.task.describe_error(error)
            if message is None:
                raise
            raise InputError(message) from None

    def _run(self) -> dict:
        cfg = self.config
        self.task.validate()  # each task names what it needs, in the original's words
        logging.info("runtime: %s", self.runtime.describe())
        if cfg.do_train:
            check_batch_split(cfg.schedule.train_batch_size, self.runtime.num_replicas,
                              cfg.runtime.gradient_accumulation_steps)
            self.check_memory()
            self._lora_base = self._check_lora_start()
        tf.io.gfile.makedirs(self.output_dir)
        is_chief = self.runtime.is_chief
        with OutputDirLock(self.output_dir, enabled=is_chief):
            self.task.prepare_output_dir(is_chief)
            if cfg.do_train:  # the folder will hold a model: make it usable alone
                write_model_files(self.output_dir, cfg, is_chief)
                if self.lora_rank:
                    self._write_lora_record(is_chief)
            self.task.prepare_data()
            summary = {}
            if cfg.do_train:
                summary["train"] = self.train()
            if self.task.does_evaluate:
                summary["eval"] = self.evaluate_checkpoints()
            if is_chief and (cfg.do_train or self.task.does_evaluate):  # a LoRA run's file to ship
                keep_adapter(self.output_dir, lambda prefix: self.load(prefix) and self.model)
            if self.task.does_predict:
                self.load(self.prediction_checkpoint(), require_head=True)
                summary["predict"] = self.task.predict(self.model)
            if cfg.export_dir:
                self.load(self.prediction_checkpoint(), require_head=True)
                with merged_lora(self.model):  # adapters (if any) merged into the kernels
                    summary["export"] = self.task.export(self.model,
                                                         io_utils.absolute_path(cfg.export_dir))
        summary.update(self.health.fields())
        return summary

    def _write_lora_record(self, is_chief: bool) -> None:
        """lora.json (`weights.lora_base`), and the parameters the run trains in the log."""
        trained, total = parameter_counts(self.model)
        logging.info("--lora_rank=%d: %d trainable parameters of %d (%.2f %%)", self.lora_rank,
                     trained, total, 100.0 * trained / total)
        if is_chief:
            write_record(self.output_dir, self._lora_base, self.lora_rank, (trained, total),
                         word_lora_rank(self.model))

    def check_memory(self) -> None:
        """Before anything is read or written: a CPU training step that cannot fit in this
        machine's memory is one error naming the batch flags (`training.memory`)."""
        cfg, albert_config = self.config, getattr(self.task, "albert_config", None)
        length = getattr(cfg, "max_seq_length", None)
        if albert_config is None or length is None or tf.config.list_physical_devices("GPU") \
                or cfg.runtime.distribution_strategy == "tpu":
            return
        needed = check_step_fits(albert_config, cfg.schedule.train_batch_size, length,
                                 cfg.runtime.gradient_accumulation_steps,
                                 getattr(cfg, "max_predictions_per_seq", 1),
                                 cfg.runtime.mixed_precision == "bf16",
                                 recompute=cfg.runtime.recompute)
        logging.info("a training step needs about %.2f GB of memory (estimate)", needed / GB)

    def train(self):
        task, schedule = self.task, self.config.schedule
        model = self.model
        with self.runtime.scope():
            optimizer = create_optimizer(
                schedule.learning_rate, task.num_train_steps, task.num_warmup_steps,
                schedule.optimizer, schedule.poly_power, schedule.start_warmup_step,
                skip_nonfinite=self.config.runtime.mixed_precision == "fp16")
        self.optimizer = optimizer
        self.health = TrainingHealth(settings_of(self.config, task.num_warmup_steps,
                                                 self.advice_names),
                                     getattr(task, "chance_loss", lambda: None)())
        self._final_step = task.num_train_steps
        trainer = Trainer(self.runtime, model, optimizer, task.objective(), self.output_dir,
                          keep_checkpoint_max=schedule.keep_checkpoint_max or None,
                          health=self.health)
        if self.step_hooks:
            trainer.train_step = self._with_step_hooks(trainer)
        hooks = list(self.checkpoint_hooks)
        if task.does_evaluate and task.evaluate_during_training:
            hooks.insert(0, self._evaluate_checkpoint)

        def on_checkpoint(step, path):
            for hook in hooks:
                hook(step, path)

        try:
            return trainer.train(task.train_dataset_fn(), schedule.train_batch_size,
                                 task.num_train_steps, schedule.save_checkpoints_steps,
                                 schedule.log_every_steps, initialize=self._initializer(),
                                 on_checkpoint=on_checkpoint if hooks else None)
        except StopTraining as stop:
            logging.info("training stopped at step %d: %s", trainer.step, stop)
            return None

    def _with_step_hooks(self, trainer):
        """The trainer's step, then `step_hooks` with the step reached and its loss."""
        step_fn = trainer.train_step

        def step_then_hooks(iterator):
            result = step_fn(iterator)
            for hook in self.step_hooks:
                hook(trainer.step, result[0])
            return result
        return step_then_hooks

    def _initializer(self):
        """What the trainer calls on a fresh run (not when resuming): `--init_checkpoint`
        loaded into the model (as Model Garden's `init_fn`), or None without one."""
        path = self.config.init_checkpoint
        if not path or self.lora_rank:  # a LoRA run's base is loaded as its model is built
            return None
        group0 = getattr(self.config, "init_from_group0", False)
        weights = self.task.inputs.weights(path)

        def initialize(model):
            # A head of another class count than the run's is dropped, with a warning.
            description = load(model, weights, init_from_group0=group0, new_head=True)
            self.check_start(model)
            return description
        return initialize

    def check_start(self, model) -> None:
        """How much the initial encoder's outputs vary over one training batch: nearly not at
        all is a collapsed or under-trained checkpoint (`training.health`). Not on TPUs (the
        weights live there; an eager call would copy them to the host)."""
        if self.config.runtime.distribution_strategy == "tpu":
            return
        dataset = self.task.train_dataset_fn()(tf.distribute.InputContext())
        measured = encoder_spread(model, next(iter(dataset)))
        if measured is not None:
            self.health.check_start(*measured)

    def _evaluate_checkpoint(self, step, prefix):
        self._eval_step = step
        return self._evaluator().on_checkpoint(step, prefix)

    def _scored(self) -> dict:
        """The task's evaluation, with the run's health when something was found: one class
        predicted for every dev example, or what training found before."""
        result = self.task.evaluate(self.model)
        predictions = getattr(self.task, "eval_predictions", None)
        if predictions is not None:
            self.health.check_predictions(self._eval_step, *predictions)
        final = self._final_step is None or (self._eval_step or 0) >= self._final_step
        self.health.check_evaluation(self._eval_step, result.get("eval_loss", result.get("loss")),
                                     predictions, final)
        return {**result, **self.health.fields()}

    def _evaluator(self) -> CheckpointEvaluator:
        if self.evaluator is None:  # one per run: evaluations during training continue in it
            self.evaluator = CheckpointEvaluator(
                self.output_dir, self._scored, self.task.best_metric,
                self.task.eval_log(), self.load, is_chief=self.runtime.is_chief,
                initial_best=self.task.best_initial_value)
        return self.evaluator

    def evaluate_checkpoints(self) -> dict:
        """Evaluates the checkpoints of output_dir not evaluated yet, in step order (only the
        latest when the task evaluates just one); with none there at all, `--init_checkpoint`."""
        evaluator = self._evaluator()
        saved = list_checkpoints(self.output_dir)
        if not saved or (not self.task.evaluate_during_training and not self.config.do_train
                         and self.config.init_checkpoint):
            if not self.config.init_checkpoint:
                raise UsageError(f"--do_eval: no checkpoint in {self.output_dir} to evaluate "
                                 "(train first or pass --init_checkpoint)")
            self.load(self.config.init_checkpoint)
            self._eval_step = self._init_step()
            evaluator.evaluate_other(self._eval_step)
            return evaluator.finish()
        if not self.task.evaluate_during_training:
            saved = saved[-1:]
        self._final_step = saved[-1][0]
        fresh = [(step, prefix) for step, prefix in saved if step > evaluator.state.last_step]
        if not fresh and not self.config.do_train:
            state = evaluator.state
            best = (f"; the best, {evaluator.metric} {state.best_value:.6g}, at step "
                    f"{state.best_step}" if state.best_step >= 0 and evaluator.metric else "")
            logging.warning("--do_eval: every checkpoint in %s was evaluated before (the newest "
                            "at step %d%s; see %s): nothing new to evaluate (delete %s to "
                            "evaluate them again)", self.output_dir, saved[-1][0], best,
                            evaluator.json_path, evaluator.state_path)
        for step, prefix in fresh:
            self.load(prefix)
            self._evaluate_checkpoint(step, prefix)
        return evaluator.finish()

    def _init_step(self) -> int:
        """The step of `--init_checkpoint` (0 for weights of another format: HF, keras-hub)."""
        source = self.task.inputs.source or open_source(self.config.init_checkpoint)
        prefix = source.checkpoint_prefix
        return checkpoint_step(prefix) if prefix else 0

    def load_trained(self, not_trained) -> tuple:
        """(task, model, prefix) with the prediction checkpoint loaded, its trained head
        required, for a Python API to serve from. When only `--init_checkpoint` is there and it
        holds no trained head, raises `not_trained(prefix)` (the API's "fit first") instead.
        labels.json is checked against the task's labels, never written: serving writes
        nothing."""
        prefix = self.prediction_checkpoint()
        try:
            self.load(prefix, require_head=True)
        except CheckpointError as error:
            if prefix != self.config.init_checkpoint or "no trained head" not in str(error):
                raise
            raise not_trained(prefix) from None
        self.task.prepare_output_dir(False)
        source = self.task.inputs.weights(prefix)  # a folder: the checkpoint it chose
        return self.task, self.model, getattr(source, "checkpoint_prefix", None) or prefix

    def prediction_checkpoint(self) -> str:
        """The checkpoint this output_dir serves (`find_checkpoint`: `model.ckpt-best`, else the
        newest), else `--init_checkpoint` (the load then refuses one without the task's head)."""
        prefix = find_checkpoint(self.output_dir, required=False)
        if prefix:
            logging.info("serving %s", prefix)
            return prefix
        if self.config.init_checkpoint:
            return self.config.init_checkpoint
        raise UsageError(f"prediction and export need a fine-tuned checkpoint: {self.output_dir} "
                         "has none; train first (--do_train) or pass a fine-tuned "
                         "--init_checkpoint")
