"""Token classification as a `Task` (what `run_ner.py` runs through the driver): tagged
sentences in, a tag per input token out.

Tags are `--label_list`, else the sorted set of the training tags; they are written to
`<output_dir>/labels.json` before training and read back from it by a later evaluation,
prediction or export run (else taken from an HF `--init_checkpoint`'s `id2label`). The best
checkpoint is the one with the highest entity F1 (`eval_f1`), or the highest token accuracy for
a tag set without B-/I-/E-/S- prefixes (POS tags).
"""

from __future__ import annotations

import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf import labels as L
from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.models import AlbertTokenClassifier, token_classifier_loss
from albert_tf.run_config import SPLIT_FLAGS
from albert_tf.serving import openvino_export, tflite
from albert_tf.tasks.base import Task, check_export_formats, replica_dataset_fn
from albert_tf.tasks.distill import check_teacher, distilled, load_teacher
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.inference import array_batches, predict_function
from albert_tf.tasks.token_classification import data as D
from albert_tf.tasks.token_classification import features as F
from albert_tf.tasks.token_classification import results as R
from albert_tf.tasks.token_classification.config import NerRunConfig
from albert_tf.tasks.token_classification.export import export_token_classifier, tflite_call
from albert_tf.tasks.token_classification.metrics import tagging_metrics
from albert_tf.tokenization import unk
from albert_tf.training.health import label_entropy
from albert_tf.training.steps import Objective

CACHE_NAMES = {"train": "ner_train.tf_record", "dev": "ner_eval.tf_record",
               "test": "ner_predict.tf_record"}


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


class NerTask(Task):
    head = "token_classifier"
    teacher = teacher_inputs = None  # --distill_from: its inputs (checked), then its model

    def __init__(self, config: NerRunConfig, inputs=None):
        super().__init__(config, inputs)
        config = self.config  # the filled copy (the caller's is left as given)
        self.validate()
        self.load_text_model()
        self.pieces = F.WordPieces(self.tokenizer, config.do_lower_case)
        self.cached_dir = config.cached_dir or config.output_dir
        self._sentences, self._features = {}, {}
        self._labels = None
        self._predict_fn = None

    def validate(self):
        cfg = self.config
        if not (cfg.do_train or cfg.do_eval or cfg.do_predict or cfg.export_dir):
            raise UsageError("At least one of `do_train`, `do_eval`, `do_predict` or "
                             "`export_dir` must be set.")
        cfg.require("output_dir", "albert_config_file")
        if not cfg.spm_model_file and not cfg.vocab_file:
            raise UsageError("--spm_model_file or --vocab_file is required (--vocab_file "
                             "alone: a WordPiece model such as the Chinese ALBERTs)")
        for split, wanted in (("train", cfg.do_train), ("dev", cfg.do_eval),
                              ("test", cfg.do_predict)):
            if wanted and not cfg.split_file(split):
                raise UsageError(f"--do_{'eval' if split == 'dev' else split} needs "
                                 f"--{SPLIT_FLAGS[split]}")
        if cfg.max_seq_length < 3:
            raise UsageError(f"--max_seq_length must be at least 3 ([CLS] word [SEP]), got "
                             f"{cfg.max_seq_length}")
        if not 1 <= cfg.stride <= cfg.max_seq_length - 2:
            raise UsageError(f"--doc_stride must be between 1 and --max_seq_length - 2 "
                             f"({cfg.max_seq_length - 2}), got {cfg.doc_stride}")
        check_export_formats(cfg)
        super().validate()

    # ---------------------------------------------------------------- tags
    @property
    def labels(self) -> list[str]:
        """The tags in id order (see the module docstring)."""
        if self._labels is None:
            self._labels = self._resolve_labels()
        return self._labels

    def _resolve_labels(self) -> list[str]:
        cfg = self.config
        label_list = L.parse(cfg.label_list)
        if cfg.do_train:
            return self._derive(label_list)
        if label_list:
            return label_list
        recorded = self.recorded_labels()
        if recorded is not None:
            return recorded
        source = self.inputs.source  # the --init_checkpoint opened once for the run
        if source is not None and "token_classifier" in source.heads and source.labels:
            return list(source.labels)
        if cfg.train_file:
            return self._derive(None)
        raise UsageError(f"no tags: {cfg.output_dir} has no labels.json (written by a training "
                         "run); pass --label_list or --train_file")

    def _derive(self, label_list) -> list[str]:
        return L.derive(D.tag_pairs(self.read_split("train")), self.config.train_file, label_list,
                        error=D.TaggedDataError, words=L.TAGS)

    def _check_tags(self, sentences) -> None:
        """Every tag of a dev file one the model can predict."""
        L.check_known(D.tag_pairs(sentences), self.labels, bool(self.config.label_list),
                      error=D.TaggedDataError, words=L.TAGS)

    @property
    def best_metric(self) -> str:
        return "eval_f1" if D.has_chunk_tags(self.labels) else "eval_accuracy"

    def build_model(self):
        model = AlbertTokenClassifier(self.albert_config, len(self.labels))
        if self._check_teacher() is not None:  # --distill_from: run beside the student
            self.teacher = load_teacher(self.teacher_inputs)
        return model

    def _check_teacher(self):
        """--distill_from's teacher, checked once (before the output_dir is written to)."""
        if self.config.distill_from and self.config.do_train and self.teacher_inputs is None:
            self.teacher_inputs = check_teacher(self, self.labels, self.head)
        return self.teacher_inputs

    def prepare_output_dir(self, is_chief: bool) -> None:
        self._check_teacher()
        L.LabelFile.read(self.config.output_dir).check_or_write(self.labels, is_chief,
                                                                word="tags")

    # ---------------------------------------------------------------- data
    def read_split(self, split: str) -> list:
        """The `Sentence`s of `split` (train, dev or test)."""
        if split not in self._sentences:
            path = self.config.split_file(split)
            if not tf.io.gfile.exists(path):
                raise UsageError(f"--{SPLIT_FLAGS[split]}={path}: no such file")
            sentences = D.read_sentences(path, need_tags=split != "test")
            self._sentences[split] = sentences
            unk.report_sample(self.tokenizer, sentences, lambda s: [" ".join(s.tokens)], path,
                              self.config.do_lower_case)
            if split == "dev":
                self._check_tags(sentences)
        return self._sentences[split]

    def split_features(self, split: str) -> tuple:
        """(keyed feature file, record count, sentences) of `split`, built once per run (arrays
        instead of the file for sentences held in memory: `use_sentences`)."""
        if split not in self._features:
            cfg = self.config
            sentences = self.read_split(split)
            if split == "test":  # test tags are only scored, never fed: unseen ones are fine
                sentences = [D.Sentence(s.tokens, None, s.lines, s.path) for s in sentences]
            path = os.path.join(self.cached_dir, CACHE_NAMES[split])
            tf.io.gfile.makedirs(self.cached_dir)
            key = F.cache_key(split, cfg.split_file(split), cfg.max_seq_length,
                              cfg.stride, self.tokenizer, cfg.do_lower_case, self.labels)
            count = F.cached_features(sentences, self.labels, self.pieces, cfg.max_seq_length,
                                      cfg.stride, path, key)
            self._features[split] = (path, count, self.read_split(split))
        return self._features[split]

    def use_sentences(self, split: str, sentences: list) -> None:
        """`Sentence`s held in memory as `split` (a Python API's call): their windows become
        arrays; no file is read or written."""
        cfg = self.config
        if split == "dev":
            self._check_tags(sentences)
        fed = sentences if split != "test" else [D.Sentence(s.tokens, None, s.lines, s.path)
                                                 for s in sentences]
        arrays = F.record_arrays(F.sentence_records(fed, self.labels, self.pieces,
                                                    cfg.max_seq_length, cfg.stride))
        self._sentences[split] = sentences
        self._features[split] = (arrays, len(arrays["input_ids"]), sentences)

    def prepare_data(self):
        cfg = self.config
        for split, wanted in (("train", cfg.do_train), ("dev", cfg.do_eval),
                              ("test", cfg.do_predict)):
            if wanted:
                self.split_features(split)

    def train_dataset_fn(self):
        cfg = self.config
        path, count, sentences = self.split_features("train")
        logging.info("training on %d sentences (%d windows), batch %d, %d steps", len(sentences),
                     count, cfg.schedule.train_batch_size, self.num_train_steps)
        input_fn = F.input_fn_builder(path, cfg.max_seq_length, True, cfg.shuffle_buffer, cfg.seed)
        return replica_dataset_fn(input_fn, cfg.schedule.train_batch_size)

    def objective(self):
        def totals(features):
            return {"tags": tf.reduce_sum(tf.cast(features["label_ids"] >= 0, tf.float32))}

        def loss_fn(outputs, features, sums):
            """This batch's share of the mean cross-entropy over every labelled first piece
            of the global batch."""
            loss, count = token_classifier_loss(outputs["logits"], features["label_ids"])
            labels = tf.cast(features["label_ids"], tf.int32)
            correct = tf.reduce_sum(tf.cast(
                tf.equal(outputs["predictions"], labels) & (labels >= 0), tf.float32))
            return loss / (sums["tags"] + 1e-5), {"accuracy": (correct, count)}
        if self.teacher is not None:
            return distilled(Objective(loss_fn, totals_fn=totals), self.teacher,
                             self.config.distill_temperature, self.config.distill_alpha)
        return Objective(loss_fn, totals_fn=totals)

    # ---------------------------------------------------------------- eval / predict
    def predict_tags(self, model, split: str, batch_size: int) -> tuple[list, float]:
        """(tag ids per sentence, word for word; mean cross-entropy of the labelled words): each
        word from its home window (`features.home_window`)."""
        if self._predict_fn is None:
            self._predict_fn = predict_function(model, self.config.runtime.jit_compile)
        data, _, sentences = self.split_features(split)
        predicted = [np.full(len(s.tokens), -1, np.int64) for s in sentences]
        losses = []
        batches = (array_batches(data, batch_size) if isinstance(data, dict)
                   else F.input_fn_builder(data, self.config.max_seq_length, False)(batch_size))
        for batch in batches:
            logits = self._predict_fn(batch)["logits"].numpy()
            rows, columns = np.nonzero(batch["is_max_context"].numpy())
            chosen = logits[rows, columns]
            examples = batch["example_index"].numpy()[rows]
            words = batch["word_ids"].numpy()[rows, columns]
            for example, word, tag in zip(examples, words, chosen.argmax(-1)):
                predicted[example][word] = tag
            labels = batch["label_ids"].numpy()[rows, columns]
            labelled = labels >= 0
            log_probs = _log_softmax(chosen[labelled])
            losses.extend(-log_probs[np.arange(len(log_probs)), labels[labelled]])
        for sentence, tags in zip(sentences, predicted):
            if (tags < 0).any():  # a word without a home window would be a bug in the windows
                raise AssertionError(f"{sentence.where()}: word {int(np.argmin(tags))} untagged")
        return [tags.tolist() for tags in predicted], float(np.mean(losses)) if losses else float("nan")

    def tag_names(self, ids) -> list[list[str]]:
        return [[self.labels[i] for i in sentence] for sentence in ids]

    def evaluate(self, model, batch_size: int | None = None) -> dict:
        ids, loss = self.predict_tags(model, "dev",
                                      batch_size or self.config.schedule.eval_batch_size)
        gold = [s.tags for s in self.read_split("dev")]
        index = {tag: i for i, tag in enumerate(self.labels)}  # the driver's health check
        self.eval_predictions = (np.concatenate([np.asarray(t, np.int64) for t in ids]),
                                 np.array([index.get(t, -1) for s in gold for t in s]),
                                 self.labels)
        return {**tagging_metrics(gold, self.tag_names(ids)), "eval_loss": loss}

    def chance_loss(self) -> float | None:
        """The training loss of a tagger that learned only how often each tag occurs (`O`
        mostly): the entropy of the training tags' prior."""
        index = {tag: i for i, tag in enumerate(self.labels)}
        return label_entropy([index.get(t, -1) for s in self.read_split("train") for t in s.tags],
                             len(self.labels))

    def eval_log(self):
        return R.NerEvalLog(self.config.output_dir, self.best_metric)

    def predict(self, model) -> dict:
        cfg = self.config
        ids, _ = self.predict_tags(model, "test", cfg.schedule.predict_batch_size)
        sentences, tags = self.read_split("test"), self.tag_names(ids)
        paths = R.write_predictions(cfg.output_dir, sentences, tags, D.is_jsonl(cfg.test_file))
        if sentences[0].tags is not None:  # a labelled test file is scored as well
            result = tagging_metrics([s.tags for s in sentences], tags)
            paths["test_results"] = os.path.join(cfg.output_dir, "test_results.txt")
            write_text_atomically(paths["test_results"], R.format_results(result))
            paths["metrics"] = result
        logging.info("wrote %s", ", ".join(v for v in paths.values() if isinstance(v, str)))
        return paths

    def export(self, model, export_dir) -> str:
        cfg = self.config
        # The TFLite files are versioned with the SavedModel (<export_dir>/tflite/<version>).
        lite = tflite.extras(model, cfg.max_seq_length, cfg.tflite, name="token_classifier",
                             outputs=("probabilities",), call=tflite_call(model),
                             spm_model_file=cfg.spm_model_file,
                             vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
                             do_lower_case=cfg.do_lower_case, label_names=self.labels)
        lite.update(openvino_export.extras(  # <export_dir>/onnx/<version>, openvino/<version>
            model, cfg.max_seq_length, cfg.onnx, cfg.openvino, name="token_classifier",
            outputs=("probabilities",), call=tflite_call(model),
            spm_model_file=cfg.spm_model_file,
            vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
            do_lower_case=cfg.do_lower_case, label_names=self.labels))
        return export_token_classifier(model, export_dir, cfg.max_seq_length, cfg.stride,
                                       self.labels, cfg.spm_model_file, cfg.vocab_file,
                                       cfg.do_lower_case, extras=lite)


def run_ner(config: NerRunConfig) -> dict:
    """Train / evaluate / predict / export as the flags say; returns what each part produced."""
    if config.seed is not None:
        keras.utils.set_random_seed(config.seed)
    return Driver.create(NerTask, config).run()
