"""A RACE output_dir that `run_race.py --do_predict` ran on (a spread, untrained multiple-choice
checkpoint, lengths 64 / 16), and the raw questions of a RACE split, for the export tests."""

from __future__ import annotations

import json

import numpy as np
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertMultipleChoice
from albert_tf.tasks.race import data
from albert_tf.tasks.race.config import RaceRunConfig
from albert_tf.tasks.race.task import run_race
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import READING_TINY
from support.informative import spread_weights


def raw_questions(root, split):
    """(article, question, options, answer, level) of every question, in read_race_examples'
    order, straight from the JSON files."""
    rows = []
    for level in data.LEVELS:
        for path in data.level_files(root, split, level):
            article = json.loads(open(path, encoding="utf-8").read())
            for question, options, answer in zip(article["questions"], article["options"],
                                                  article["answers"]):
                rows.append((article["article"], question, options, answer, level))
    return rows


def predicted_race_folder(race_dir, spm_model, tmp_path):
    """(output_dir, predict_results.txt as {key: value text}); the model's config is written to
    tmp_path/albert_config.json."""
    config = AlbertConfig(**READING_TINY)
    config.to_json_file(tmp_path / "albert_config.json")
    out = tmp_path / "out"
    model = AlbertMultipleChoice(config)
    model({k: tf.zeros([1, 4, 8], tf.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    spread_weights(model)
    model.output_weights.assign(np.random.default_rng(1).normal(0, 2, (1, config.hidden_size)))
    save_tf1_checkpoint(model, out / "model.ckpt-1", 1)
    run_race(RaceRunConfig.from_flat(dict(
        data_dir=str(race_dir), albert_config_file=str(tmp_path / "albert_config.json"),
        spm_model_file=spm_model, output_dir=str(out), max_seq_length=64, max_qa_length=16,
        do_train=False, do_eval=False, do_predict=True)))
    predicted = dict(line.split(" = ") for line in
                     (out / "predict_results.txt").read_text().splitlines()[1:])
    return out, predicted
