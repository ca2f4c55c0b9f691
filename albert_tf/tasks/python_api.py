"""What the Python APIs (`TextClassifier`, `TokenClassifier`) share: the output_dir and model
files they start from, their labels, `fit(verbose=...)`, the served model kept in memory, and
export.

The served model: the first `predict` / `evaluate` / `export` builds the task's model (or takes
the one `fit` trained), loads the checkpoint the folder serves (`model_folder.find_checkpoint`:
best, else newest) and keeps both, with the task's Python tokenizer. Later calls only tokenize
their texts and run the model: no task, no model, no checkpoint restore, no file. Each call
looks at which checkpoint the folder serves now and at its index file (a listing and a stat,
no read): when another is chosen (another instance's `fit`, another process) or it was
replaced, it is loaded again, into the same model.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import os
import tempfile

from albert_tf import io_utils
from albert_tf.config import PRESETS, AlbertConfig, preset
from albert_tf.errors import UsageError
from albert_tf.labels import LabelFile
from albert_tf.models.lora import merged_lora
from albert_tf.tasks.keras_bridge import FitProgress
from albert_tf.tasks.output_lock import OutputDirLock
from albert_tf.weights.model_folder import (CONFIG_NAME, checkpoint_stamp, find_checkpoint,
                                            list_checkpoints)
from albert_tf.weights.run_inputs import resolve_inputs

VERBOSE = (0, 1, 2)  # Keras': silent, a progress bar per epoch, one line per epoch


def is_preset(name) -> bool:
    """A preset's name ("albert_base") that names no local file or folder: a release archive
    extracts to exactly such a folder, and a folder always wins."""
    return isinstance(name, str) and (name in PRESETS or f"{name}_v2" in PRESETS) \
        and not os.path.exists(name)


@dataclasses.dataclass
class Served:
    """A driver whose task and model serve the API's calls; `stamp`: the output_dir's state
    when its checkpoint was loaded (`loaded`)."""

    driver: object
    loaded: bool = False
    stamp: object = None
    prefix: str | None = None


class PythonApi(abc.ABC):
    """The base of the Python APIs (see the module docstring). Subclasses set `error` (their
    UsageError type), `kind` (the word for the model in messages) and `_serving_driver`."""

    error = UsageError
    head_id = None          # the head the API serves (`models.HEAD_CLASSES`' ids)
    kind = "model"          # what the messages call the model
    head = "model"          # and its trained head
    label_word = "labels"
    _served: Served | None = None

    # ---------------------------------------------------------------- construction
    def _open_output_dir(self, output_dir, prefix: str) -> str:
        self.output_dir = os.path.abspath(output_dir or tempfile.mkdtemp(prefix=prefix))
        os.makedirs(self.output_dir, exist_ok=True)
        return self.output_dir

    def _config_file(self, value) -> str:
        """A config file's absolute path; an `AlbertConfig` (a weight source's own, an HF
        folder's config.json) or a preset name becomes `<output_dir>/albert_config.json`."""
        if isinstance(value, AlbertConfig) or is_preset(value):
            path = os.path.join(self.output_dir, CONFIG_NAME)
            (value if isinstance(value, AlbertConfig) else preset(value)).to_json_file(path)
            return path
        value = os.fspath(value)
        if os.path.isfile(value):
            return os.path.abspath(value)
        raise self.error(f"albert_config_file={value!r}: no such file"
                         f"{' and not a preset' if self.kind == 'classifier' else ''}")

    @classmethod
    def _inputs(cls, init_checkpoint, albert_config_file=None, spm_model_file=None,
                vocab_file=None, do_lower_case=None, labels=None, num_hidden_layers=None):
        """The `RunInputs` of every run of this object (`weights.run_inputs`): the weight source
        opened once; config, tokenizer, casing (None: as the model records it) and labels
        taken from it when not given, and checked against it when given (labels: their order
        too; a new fit may give its head other labels). `num_hidden_layers`: the passes of
        the shared layer every run makes (None: the model's trained depth)."""
        if init_checkpoint is not None:
            init_checkpoint = os.fspath(init_checkpoint)
            if io_utils.is_local(init_checkpoint) and not os.path.isdir(init_checkpoint) \
                    and not os.path.exists(init_checkpoint + ".index"):
                raise cls.error(f"{init_checkpoint}: neither a model folder nor a checkpoint "
                                f"prefix (no {init_checkpoint}.index)")
        try:
            return resolve_inputs(
                init_checkpoint=init_checkpoint, albert_config_file=None if is_preset(
                    albert_config_file) else albert_config_file, spm_model_file=spm_model_file,
                vocab_file=vocab_file, do_lower_case=do_lower_case, labels=labels,
                labels_flag="labels=", head=cls.head_id,
                trains=True, num_hidden_layers=num_hidden_layers,
                passes_flag="num_hidden_layers")
        except UsageError as error:
            raise cls.error(str(error)) from None

    def _use_inputs(self, inputs, init_checkpoint, do_lower_case, labels,
                    num_hidden_layers=None) -> None:
        """`self.inputs` (`inputs` as from_pretrained resolved them, else resolved here from the
        constructor's arguments) and what they decide: the casing."""
        if inputs is None:  # (the sequence length is checked by each run's task, as the CLI's)
            inputs = self._inputs(init_checkpoint, self.albert_config_file, self.spm_model_file,
                                  self.vocab_file, do_lower_case, labels, num_hidden_layers)
        self.inputs, self.do_lower_case = inputs, inputs.do_lower_case

    # ---------------------------------------------------------------- labels
    def _given_or_recorded(self, labels, recorded=None):
        """`labels` given, else the ones `<output_dir>/labels.json` records (`recorded`, else
        read); when both are there they must be the same."""
        if recorded is None:
            recorded = LabelFile.read(self.output_dir, self.error).names
        if labels is not None and recorded is not None and recorded != labels:
            raise self.error(f"{self.output_dir}/labels.json holds the {self.label_word} "
                             f"{recorded} but labels= is {labels}; use another output_dir")
        return labels if labels is not None else recorded

    def _check_ready(self):
        if self.labels is None:
            raise self.error(f"the {self.kind} has no {self.label_word} yet: fit it first, or pass "
                             "labels=[...]" + (" or num_classes= to from_pretrained"
                                               if self.kind == "classifier" else ""))

    # ---------------------------------------------------------------- fit
    def _verbosity(self, verbose) -> int:
        """Keras' `verbose=`: 0, 1, 2 or "auto" (1)."""
        if verbose == "auto":
            return 1
        if isinstance(verbose, bool) or not isinstance(verbose, int) or verbose not in VERBOSE:
            raise self.error("verbose= must be 0 (silent), 1 (a progress bar), 2 (one line per "
                             f"epoch) or 'auto', got {verbose!r}")
        return verbose

    def _schedule(self, count: int, epochs: int, batch_size: int) -> tuple[int, int, int]:
        """(steps per epoch, first step, new steps) of a `fit` on `count` examples: a second
        fit continues from the last checkpoint of output_dir."""
        if int(epochs) < 1 or int(batch_size) < 1:
            raise self.error(f"epochs and batch_size must be at least 1, got {epochs} and "
                             f"{batch_size}")
        steps_per_epoch = math.ceil(count / int(batch_size))
        saved = list_checkpoints(self.output_dir)
        return steps_per_epoch, saved[-1][0] if saved else 0, steps_per_epoch * int(epochs)

    def _batch_size(self, value) -> int:
        """A prediction call's `batch_size=`: a whole number of at least 1."""
        if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < 1:
            raise self.error(f"batch_size= must be a whole number of at least 1, got {value!r}")
        return int(value)

    @classmethod
    def _lora_ranks(cls, rank, word_rank) -> tuple[int | None, int | None]:
        """A `fit`'s (or `from_pretrained`'s) `lora_rank=` and `lora_word_rank=` (the scripts'
        --lora_rank and --lora_word_rank): None, or whole numbers of at least 1 and 0, the
        second only with the first."""
        for name, value, least in (("lora_rank", rank, 1), ("lora_word_rank", word_rank, 0)):
            if value is not None and (isinstance(value, bool) or not hasattr(value, "__index__")
                                      or int(value) < least):
                raise cls.error(f"{name}= must be a whole number of at least {least}, got "
                                f"{value!r}")
        if word_rank is not None and rank is None:
            raise cls.error("lora_word_rank= is used only with lora_rank=")
        return (None if rank is None else int(rank),
                None if word_rank is None else int(word_rank))

    def _advice_arguments(self, learning_rate, warmup_proportion) -> dict:
        """{role: (argument, value)} the health advice of a `fit` names: the API's own
        arguments (warmup_proportion=, not the scripts' --warmup_step)."""
        return {"learning_rate": ("learning_rate", learning_rate),
                "warmup": ("warmup_proportion", warmup_proportion),
                "seed": ("seed", self.seed),
                "init_checkpoint": ("init_checkpoint", self.init_checkpoint)}

    def _train(self, driver, verbose: int, epochs: int, steps_per_epoch: int,
               first_step: int, arguments: dict | None = None) -> dict:
        """`driver.run()` with the progress `verbose` asks for; its task and model then serve
        the next calls (the prediction checkpoint is loaded into that model, not a new one).
        `arguments`: what the health advice names (`_advice_arguments`)."""
        self._served = None
        driver.advice_names = dict(arguments or {})
        progress = FitProgress(verbose, driver, epochs, steps_per_epoch, first_step)
        driver.step_hooks.append(progress.step)
        driver.checkpoint_hooks.insert(0, progress.epoch_end)
        try:
            summary = driver.run()
        finally:
            progress.close()
        driver.optimizer = None  # serving needs the model only
        self._served = Served(driver)
        return summary

    # ---------------------------------------------------------------- serving
    def _stamp(self):
        """Which checkpoint is served, and its index file's time and size
        (`model_folder.checkpoint_stamp`): the output_dir's, else the init_checkpoint's. None
        when neither holds one (weights of another format) or it cannot be told (gs://)."""
        return checkpoint_stamp(self.output_dir) or (
            checkpoint_stamp(self.init_checkpoint) if self.init_checkpoint else None)

    def _follow_source(self) -> None:
        """A model folder given as init_checkpoint serves the checkpoint it chooses now."""
        source = self.inputs.source
        if source is not None and source.checkpoint_prefix and os.path.isdir(source.path):
            source.checkpoint_prefix = find_checkpoint(source.path, required=False) \
                or source.checkpoint_prefix

    def _not_trained(self, prefix):
        return self.error(f"the {self.kind} is not fine-tuned yet: call fit() first ({prefix} "
                          f"holds no trained {self.head} head; {self.output_dir} has no "
                          "checkpoint)")

    def _serve(self, *args) -> tuple:
        """(task, model, checkpoint prefix) serving this call: kept from the last call (or
        `fit`) while the served checkpoint is the same file (`_stamp`); else the checkpoint
        the folder serves now loaded into the kept model, or into a new one
        (`_serving_driver(*args)`) on the first call."""
        served = self._served
        stamp = self._stamp()
        if served is None or not served.loaded or served.stamp != stamp:
            driver = served.driver if served is not None else self._serving_driver(*args)
            with OutputDirLock(self.output_dir):
                self._follow_source()
                _, _, prefix = driver.load_trained(self._not_trained)
            served = self._served = Served(driver, True, stamp, prefix)
        return served.driver.task, served.driver.model, served.prefix

    @abc.abstractmethod
    def _serving_driver(self, *args):
        """The driver (task and model) a first prediction call serves with; each API builds
        its own task from `args`."""

    # ---------------------------------------------------------------- export
    def _export_dir(self, export_dir) -> str:
        export_dir = os.path.abspath(os.fspath(export_dir))
        if os.path.exists(export_dir) and not os.path.isdir(export_dir):
            raise self.error(f"{export_dir}: exists and is not a folder (exports go to "
                             f"{export_dir}/<version>)")
        return export_dir

    def _export(self, task, model, export_dir) -> str:
        """The task's export of the served model in `<export_dir>/<version>`."""
        with OutputDirLock(self.output_dir), merged_lora(model):
            return task.export(model, io_utils.absolute_path(export_dir))

    def __repr__(self):
        return (f"{type(self).__name__}(labels={self.labels}, "
                f"max_seq_length={self.max_seq_length}, output_dir={self.output_dir!r})")
