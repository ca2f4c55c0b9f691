"""`TextClassifier`: fine-tune, evaluate, predict and export from Python (a notebook), keras-hub
style, through the same library code as `run_classifier.py`:

    clf = TextClassifier.from_pretrained("albert_base", labels=["negative", "positive"])
    clf.fit(texts, labels, epochs=2, validation_data=(dev_texts, dev_labels))
    clf.fit(tf.data.Dataset.from_tensor_slices((texts, labels)), validation_data=dev_dataset,
            callbacks=[keras.callbacks.EarlyStopping("eval_accuracy", mode="max")])
    clf.evaluate(dev_texts, dev_labels)      # {'eval_accuracy': ..., 'eval_macro_f1': ..., ...}
    names, probabilities = clf.predict(["Great phone.", "It broke after a week."])
    clf.export("export")                     # <export>/<version>: the CLI's SavedModel

`multi_label=True`: each text has a list of labels (possibly empty), a sigmoid per label picks
those at or above `threshold`; `long_document="windows"` reads every window of a long text
(`doc_stride`, `window_pooling`), as run_classifier.py's flags of the same names.

Nothing here trains or scores on its own: `fit` runs `ClassificationTask` on the texts (a
`MemorySource`: no data file is written) through the `Driver` (the output_dir lock, labels.json,
checkpoints that are never non-finite, evaluation of each checkpoint and `model.ckpt-best`),
printing Keras' progress (`verbose=`); `evaluate` and `predict` use the task's features and
metrics on the driver's prediction checkpoint (best, else latest), with the model and tokenizer
kept in memory between calls (`tasks.python_api`): they write nothing; `export` is the task's
export of that model. Everything lands in `output_dir` (a new temporary folder by default), the
folder `run_classifier.py --output_dir` would use.
"""

from __future__ import annotations

import contextlib
import json
import os

import numpy as np

from albert_tf import labels as L
from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.run_config import ScheduleConfig
from albert_tf.tasks.classification.api_settings import ApiSettings
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.classification.sources import MemorySource
from albert_tf.tasks.classification.task import classification_driver
from albert_tf.tasks.keras_bridge import KerasCallbacks, as_examples, is_dataset
from albert_tf.tasks.python_api import PythonApi, is_preset
from albert_tf.weights.model_folder import SPM_NAMES, VOCAB_NAMES
from albert_tf.weights.our_checkpoints import checkpoint_step


class TextClassifierError(UsageError):
    """Arguments of the Python API that cannot work (the message names the argument)."""


class TextClassifier(PythonApi):
    """A classifier of texts (or text pairs) into named classes; see the module docstring.

    `labels`: the class names in id order; else `num_classes` (names "0".."n-1"); else the sorted
    set of the labels given to the first `fit` (then recorded in `<output_dir>/labels.json`, which
    a classifier reopened on the same output_dir reads back).
    """

    error = TextClassifierError
    head_id = kind = head = "classifier"

    def __init__(self, albert_config_file: str, init_checkpoint: str | None,
                 spm_model_file: str | None = None, vocab_file: str | None = None,
                 labels=None, num_classes: int | None = None, max_seq_length: int = 128,
                 output_dir: str | None = None, do_lower_case: bool | None = None,
                 seed: int | None = None, multi_label: bool | None = None,
                 threshold: float | None = None, long_document: str | None = None,
                 doc_stride: int | None = None, window_pooling: str | None = None, *,
                 inputs=None, num_hidden_layers: int | None = None):
        if not spm_model_file and not vocab_file:
            raise TextClassifierError("spm_model_file= (or vocab_file= for a WordPiece model) is "
                                      "required: the model folder holds none of "
                                      f"{', '.join(SPM_NAMES + VOCAB_NAMES)}")
        if int(max_seq_length) < 3:  # [CLS] one piece [SEP]
            raise TextClassifierError(f"max_seq_length= must be at least 3, got "
                                      f"{max_seq_length}")
        if labels is not None and num_classes is not None and len(labels) != num_classes:
            raise TextClassifierError(f"labels= names {len(labels)} classes but num_classes="
                                      f"{num_classes}")
        if labels is not None:
            labels = [self._label_name(label, "labels=") for label in labels]
            if len(set(labels)) != len(labels):
                raise TextClassifierError(f"labels= has duplicates: {labels}")
        elif num_classes is not None:
            if int(num_classes) < 2:
                raise TextClassifierError(f"num_classes= must be at least 2, got {num_classes}")
            labels = [str(i) for i in range(int(num_classes))]
        self._open_output_dir(output_dir, "albert_tf_clf_")
        recorded = L.LabelFile.read(self.output_dir, TextClassifierError)
        self.settings = ApiSettings.resolve(
            dict(multi_label=multi_label, threshold=threshold, long_document=long_document,
                 doc_stride=doc_stride, window_pooling=window_pooling), recorded.settings,
            int(max_seq_length), TextClassifierError)
        if labels is not None and len(labels) < (1 if self.multi_label else 2):
            raise TextClassifierError(f"labels= must name at least 2 classes, got {labels}")
        self.labels = self._given_or_recorded(labels, recorded.names)
        self.albert_config_file = self._config_file(albert_config_file)
        self.init_checkpoint = init_checkpoint
        self.spm_model_file = spm_model_file
        self.vocab_file = vocab_file
        self.max_seq_length = int(max_seq_length)
        self.seed = seed
        self.num_hidden_layers = num_hidden_layers  # passes of the shared layer (None: trained)
        self._use_inputs(inputs, init_checkpoint, do_lower_case, labels, num_hidden_layers)
        # Pairs or single texts: fixed by the first fit (recorded for a reopened output_dir).
        self.is_pair = self._read_state().get("pair")

    STATE_FILE = "text_classifier.json"
    # `fit`'s lora_rank= and lora_word_rank= when it leaves them out (`from_pretrained`'s).
    lora_defaults = (None, None)

    @property
    def multi_label(self) -> bool:
        return self.settings.multi_label

    def _read_state(self) -> dict:
        path = os.path.join(self.output_dir, self.STATE_FILE)
        if not os.path.exists(path):
            return {}
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_pretrained(cls, path: str, labels=None, num_classes: int | None = None,
                        spm_model_file: str | None = None, max_seq_length: int = 128,
                        output_dir: str | None = None, albert_config_file: str | None = None,
                        vocab_file: str | None = None, do_lower_case: bool | None = None,
                        seed: int | None = None, num_hidden_layers: int | None = None,
                        lora_rank: int | None = None, lora_word_rank: int | None = None,
                        **settings) -> "TextClassifier":
        """`path`: a model folder (albert_config.json, a checkpoint and, optionally, its
        SentencePiece model or WordPiece vocabulary: the released archives' layout), a run's
        output_dir, a Hugging Face or keras-hub folder, a TF-Hub module, or a checkpoint prefix
        with `albert_config_file=`. `albert_config_file` may also be a preset name
        ("albert_base_v2"); presets are configurations only: weights are never downloaded.
        Left out, the labels are the model's own when its classifier head names them (an HF
        folder's id2label, a run's labels.json), and `do_lower_case` is what its tokenizer
        settings record. `num_hidden_layers`: run the shared layer that many times (between 1
        and the model's trained depth; compute scales with it, the size does not).
        `lora_rank`, `lora_word_rank`: what `fit` takes when its own are left out (LoRA
        adapters, docs/compression.md). `settings`: multi_label, threshold, long_document,
        doc_stride, window_pooling.
        """
        path = os.fspath(path)
        lora = cls._lora_ranks(lora_rank, lora_word_rank)
        if is_preset(path):
            raise TextClassifierError(
                f"{path!r} is a preset: a configuration without weights (nothing is downloaded); "
                "pass the folder of a released model (albert_config.json + checkpoint + "
                f"30k-clean.model), or a checkpoint prefix with albert_config_file={path!r}")
        inputs = cls._inputs(path, albert_config_file, spm_model_file, vocab_file, do_lower_case,
                             None if labels is None else [str(n) for n in labels],
                             num_hidden_layers)
        if albert_config_file is None and inputs.albert_config is None:
            raise TextClassifierError(f"{path} holds no model config (albert_config.json, "
                                      "config.json); pass albert_config_file= (a file or a "
                                      "preset name)")
        if labels is None and num_classes is None:
            labels = inputs.labels
        # A folder stays the folder: it serves the checkpoint it chooses at each call.
        checkpoint = path if os.path.isdir(path) else inputs.source.checkpoint_prefix or path
        # A preset's config is written to output_dir first: the inputs are resolved on it then.
        classifier = cls(albert_config_file or inputs.albert_config, checkpoint,
                         inputs.spm_model_file, inputs.vocab_file, labels, num_classes,
                         max_seq_length, output_dir, do_lower_case, seed, **settings,
                         inputs=None if is_preset(albert_config_file) else inputs,
                         num_hidden_layers=num_hidden_layers)
        classifier.lora_defaults = lora
        return classifier

    # ---------------------------------------------------------------- arguments
    @staticmethod
    def _label_name(label, where: str) -> str:
        # One rule for Python and numpy values: 1.0 would be a class "1.0", True a class "True".
        if isinstance(label, (bool, np.bool_)) or not isinstance(label, (str, int, np.integer)):
            raise TextClassifierError(f"{where}: a label must be a name (str) or a class id (int), "
                                      f"got {type(label).__name__}")
        name = str(label)
        if not name.strip() or name != name.strip():
            raise TextClassifierError(f"{where}: label {name!r} is empty or has surrounding "
                                      "spaces")
        return name

    def _examples(self, texts, labels=None, where="texts", label_where="labels") -> tuple:
        """(texts, label names or None, whether they are pairs), every argument checked; a
        pair becomes an (a, b) tuple."""
        if isinstance(texts, str) or not hasattr(texts, "__len__"):
            raise TextClassifierError(f"{where}: expected a list of texts or of (a, b) pairs, got "
                                      f"{type(texts).__name__}")
        if not len(texts):
            raise TextClassifierError(f"{where}: no texts")
        if labels is not None and len(labels) != len(texts):
            raise TextClassifierError(f"{where}: {len(texts)} texts but {len(labels)} labels")
        pair = not isinstance(texts[0], str)
        checked, names = [], None if labels is None else []
        for i, text in enumerate(texts):
            parts = (text,) if isinstance(text, str) else tuple(text) if isinstance(
                text, (tuple, list)) else None
            if parts is None or len(parts) != (2 if pair else 1) or \
                    not all(isinstance(p, str) for p in parts):
                raise TextClassifierError(
                    f"{where}[{i}]: expected {'an (a, b) pair of str' if pair else 'a str'} like "
                    f"{where}[0], got {text!r:.80}")
            for part in parts:
                if not part.strip():
                    raise TextClassifierError(f"{where}[{i}]: empty text")
            checked.append(parts if pair else parts[0])
            if labels is not None and self.multi_label:
                names.append(L.label_set(labels[i], self._label_of, f"{label_where}[{i}]"))
            elif labels is not None:
                names.append(self._label_of(labels[i], f"{label_where}[{i}]"))
        if self.is_pair is not None and pair != self.is_pair:
            raise TextClassifierError(f"{where}: {'pairs' if pair else 'single texts'} but this "
                                      f"classifier was trained on "
                                      f"{'pairs' if self.is_pair else 'single texts'}")
        return checked, names, pair

    def _label_of(self, label, where: str) -> str:
        if not isinstance(label, (str, bool)) and hasattr(label, "__index__"):  # a class id
            if self.labels is None:
                raise TextClassifierError(
                    f"{where}: {label!r} is a class id but the classifier has no label names; "
                    "pass labels=[...] or num_classes= to from_pretrained, or give names")
            if not 0 <= int(label) < len(self.labels):
                raise TextClassifierError(f"{where}: class id {int(label)} is out of range "
                                          f"(0..{len(self.labels) - 1})")
            return self.labels[int(label)]
        name = self._label_name(label, where)
        if self.labels is not None and name not in self.labels:
            raise TextClassifierError(f"{where}: unknown label {name!r}; the classifier's labels "
                                      f"are {', '.join(self.labels)}")
        return name

    def _run_config(self, schedule: ScheduleConfig | None = None,
                    **fields) -> ClassifierRunConfig:
        """The run config of one call: this classifier's model and folder, and `fields`."""
        return ClassifierRunConfig(
            output_dir=self.output_dir, albert_config_file=self.albert_config_file,
            init_checkpoint=self.init_checkpoint, spm_model_file=self.spm_model_file,
            vocab_file=self.vocab_file, do_lower_case=self.do_lower_case,
            max_seq_length=self.max_seq_length, seed=self.seed,
            num_hidden_layers=self.num_hidden_layers, schedule=schedule or ScheduleConfig(), **self.settings.run_fields(), **fields)

    def _driver(self, config, splits: dict, pair: bool):
        """The driver of a `ClassificationTask` on `splits` ({split: (texts, labels)}), held
        in memory, on this classifier's inputs (its weight source opened once)."""
        return classification_driver(config, MemorySource(
            config, splits, pair, self.settings.task_type, label_list=self.labels),
            self.inputs)

    # ---------------------------------------------------------------- the API
    def fit(self, texts, labels=None, epochs: int = 1, batch_size: int = 32,
            learning_rate: float = 2e-5, validation_data=None, warmup_proportion: float = 0.1,
            optimizer: str = "adamw", keep_checkpoint_max: int = 5, callbacks=None,
            verbose="auto", distill_from: str | None = None,
            lora_rank: int | None = None, lora_word_rank: int | None = None) -> dict:
        """Fine-tunes for `epochs` more epochs (a checkpoint per epoch; with `validation_data`
        = (texts, labels), each is evaluated and the best kept as `model.ckpt-best`, which
        predict and export then use). A second `fit` continues from the last checkpoint.
        `texts` (and `validation_data`) may also be a `tf.data.Dataset` of (text, label) or
        ((text_a, text_b), label) elements, `labels` then None; `callbacks`: Keras callbacks,
        called per epoch (`tasks.keras_bridge`); `verbose`: Keras' (0 silent, 1 or "auto" a
        progress bar, 2 one line per epoch). `distill_from`: a teacher classifier's folder whose
        soft labels this model learns beside the true ones (run_classifier.py --distill_from;
        start from the teacher, e.g. `from_pretrained(teacher, num_hidden_layers=3)`).
        `lora_rank`: train rank-R adapters and the head only (run_classifier.py --lora_rank;
        the base is the pretrained model this classifier started from); `lora_word_rank`: the
        word table adapter's rank (--lora_word_rank; None: 1, 0: none); left out, both are
        `from_pretrained`'s.
        Returns the driver's summary."""
        verbose = self._verbosity(verbose)
        lora_rank, lora_word_rank = self._lora_ranks(
            self.lora_defaults[0] if lora_rank is None else lora_rank,
            self.lora_defaults[1] if lora_word_rank is None else lora_word_rank)
        texts, labels = as_examples(texts, labels, "texts")
        if is_dataset(validation_data):
            validation_data = as_examples(validation_data, None, "validation_data")
        texts, names, pair = self._examples(texts, labels)
        splits = {"train": (texts, names)}
        known = self.labels, self.is_pair
        if self.labels is None:  # the sorted set of the training labels, as run_classifier's
            rows = names if self.multi_label else [(name,) for name in names]
            self.labels = L.derive([(n, f"labels[{i}]") for i, row in enumerate(rows) for n in row],
                                   "labels", error=TextClassifierError, minimum=1 if
                                   self.multi_label else 2, words=L.Words(flag="labels="))
        try:
            if validation_data is not None:
                if not isinstance(validation_data, (tuple, list)) or len(validation_data) != 2:
                    raise TextClassifierError("validation_data: expected (texts, labels)")
                self.is_pair = pair
                dev_texts, dev_names, _ = self._examples(
                    validation_data[0], validation_data[1], "validation_data[0]",
                    "validation_data[1]")
                splits["dev"] = (dev_texts, dev_names)
        except TextClassifierError:
            self.labels, self.is_pair = known
            raise
        try:
            steps_per_epoch, start, new_steps = self._schedule(len(texts), epochs, batch_size)
            schedule = ScheduleConfig(
                train_batch_size=int(batch_size), eval_batch_size=int(batch_size),
                learning_rate=float(learning_rate), optimizer=optimizer,
                num_train_steps=start + new_steps,
                num_warmup_steps=int(new_steps * warmup_proportion) if not start else 0,
                save_checkpoints_steps=steps_per_epoch, keep_checkpoint_max=keep_checkpoint_max,
                log_every_steps=max(1, steps_per_epoch))
            config = self._run_config(schedule, do_train=True, do_eval="dev" in splits,
                                      distill_from=distill_from and os.fspath(distill_from),
                                      lora_rank=lora_rank, lora_word_rank=lora_word_rank)
            driver = self._driver(config, splits, pair)
            with contextlib.ExitStack() as keras_calls:
                if callbacks:
                    bridge = keras_calls.enter_context(KerasCallbacks(
                        callbacks, driver, epochs, steps_per_epoch, start))
                    driver.checkpoint_hooks.append(bridge.hook)
                summary = self._train(driver, verbose, epochs, steps_per_epoch, start,
                                      self._advice_arguments(learning_rate, warmup_proportion))
        except BaseException:
            self.labels, self.is_pair = known
            raise
        self.labels = L.LabelFile.read(self.output_dir).names
        self.is_pair = pair
        write_text_atomically(os.path.join(self.output_dir, self.STATE_FILE),
                              json.dumps({"pair": pair}) + "\n")
        return summary

    def _serving_driver(self, pair: bool):
        """The driver of a `ClassificationTask` to serve from (its examples come per call)."""
        return self._driver(self._run_config(do_predict=True), {}, pair)

    def _served_task(self, splits: dict, pair: bool) -> tuple:
        """(task, model holding the served checkpoint (the driver's choice), its prefix) with
        `splits` ({split: (texts, labels)}) as its examples; nothing is written."""
        task, model, prefix = self._serve(pair)
        task.use_examples(splits, pair)
        return task, model, prefix

    def evaluate(self, texts, labels, batch_size: int = 32) -> dict:
        """The metrics of the served model (best, else latest checkpoint) on these examples:
        eval_results.txt's keys (eval_accuracy, eval_macro_f1, eval_loss, loss, global_step).
        Nothing in output_dir changes (eval_results.txt records `fit`'s evaluations)."""
        self._check_ready()
        batch_size = self._batch_size(batch_size)
        texts, names, pair = self._examples(texts, labels)
        task, model, prefix = self._served_task({"dev": (texts, names)}, pair)
        result = task.evaluate(model, batch_size)
        return {**{k: float(v) for k, v in result.items()}, "global_step": checkpoint_step(prefix)}

    def predict(self, texts, batch_size: int = 32):
        """(label names, probabilities [n, num_classes]) of the served model; multi-label: a
        list of names per text (those at or above the threshold) and sigmoid probabilities."""
        self._check_ready()
        batch_size = self._batch_size(batch_size)
        texts, _, pair = self._examples(texts)
        task, model, _ = self._served_task({"test": (texts, None)}, pair)
        out = task.split_outputs(model, "test", batch_size, with_loss=False)
        real = out["is_real_example"] > 0
        names = task.label_names()
        if self.multi_label:
            chosen = [[n for n, on in zip(names, row) if on] for row in out["predictions"][real]]
        else:
            chosen = [names[int(i)] for i in out["predictions"][real]]
        return chosen, np.asarray(out["probabilities"][real])

    def export(self, export_dir: str) -> str:
        """`run_classifier.py --export_dir`'s SavedModel (serving_default and serve_text with
        probabilities, predictions and labels) in `<export_dir>/<version>`; returns that path."""
        self._check_ready()
        export_dir = self._export_dir(export_dir)
        task, model, _ = self._served_task({}, bool(self.is_pair))
        return self._export(task, model, export_dir)
