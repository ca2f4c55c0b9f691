"""The `run_race.py` flow (spec §10.4): TFRecord caches, fine-tuning, per-checkpoint evaluation
keeping the best by accuracy, and accuracy reported for middle, high and all."""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

import numpy as np
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks import race_model
from albert_tf.tasks.race import data as race
from albert_tf.tasks import fit
from albert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class RaceRunConfig:
    data_dir: str
    albert_config_file: str
    spm_model_file: str
    output_dir: str
    vocab_file: Optional[str] = None
    train_file: Optional[str] = None
    eval_file: Optional[str] = None
    predict_file: Optional[str] = None
    init_checkpoint: Optional[str] = None
    do_lower_case: bool = True
    dropout_prob: float = 0.1
    max_seq_length: int = 512
    max_qa_length: int = 128
    high_only: bool = False
    middle_only: bool = False
    do_train: bool = True
    do_eval: bool = True
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 1e-5
    train_step: int = 12000
    warmup_step: int = 1000
    save_checkpoints_steps: int = 100


def _cache(run, name, split, tokenizer, levels=None):
    """The keyed TFRecord of `split` (rebuilt unless made from the same files and settings)."""
    path = name or os.path.join(run.output_dir, f"{split}.tf_record")
    return race.cached_tfrecord(path, run.data_dir, split, tokenizer, run.max_seq_length,
                                run.max_qa_length, run.do_lower_case, run.high_only,
                                run.middle_only, levels)


def accuracy_by_level(model, run, path, examples, batch_size) -> dict:
    """`eval_accuracy`/`eval_loss` over all questions plus `middle_accuracy`/`high_accuracy`."""
    call = fit.inference_fn(model)
    logits = np.concatenate([call(batch)["logits"].numpy() for batch in
                             race.race_dataset(path, run.max_seq_length, False, batch_size)])
    labels = np.array([e.label for e in examples])
    levels = np.array([e.level for e in examples])
    correct = logits.argmax(-1) == labels
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    result = {"eval_accuracy": float(correct.mean()),
              "eval_loss": float(-log_probs[np.arange(len(labels)), labels].mean()),
              "num_examples": int(len(labels))}
    for level in race.LEVELS:
        if (levels == level).any():
            result[f"{level}_accuracy"] = float(correct[levels == level].mean())
    return result


def run_race(run: RaceRunConfig, runtime_config=None) -> dict:
    config = AlbertConfig.from_json_file(run.albert_config_file)
    if run.max_seq_length > config.max_position_embeddings:
        raise ValueError(f"Cannot use sequence length {run.max_seq_length} because the ALBERT "
                         f"model was only trained up to {config.max_position_embeddings}")
    if not (run.do_train or run.do_eval or run.do_predict):
        raise ValueError("At least one of `do_train`, `do_eval` or `do_predict` must be True.")
    tf.io.gfile.makedirs(run.output_dir)
    tokenizer = FullTokenizer(run.vocab_file, run.do_lower_case, run.spm_model_file)
    runtime = fit.make_runtime(runtime_config)
    with runtime.scope():
        model = race_model.RaceModel(config, run.dropout_prob)
    evaluate = None
    if run.do_eval:
        eval_path, eval_examples = _cache(run, run.eval_file, "dev", tokenizer)

        def evaluate(prefix):
            fit.load_weights(model, prefix)
            return accuracy_by_level(model, run, eval_path, eval_examples, run.eval_batch_size)
    result = {}
    if run.do_train:
        path, _ = _cache(run, run.train_file, "train", tokenizer)

        def dataset_fn(context):
            return race.race_dataset(path, run.max_seq_length, True,
                                     context.get_per_replica_batch_size(run.train_batch_size),
                                     drop_remainder=True)
        loop = fit.EvalLoop(run.output_dir, evaluate, "eval_accuracy") if evaluate else None
        fit.train(runtime, model, race_model.race_loss, dataset_fn, run.output_dir,
                  run.train_batch_size, run.train_step, run.warmup_step, run.learning_rate,
                  run.save_checkpoints_steps, run.init_checkpoint,
                  on_checkpoint=loop.on_checkpoint if loop else None)
        result = loop.finish() if loop else {}
    elif evaluate is not None:
        result = fit.evaluate_all(run.output_dir, evaluate, "eval_accuracy")
    if run.do_predict:
        # as the original: an evaluation of the best checkpoint on the test split
        path, examples = _cache(run, run.predict_file, "test", tokenizer)
        best = os.path.join(run.output_dir, fit.BEST)
        if not tf.io.gfile.exists(best + ".index"):
            raise ValueError(f"--do_predict evaluates {best}, which does not exist: run "
                             f"--do_eval first")
        fit.load_weights(model, best)
        test = accuracy_by_level(model, run, path, examples, run.predict_batch_size)
        lines = ["***** Predict results *****"] + [f"{k} = {v}" for k, v in sorted(test.items())]
        lines.append(f"best = {test['eval_accuracy']}")
        out = os.path.join(run.output_dir, "predict_results.txt")
        write_text_atomically(out, "\n".join(lines) + "\n")
        result = {**result, **{f"test_{k}": v for k, v in test.items()}}
    return result
