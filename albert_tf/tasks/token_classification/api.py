"""`TokenClassifier`: fine-tune, evaluate, tag and export from Python, through the same library
code as `run_ner.py` (the sibling of `TextClassifier`):

    tagger = TokenClassifier.from_pretrained("albert_base_v2/", labels=["B-PER", "I-PER", "O"])
    tagger.fit(sentences, tags, epochs=2, validation_data=(dev_sentences, dev_tags))
    tagger.evaluate(dev_sentences, dev_tags)   # {'eval_f1': ..., 'eval_precision': ..., ...}
    tagger.predict(["Ada Lovelace met Babbage in London"])  # [['B-PER', 'I-PER', 'O', ...]]
    tagger.export("export")                  # <export>/<version>: run_ner.py's SavedModel

A sentence is a list of tokens, or a string (its whitespace-separated words); tags are one list
of tag names per sentence. `fit` writes the examples to a JSONL file and runs `NerTask` through
the `Driver` (the output_dir lock, labels.json, checkpoints, evaluation of each checkpoint and
`model.ckpt-best`), printing Keras' progress (`verbose=`); `evaluate` and `predict` use the
task's windows and metrics on the driver's prediction checkpoint (best, else latest), with the
model and tokenizer kept in memory between calls (`tasks.python_api`): they write nothing;
`export` is the task's export of that model. Everything lands in `output_dir` (a new temporary
folder by default), the folder `run_ner.py --output_dir` would use.
"""

from __future__ import annotations

import json
import os
import tempfile

import keras

from albert_tf.errors import UsageError
from albert_tf.labels import LabelFile
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.python_api import PythonApi
from albert_tf.tasks.token_classification.config import NerRunConfig
from albert_tf.tasks.token_classification.data import Sentence
from albert_tf.tasks.token_classification.task import NerTask
from albert_tf.weights.model_folder import find_checkpoint
from albert_tf.weights.our_checkpoints import checkpoint_step


class TokenClassifierError(UsageError):
    """Arguments of the Python API that cannot work (the message names the argument)."""


class TokenClassifier(PythonApi):
    """A tagger of words (NER, POS, any tag set); see the module docstring.

    `labels`: the tags in id order; else the sorted set of the tags given to the first `fit`
    (then recorded in `<output_dir>/labels.json`, which a tagger reopened on the same output_dir
    reads back).
    """

    error = TokenClassifierError
    head_id, kind, head, label_word = "token_classifier", "tagger", "token classifier", "tags"

    def __init__(self, albert_config_file, init_checkpoint: str | None,
                 spm_model_file: str | None = None, vocab_file: str | None = None,
                 labels=None, max_seq_length: int = 128, doc_stride: int | None = None,
                 output_dir: str | None = None, do_lower_case: bool | None = None,
                 seed: int | None = None, *, inputs=None, num_hidden_layers: int | None = None):
        if not spm_model_file and not vocab_file:
            raise TokenClassifierError("spm_model_file= (or vocab_file= for a WordPiece model) is "
                                       "required")
        if labels is not None:
            labels = [self._tag(label, "labels=") for label in labels]
            if len(set(labels)) != len(labels) or len(labels) < 2:
                raise TokenClassifierError(f"labels= must name at least 2 distinct tags, got "
                                           f"{labels}")
        self._open_output_dir(output_dir, "albert_tf_ner_")
        self.labels = self._given_or_recorded(labels)
        self.albert_config_file = self._config_file(albert_config_file)
        self.init_checkpoint = init_checkpoint
        self.spm_model_file, self.vocab_file = spm_model_file, vocab_file
        self.max_seq_length, self.doc_stride = int(max_seq_length), doc_stride
        self.seed = seed
        self.num_hidden_layers = num_hidden_layers  # passes of the shared layer (None: trained)
        self._use_inputs(inputs, init_checkpoint, do_lower_case, labels, num_hidden_layers)

    @classmethod
    def from_pretrained(cls, path: str, labels=None, albert_config_file: str | None = None,
                        spm_model_file: str | None = None, vocab_file: str | None = None,
                        **kwargs) -> "TokenClassifier":
        """`path`: any weight source (a release folder, a run's output_dir, a Hugging Face
        folder, e.g. an `AlbertForTokenClassification` whose `id2label` gives the tags, a
        keras-hub preset, a TF-Hub module), or a checkpoint prefix with `albert_config_file=`.
        Other keyword arguments go to the constructor; `do_lower_case` left out is what the
        model's tokenizer settings record; `num_hidden_layers` runs the shared layer that many
        times (at most the model's trained depth)."""
        inputs = cls._inputs(path, albert_config_file, spm_model_file, vocab_file,
                             kwargs.get("do_lower_case"), labels, kwargs.get("num_hidden_layers"))
        if albert_config_file is None and inputs.albert_config is None:
            raise TokenClassifierError(f"{path} holds no model config; pass albert_config_file=")
        path = os.fspath(path)  # a folder stays the folder: it serves what it chooses per call
        return cls(albert_config_file or inputs.albert_config,
                   path if os.path.isdir(path) else inputs.source.checkpoint_prefix or path,
                   inputs.spm_model_file,
                   inputs.vocab_file, labels if labels is not None else inputs.labels, **kwargs,
                   inputs=inputs)

    # ---------------------------------------------------------------- arguments
    @staticmethod
    def _tag(tag, where: str) -> str:
        if not isinstance(tag, str) or not tag.strip() or len(tag.split()) != 1:
            raise TokenClassifierError(f"{where}: a tag is a non-empty string without spaces, "
                                       f"got {tag!r}")
        return tag

    def _rows(self, sentences, tags=None, where="sentences", tag_where="tags") -> list[dict]:
        """JSONL rows {"tokens", "tags"?}, every argument checked."""
        if isinstance(sentences, str) or not hasattr(sentences, "__len__") or not len(sentences):
            raise TokenClassifierError(f"{where}: expected a non-empty list of sentences (each a "
                                       "list of tokens or a string)")
        if tags is not None and (isinstance(tags, str) or len(tags) != len(sentences)):
            raise TokenClassifierError(f"{tag_where}: expected one list of tags per sentence "
                                       f"({len(sentences)})")
        rows = []
        for i, sentence in enumerate(sentences):
            tokens = sentence.split() if isinstance(sentence, str) else sentence
            if not isinstance(tokens, (list, tuple)) or not tokens or \
                    not all(isinstance(t, str) for t in tokens):
                raise TokenClassifierError(f"{where}[{i}]: expected a non-empty list of str (or "
                                           f"a string of words), got {sentence!r:.80}")
            row = {"tokens": list(tokens)}
            if tags is not None:
                row["tags"] = [self._tag(t, f"{tag_where}[{i}]") for t in tags[i]] \
                    if isinstance(tags[i], (list, tuple)) else None
                if row["tags"] is None or len(row["tags"]) != len(tokens):
                    raise TokenClassifierError(f"{tag_where}[{i}]: expected {len(tokens)} tags "
                                               f"(one per token), got {tags[i]!r:.80}")
                unknown = [t for t in row["tags"] if self.labels and t not in self.labels]
                if unknown:
                    raise TokenClassifierError(f"{tag_where}[{i}]: unknown tag {unknown[0]!r}; "
                                               f"the tags are {', '.join(self.labels)}")
            rows.append(row)
        return rows

    @staticmethod
    def _write(folder: str, name: str, rows) -> str:
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        return path

    def _config(self, **values) -> NerRunConfig:
        flat = dict(label_list=list(self.labels) if self.labels is not None else None,
                    output_dir=self.output_dir, albert_config_file=self.albert_config_file,
                    init_checkpoint=self.init_checkpoint, spm_model_file=self.spm_model_file,
                    vocab_file=self.vocab_file, do_lower_case=self.do_lower_case,
                    max_seq_length=self.max_seq_length, doc_stride=self.doc_stride,
                    seed=self.seed, num_hidden_layers=self.num_hidden_layers)
        flat.update(values)
        return NerRunConfig.from_flat(flat)

    def _driver(self, config) -> Driver:
        if self.seed is not None:
            keras.utils.set_random_seed(self.seed)
        return Driver.create(NerTask, config, inputs=self.inputs)

    def _data_dir(self):
        """A folder for fit's data files (removed afterwards)."""
        return tempfile.TemporaryDirectory(prefix="api_data_", dir=self.output_dir)

    # ---------------------------------------------------------------- the API
    def fit(self, sentences, tags, epochs: int = 1, batch_size: int = 32,
            learning_rate: float = 5e-5, validation_data=None, warmup_proportion: float = 0.1,
            optimizer: str = "adamw", keep_checkpoint_max: int = 5, verbose="auto",
            lora_rank: int | None = None, lora_word_rank: int | None = None) -> dict:
        """Fine-tunes for `epochs` more epochs (a checkpoint per epoch; with `validation_data`
        = (sentences, tags) each is evaluated and the best kept as `model.ckpt-best`, which
        evaluate, predict and export then use); `verbose`: Keras' (0 silent, 1 or "auto" a
        progress bar, 2 one line per epoch). `lora_rank`: train rank-R adapters and the head
        only (run_ner.py --lora_rank; the base is the pretrained model this tagger started
        from); `lora_word_rank`: the word table adapter's rank (--lora_word_rank; None: 1, 0:
        none). Returns the driver's summary."""
        verbose = self._verbosity(verbose)
        lora_rank, lora_word_rank = self._lora_ranks(lora_rank, lora_word_rank)
        if int(epochs) < 1 or int(batch_size) < 1:
            raise TokenClassifierError(f"epochs and batch_size must be at least 1, got {epochs} "
                                       f"and {batch_size}")
        rows = self._rows(sentences, tags)
        dev_rows = None
        if validation_data is not None:
            if not isinstance(validation_data, (tuple, list)) or len(validation_data) != 2:
                raise TokenClassifierError("validation_data: expected (sentences, tags)")
            dev_rows = self._rows(*validation_data, "validation_data[0]", "validation_data[1]")
        # One step per batch of sentences: a long sentence's extra windows only add to it.
        steps_per_epoch, start, new_steps = self._schedule(len(rows), epochs, batch_size)
        with self._data_dir() as folder:
            values = dict(train_file=self._write(folder, "train.jsonl", rows), do_train=True,
                          train_batch_size=int(batch_size), eval_batch_size=int(batch_size),
                          learning_rate=float(learning_rate), optimizer=optimizer,
                          train_step=start + new_steps,
                          warmup_step=int(new_steps * warmup_proportion) if not start else 0,
                          save_checkpoints_steps=steps_per_epoch,
                          keep_checkpoint_max=keep_checkpoint_max,
                          log_every_steps=max(1, steps_per_epoch), lora_rank=lora_rank,
                          lora_word_rank=lora_word_rank)
            if dev_rows is not None:
                values.update(dev_file=self._write(folder, "dev.jsonl", dev_rows), do_eval=True)
            summary = self._train(self._driver(self._config(**values)), verbose, epochs,
                                  steps_per_epoch, start, self._advice_arguments(
                                      learning_rate, warmup_proportion))
        self.labels = LabelFile.read(self.output_dir).names
        return summary

    # Names the in-memory sentences in messages: never read (`NerTask.use_sentences`).
    MEMORY = "sentences"

    def _serving_driver(self):
        if not self.init_checkpoint and not find_checkpoint(self.output_dir, required=False):
            raise TokenClassifierError(f"the tagger is not fine-tuned yet: call fit() first "
                                       f"({self.output_dir} has no checkpoint)")
        return self._driver(self._config(do_predict=True, test_file=self.MEMORY))

    def _served_task(self, split: str, rows) -> tuple:
        """(task, model holding the prediction checkpoint, its prefix) with `rows` as its
        `split`; nothing is written."""
        task, model, prefix = self._serve()
        task.use_sentences(split, [Sentence(row["tokens"], row.get("tags"),
                                            [i + 1] * len(row["tokens"]), self.MEMORY)
                                   for i, row in enumerate(rows)])
        return task, model, prefix

    def evaluate(self, sentences, tags, batch_size: int = 32) -> dict:
        """The metrics of the served model (best, else latest checkpoint) on these sentences:
        eval_results.txt's keys (eval_f1, eval_precision, eval_recall, eval_f1_<TYPE>,
        eval_accuracy, eval_loss) and global_step."""
        self._check_ready()
        batch_size = self._batch_size(batch_size)
        task, model, prefix = self._served_task("dev", self._rows(sentences, tags))
        result = task.evaluate(model, batch_size)
        return {**{k: float(v) for k, v in result.items()}, "global_step": checkpoint_step(prefix)}

    def predict(self, sentences, batch_size: int = 32) -> list[list[str]]:
        """The tag of every token (a string sentence: of every whitespace-separated word)."""
        self._check_ready()
        batch_size = self._batch_size(batch_size)
        task, model, _ = self._served_task("test", self._rows(sentences))
        ids, _ = task.predict_tags(model, "test", batch_size)
        return task.tag_names(ids)

    def export(self, export_dir: str) -> str:
        """run_ner.py --export_dir's SavedModel (serving_default on ids, serve_text on raw
        text) in `<export_dir>/<version>`; returns that path."""
        self._check_ready()
        export_dir = self._export_dir(export_dir)
        task, model, _ = self._serve()
        return self._export(task, model, export_dir)
