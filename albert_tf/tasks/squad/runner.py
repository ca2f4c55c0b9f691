"""The `run_squad.py` flow (spec §9.6) as library calls: features, training, per-checkpoint
prediction, post-processing, scoring and best-checkpoint keeping, for v1.1 and v2.0."""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Optional

import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.tasks import fit
from albert_tf.tasks.squad import feature_io, metrics, models, postprocess, reader
from albert_tf.tasks.squad.features import convert_examples_to_features
from albert_tf.tokenization import load_sentencepiece


@dataclasses.dataclass
class SquadRunConfig:
    """The original's flags that shape the run (names as there)."""

    albert_config_file: str
    spm_model_file: str
    output_dir: str
    version_2_with_negative: bool = False
    train_file: Optional[str] = None
    predict_file: Optional[str] = None
    train_feature_file: Optional[str] = None
    predict_feature_file: Optional[str] = None
    predict_feature_left_file: Optional[str] = None
    init_checkpoint: Optional[str] = None
    do_lower_case: bool = True
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    n_best_size: int = 20
    max_answer_length: int = 30
    start_n_top: int = 5
    end_n_top: int = 5
    dropout_prob: float = 0.1
    export_dir: Optional[str] = None

    def validate(self, config: AlbertConfig) -> None:
        if not (self.do_train or self.do_predict or self.export_dir):
            raise ValueError("At least one of `do_train`, `do_predict` or `export_dir` must be True.")
        if self.do_train and not self.train_file:
            raise ValueError("If `do_train` is True, then `train_file` must be specified.")
        if self.do_predict and not (self.predict_file and self.predict_feature_file and
                                    self.predict_feature_left_file):
            raise ValueError("If `do_predict` is True, then `predict_file`, "
                             "`predict_feature_file` and `predict_feature_left_file` must be "
                             "specified.")
        if self.max_seq_length > config.max_position_embeddings:
            raise ValueError(f"Cannot use sequence length {self.max_seq_length} because the "
                             f"ALBERT model was only trained up to sequence length "
                             f"{config.max_position_embeddings}")
        if self.max_seq_length <= self.max_query_length + 3:
            raise ValueError(f"The max_seq_length ({self.max_seq_length}) must be greater than "
                             f"max_query_length ({self.max_query_length}) + 3")


def build_model(run: SquadRunConfig, config: AlbertConfig):
    if run.version_2_with_negative:
        return models.SquadV2Model(config, run.start_n_top, run.end_n_top, run.dropout_prob)
    return models.SquadV1Model(config)


def _convert(run, examples, sp, is_training, output_fn):
    return convert_examples_to_features(examples, sp, run.max_seq_length, run.doc_stride,
                                        run.max_query_length, is_training, output_fn,
                                        run.do_lower_case)


def prepare_train_features(run: SquadRunConfig, sp) -> int:
    """Writes `train_feature_file` unless it exists; returns the number of training questions
    (the original counts questions, not features, for the step count)."""
    examples = reader.shuffle_training_examples(reader.read_squad_examples(run.train_file, True))
    feature_file = run.train_feature_file or os.path.join(run.output_dir, "train.tf_record")
    if not tf.io.gfile.exists(feature_file):
        with feature_io.FeatureWriter(feature_file, is_training=True) as writer:
            _convert(run, examples, sp, True, writer)
        logging.info("wrote %d training features to %s", writer.num_features, feature_file)
    run.train_feature_file = feature_file
    return len(examples)


def prepare_predict_features(run: SquadRunConfig, sp):
    """(examples, feature metadata): reuses both feature files when present, else writes them."""
    examples = reader.read_squad_examples(run.predict_file, False)
    if (tf.io.gfile.exists(run.predict_feature_file) and
            tf.io.gfile.exists(run.predict_feature_left_file)):
        return examples, feature_io.read_feature_metadata(run.predict_feature_left_file)
    with feature_io.FeatureWriter(run.predict_feature_file, is_training=False) as writer:
        features = _convert(run, examples, sp, False, writer)
    feature_io.write_feature_metadata(run.predict_feature_left_file, features)
    return examples, features


def predict_raw_results(model, run: SquadRunConfig) -> list:
    """Raw results (v1 logits or v2 beam outputs) of every prediction feature."""
    data = feature_io.dataset(run.predict_feature_file, run.max_seq_length, False,
                              run.predict_batch_size, with_p_mask=True)
    call = fit.inference_fn(model)
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
    write = lambda threshold: postprocess.write_predictions_v2(  # noqa: E731
        result_dict, cls_dict, examples, features, results, n_best, max_len, *files, odds_file,
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


def run_squad(run: SquadRunConfig, runtime_config=None) -> dict:
    """Train and/or predict as the flags say; returns the best checkpoint's scores (or {}).

    With training and prediction, every saved checkpoint is scored as it is written (the
    original ran this loop beside training) and the best is kept as `model.ckpt-best`.
    """
    config = AlbertConfig.from_json_file(run.albert_config_file)
    run.validate(config)
    tf.io.gfile.makedirs(run.output_dir)
    sp = load_sentencepiece(run.spm_model_file)
    runtime = fit.make_runtime(runtime_config)
    with runtime.scope():
        model = build_model(run, config)
    evaluate = None
    if run.do_predict:
        examples, features = prepare_predict_features(run, sp)
        dataset = reader.load_squad_json(run.predict_file)["data"]

        def evaluate(prefix=None):
            if prefix is not None:
                fit.load_weights(model, prefix)
            scores = score_predictions(run, dataset, examples, features,
                                       predict_raw_results(model, run))
            logging.info("%s: %s", prefix, scores)
            return scores
    result = {}
    if run.do_train:
        num_examples = prepare_train_features(run, sp)
        num_steps = max(int(num_examples / run.train_batch_size * run.num_train_epochs), 1)

        def dataset_fn(context):
            return feature_io.dataset(
                run.train_feature_file, run.max_seq_length, True,
                context.get_per_replica_batch_size(run.train_batch_size),
                with_p_mask=run.version_2_with_negative, drop_remainder=True)
        loss = models.squad_v2_loss if run.version_2_with_negative else models.squad_v1_loss
        loop = fit.EvalLoop(run.output_dir, evaluate, "f1") if evaluate else None
        fit.train(runtime, model, loss, dataset_fn, run.output_dir, run.train_batch_size,
                  num_steps, int(num_steps * run.warmup_proportion), run.learning_rate,
                  run.save_checkpoints_steps, run.init_checkpoint,
                  on_checkpoint=loop.on_checkpoint if loop else None)
        result = loop.finish() if loop else {}
    elif evaluate is not None:
        if run.init_checkpoint:  # the original v1 crashed on predict-only runs (spec §14.28)
            result = evaluate(run.init_checkpoint)
        else:
            result = fit.evaluate_all(run.output_dir, evaluate, "f1")
    if run.export_dir:
        from albert_tf.tasks.squad import export as squad_export

        if not run.do_train and run.init_checkpoint and not run.do_predict:
            fit.load_weights(model, run.init_checkpoint)
        squad_export.export(model, run)
    return result
