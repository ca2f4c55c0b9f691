"""What `TextClassifier.fit` takes from Keras users: a `tf.data.Dataset` of (text, label)
examples, Keras callbacks run on the driver's training, and Keras' `verbose=` progress.

The driver trains with its own loop (the original's optimizers, checkpoints by the original's
names), and `fit` saves one checkpoint per epoch, so the callbacks see epochs: `on_train_begin`,
`on_epoch_begin`, `on_epoch_end(epoch, logs)` with the epoch's evaluation (`eval_accuracy`,
`eval_loss`, ... when there is validation data) and `on_train_end`; batch hooks are not called.
A callback that sets `model.stop_training` (EarlyStopping) ends training at that epoch's
checkpoint.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from albert_tf.errors import UsageError
from albert_tf.tasks.driver import StopTraining


def is_dataset(value) -> bool:
    return isinstance(value, tf.data.Dataset)


def _python(value, where: str):
    """A dataset element's text or label as str / int."""
    value = value.numpy() if hasattr(value, "numpy") else value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    raise UsageError(f"{where}: expected str or int values, got {type(value).__name__}")


def as_examples(texts, labels, where: str):
    """(texts, labels) as given, or, for a `tf.data.Dataset` of (text, label) or
    ((text_a, text_b), label) elements (batched or not; `labels` then None), read from it."""
    if not is_dataset(texts):
        if labels is None:
            raise UsageError(f"labels: required with {where} (or pass a tf.data.Dataset of "
                             "(text, label) elements)")
        return texts, labels
    if labels is not None:
        raise UsageError(f"labels: must be None when {where} is a tf.data.Dataset of "
                         "(text, label) elements")
    return _dataset_examples(texts, where)


def _dataset_examples(dataset: tf.data.Dataset, where: str) -> tuple[list, list]:
    spec = dataset.element_spec
    if not isinstance(spec, tuple) or len(spec) != 2:
        raise UsageError(f"{where}: a tf.data.Dataset of (text, label) elements is expected, "
                         f"got elements {spec}")
    first = spec[0][0] if isinstance(spec[0], tuple) else spec[0]
    if first.shape.rank:  # batched: one example per element again
        dataset = dataset.unbatch()
    texts, labels = [], []
    for text, label in dataset:
        if isinstance(text, tuple):
            texts.append(tuple(_python(part, where) for part in text))
        else:
            texts.append(_python(text, where))
        labels.append(_python(label, where))
    return texts, labels


class KerasCallbacks:
    """Keras callbacks on a driver's training checkpoints, one per epoch (see the module
    docstring); `hook` goes into `driver.checkpoint_hooks`."""

    def __init__(self, callbacks, driver, epochs: int, steps_per_epoch: int, first_step: int):
        self.driver = driver
        self.model = driver.model
        self.list = keras.callbacks.CallbackList(list(callbacks), model=self.model,
                                                 epochs=int(epochs), steps=int(steps_per_epoch),
                                                 verbose=0)
        self.steps_per_epoch = int(steps_per_epoch)
        self.first_step = int(first_step)
        self.last_step = self.first_step + int(epochs) * self.steps_per_epoch
        self.logs = {}

    def __enter__(self):
        self.model.stop_training = False
        self.list.on_train_begin()
        self.list.on_epoch_begin(0)
        return self

    def hook(self, step, path) -> None:
        del path
        if getattr(self.model, "optimizer", None) is None and self.driver.optimizer is not None:
            # Callbacks read `model.optimizer` (TensorBoard: the learning rate). Set around
            # Keras' attribute tracking, so the driver's checkpoints keep their object graph.
            object.__setattr__(self.model, "optimizer", self.driver.optimizer)
        epoch = max(0, (int(step) - self.first_step - 1) // self.steps_per_epoch)
        result = self.driver.evaluator.last if self.driver.evaluator is not None else None
        self.logs = {k: float(v) for k, v in (result or {}).items()
                     if np.ndim(v) == 0 and not isinstance(v, (str, bytes))}
        self.list.on_epoch_end(epoch, dict(self.logs))
        if self.model.stop_training:
            raise StopTraining(f"a callback stopped training after epoch {epoch + 1}")
        if int(step) < self.last_step:
            self.list.on_epoch_begin(epoch + 1)

    def __exit__(self, kind, error, traceback):
        if kind is None:
            self.list.on_train_end(dict(self.logs))
        return False


class FitProgress:
    """`fit(verbose=...)` as Keras prints it: 0 nothing, 1 a progress bar per epoch (`Epoch
    i/n`, steps, ETA, the mean training loss so far), 2 one line per epoch; the epoch's
    evaluation (`eval_accuracy`, ...) joins its last line when there is validation data.
    `step` goes into `driver.step_hooks`, `epoch_end` into `driver.checkpoint_hooks` (after
    the evaluation, before other hooks that may stop training)."""

    def __init__(self, verbose: int, driver, epochs: int, steps_per_epoch: int,
                 first_step: int):
        self.verbose, self.driver = int(verbose), driver
        self.epochs, self.steps_per_epoch = int(epochs), int(steps_per_epoch)
        self.first_step = int(first_step)
        self.bar, self.at, self.losses = None, 0, []

    def step(self, step, loss) -> None:
        if not self.verbose:
            return
        epoch, at = divmod(int(step) - self.first_step - 1, self.steps_per_epoch)
        if self.bar is None or at == 0:
            self.close()
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)  # as Keras' fit prints it
            self.bar, self.losses = keras.utils.Progbar(self.steps_per_epoch,
                                                        verbose=self.verbose), []
        self.at = at + 1
        self.losses.append(float(loss))  # shown as Keras shows it: the epoch's mean so far
        self.bar.update(self.at, [("loss", sum(self.losses) / len(self.losses))],
                        finalize=False)

    def epoch_end(self, step, path) -> None:
        """After a checkpoint: an epoch's last step ends its bar, with its evaluation."""
        del step, path
        if self.bar is None or self.at < self.steps_per_epoch:
            return
        result = self.driver.evaluator.last if self.driver.evaluator is not None else None
        self.close({k: float(v) for k, v in (result or {}).items()  # not its `loss`: training's
                    if k.startswith("eval_") and np.ndim(v) == 0
                    and not isinstance(v, (str, bytes))})

    def close(self, logs=None) -> None:
        if self.bar is not None:
            self.bar.update(self.at, list((logs or {}).items()), finalize=True)
            self.bar = None
