"""SQuAD v1.1 / v2.0 as a `Task` (what `run_squad.py` runs through the driver).

Evaluation is prediction: with `--do_predict`, each checkpoint is scored on `--predict_file`
(which holds the answers) by the official metric, the best by F1 is kept, and the prediction
files (`predictions.json`, `nbest_predictions.json`, v2 `null_odds.json`) come from the model used
last: the best checkpoint, or a fine-tuned `--init_checkpoint` in a predict-only run.
"""

from __future__ import annotations

import os

from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.models import AlbertSquadV1, AlbertSquadV2, squad_v1_loss, squad_v2_loss
from albert_tf.tasks.base import Task, check_model_inputs
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.eval_log import RunnerEvalLog
from albert_tf.tasks.inference import inference_fn
from albert_tf.tasks.squad import data, feature_io, metrics, postprocess, reader
from albert_tf.tasks.squad import export as squad_export
from albert_tf.tasks.squad.config import SquadRunConfig
from albert_tf.tokenization import FullTokenizer, WordpiecePieces, load_sentencepiece, unk
from albert_tf.serving import openvino_export, tflite
from albert_tf.training.steps import Objective


def build_model(run: SquadRunConfig, config: AlbertConfig):
    if run.version_2_with_negative:
        return AlbertSquadV2(config, run.start_n_top, run.end_n_top, run.dropout_prob)
    return AlbertSquadV1(config)


class SquadTask(Task):
    best_metric = "f1"

    @classmethod
    def head_for(cls, config: SquadRunConfig) -> str:
        return "squad_v2" if config.version_2_with_negative else "squad_v1"

    def __init__(self, config: SquadRunConfig, inputs=None):
        super().__init__(config, inputs)
        config = self.config  # the filled copy (the caller's is left as given)
        self.validate()  # before the SentencePiece model is loaded
        self.albert_config = config.load_albert_config()
        config.validate(self.albert_config)
        if config.spm_model_file:
            self.sp = load_sentencepiece(config.spm_model_file)
        else:  # a WordPiece (Chinese) model: its pieces in SentencePiece's form
            self.sp = WordpiecePieces(config.vocab_file, config.do_lower_case)
        self.tokenizer_file = config.spm_model_file or config.vocab_file
        check_model_inputs(self.albert_config, config.max_seq_length, self.sp.GetPieceSize(),
                           self.tokenizer_file)
        self._predict_data = None
        self._num_examples = None

    def validate(self):
        self.config.require("output_dir", "albert_config_file")
        if not self.config.spm_model_file and not self.config.vocab_file:
            raise UsageError("--spm_model_file (or --vocab_file for WordPiece models) is required")
        super().validate()
        openvino_export.require(self.config.onnx, self.config.openvino)  # their runtimes

    @property
    def does_evaluate(self) -> bool:
        return bool(self.config.do_predict) and bool(self.config.do_train)

    def build_model(self):
        return build_model(self.config, self.albert_config)

    # ---------------------------------------------------------------- data
    def prepare_train_features(self) -> int:
        """Keyed training features (rebuilt when the file or a setting changed); returns the
        number of training questions (the original counts questions, not features, for the
        step count)."""
        run = self.config
        run.train_feature_file = run.train_feature_file or os.path.join(run.output_dir,
                                                                        "train.tf_record")
        return data.prepare_train_features(run.train_file, run.train_feature_file,
                                           self.tokenizer_file, data.FeatureSettings.of(run),
                                           self.sp)

    def predict_data(self):
        """(dataset json, examples, feature metadata) of `--predict_file` (keyed feature pair)."""
        if self._predict_data is None:
            run = self.config
            examples, features = data.prepare_predict_features(
                run.predict_file, run.predict_feature_file, run.predict_feature_left_file,
                self.tokenizer_file, data.FeatureSettings.of(run), self.sp)
            dataset = reader.load_squad_json(run.predict_file)["data"]
            self._predict_data = (dataset, examples, features)
        return self._predict_data

    @property
    def num_train_steps(self) -> int:
        if self._num_examples is None:
            self._num_examples = self.prepare_train_features()
        run = self.config
        return max(int(self._num_examples / run.schedule.train_batch_size *
                       run.num_train_epochs), 1)

    @property
    def num_warmup_steps(self) -> int:
        return int(self.num_train_steps * self.config.warmup_proportion)

    def report_unk(self) -> None:
        """The [UNK] rate of each SQuAD file read (questions and their distinct contexts)."""
        cfg = self.config
        tokenizer = FullTokenizer(cfg.vocab_file, cfg.do_lower_case, cfg.spm_model_file)
        for path, wanted in ((cfg.train_file, cfg.do_train), (cfg.predict_file, cfg.do_predict)):
            if wanted and path:
                examples = reader.read_squad_examples(path, is_training=False)
                texts = [e.question_text for e in examples] + list(
                    dict.fromkeys(e.paragraph_text for e in examples))
                unk.report_sample(tokenizer, texts, lambda text: [text], path, cfg.do_lower_case)

    def prepare_data(self):
        self.report_unk()
        if self.config.do_train:
            self.num_train_steps  # writes (or reuses) the keyed training features
        if self.config.do_predict:
            self.predict_data()

    def train_dataset_fn(self):
        run = self.config
        self.num_train_steps  # writes the feature file first

        def dataset_fn(context):
            return feature_io.dataset(
                run.train_feature_file, run.max_seq_length, True,
                context.get_per_replica_batch_size(run.schedule.train_batch_size),
                with_p_mask=run.version_2_with_negative, drop_remainder=True)
        return dataset_fn

    def objective(self):
        loss = squad_v2_loss if self.config.version_2_with_negative else squad_v1_loss
        return Objective(lambda outputs, features: (loss(outputs, features), {}))

    # ---------------------------------------------------------------- scoring
    def raw_results(self, model) -> list:
        """Raw results (v1 logits or v2 beam outputs) of every prediction feature."""
        run = self.config
        data = feature_io.dataset(run.predict_feature_file, run.max_seq_length, False,
                                  run.schedule.predict_batch_size, with_p_mask=True)
        call = inference_fn(model)
        results = []
        for batch in data:
            inputs = {k: v for k, v in batch.items() if k != "unique_ids"}
            outputs = {k: v.numpy() for k, v in call(inputs).items()}
            for row, unique_id in enumerate(batch["unique_ids"].numpy()):
                if run.version_2_with_negative:
                    results.append(postprocess.RawResultV2(
                        int(unique_id), *[[float(x) if k.endswith("probs") else int(x)
                                           for x in outputs[k][row]]
                                          for k in ("start_top_log_probs", "start_top_index",
                                                    "end_top_log_probs", "end_top_index")],
                        float(outputs["cls_logits"][row])))
                else:
                    results.append(postprocess.RawResult(
                        int(unique_id), [float(x) for x in outputs["start_logits"][row]],
                        [float(x) for x in outputs["end_logits"][row]]))
        return results

    def evaluate(self, model) -> dict:
        """Writes the prediction files of `model` and returns the official scores."""
        dataset, examples, features = self.predict_data()
        return score_predictions(self.config, dataset, examples, features, self.raw_results(model))

    def eval_log(self):
        return RunnerEvalLog(self.config.output_dir, "f1")

    def predict(self, model) -> dict:
        scores = self.evaluate(model)
        logging.info("scores: %s", scores)
        return scores

    def export(self, model, export_dir) -> str:
        cfg = self.config
        # The TFLite files are versioned with the SavedModel (<export_dir>/tflite/<version>),
        # with the tokenizer the export uses beside them (SentencePiece, else WordPiece).
        lite = tflite.extras(model, cfg.max_seq_length, cfg.tflite,
                             spm_model_file=cfg.spm_model_file,
                             vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
                             do_lower_case=cfg.do_lower_case)
        lite.update(openvino_export.extras(  # <export_dir>/onnx/<version>, openvino/<version>
            model, cfg.max_seq_length, cfg.onnx, cfg.openvino, spm_model_file=cfg.spm_model_file,
            vocab_file=None if cfg.spm_model_file else cfg.vocab_file,
            do_lower_case=cfg.do_lower_case))
        return squad_export.export(model, cfg, self.albert_config, export_dir, extras=lite)


def _output(run, name):
    return os.path.join(run.output_dir, name)


def score_predictions(run: SquadRunConfig, dataset, examples, features, results) -> dict:
    """Writes predictions/nbest (and null odds) and returns the official scores; v2 follows the
    original's `evaluate_v2` (answer everything, tune the null threshold on these questions,
    rewrite with it, score again with the 1.0 no-answer threshold on the logits)."""
    n_best, max_len = run.n_best_size, run.max_answer_length
    files = (_output(run, "predictions.json"), _output(run, "nbest_predictions.json"))
    if not run.version_2_with_negative:
        result_dict = {}
        postprocess.accumulate_predictions_v1(result_dict, examples, features, results, n_best,
                                              max_len)
        predictions, _ = postprocess.write_predictions_v1(result_dict, examples, features,
                                                          results, n_best, max_len, *files)
        return metrics.evaluate_v1(dataset, predictions)
    result_dict, cls_dict = {}, {}
    postprocess.accumulate_predictions_v2(result_dict, cls_dict, examples, features, results,
                                          n_best, max_len, run.start_n_top, run.end_n_top)
    odds_file = _output(run, "null_odds.json")

    def write(threshold):
        return postprocess.write_predictions_v2(result_dict, cls_dict, examples, features,
                                                results, n_best, max_len, *files, odds_file,
                                                threshold)
    predictions, null_odds = write(None)
    first = metrics.evaluate_v2(dataset, predictions, null_odds, 1.0)
    threshold = first["best_f1_thresh"]
    predictions, null_odds = write(threshold)
    has_answer = metrics.has_answer_by_id(dataset)
    exact, f1 = metrics.raw_scores(dataset, predictions)
    exact = metrics.apply_no_answer_threshold(exact, null_odds, has_answer, 1.0)
    f1 = metrics.apply_no_answer_threshold(f1, null_odds, has_answer, 1.0)
    final = dict(metrics.make_eval_dict(exact, f1))
    final["null_score_diff_threshold"] = threshold
    return final


def run_squad(config: SquadRunConfig, runtime=None) -> dict:
    """Train and/or predict as the flags say; returns the scores of the model predicted with
    (the best checkpoint after training), or {}."""
    summary = Driver.create(SquadTask, config, runtime).run()
    return summary.get("predict") or summary.get("eval") or {}
