"""A RACE folder records the lengths its run built features with (sequence_lengths.json), and
export_saved_model on the folder alone serves with them: the same probabilities as
`run_race.py --do_predict`; a length given to the export wins."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError
from albert_tf.models import AlbertMultipleChoice
from albert_tf.source_export import export_source
from albert_tf.tasks.race import data
from albert_tf.tasks.race.config import RaceRunConfig
from albert_tf.tasks.race.task import run_race
from albert_tf.weights.model_folder import LENGTHS_FILE, read_lengths, write_lengths
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import READING_TINY
from support.informative import spread_weights


def test_lengths_file_round_trip_keep_and_errors(tmp_path):
    assert read_lengths(tmp_path) == {}
    write_lengths(str(tmp_path), {"max_seq_length": 64, "max_qa_length": 16})
    assert read_lengths(tmp_path) == {"max_seq_length": 64, "max_qa_length": 16}
    write_lengths(str(tmp_path), {"max_seq_length": 32}, replace=False)  # a predict-only run
    assert read_lengths(tmp_path) == {"max_seq_length": 64, "max_qa_length": 16}
    path = tmp_path / LENGTHS_FILE
    path.write_text('{"max_seq_length": "64"}')
    with pytest.raises(InputError, match=rf"^{path}: key max_seq_length must be a whole number "
                       r'of at least 1, got "64"$'):
        read_lengths(tmp_path)
    path.write_text("[64]")
    with pytest.raises(InputError, match=rf"^{path}: holds a JSON list, expected an object of "
                       "lengths"):
        read_lengths(tmp_path)


def _served(export, rows):
    out = tf.saved_model.load(export).signatures["serve_text"](
        passage=tf.constant([r[0] for r in rows]), question=tf.constant([r[1] for r in rows]),
        options=tf.constant([r[2] for r in rows]))
    return out["probabilities"].numpy()


def test_a_race_folder_exports_with_its_runs_lengths(data_dir, spm_model, tmp_path):
    # The export took --max_seq_length (default: 128 here, the model's positions) and
    # --max_qa_length (128) as flags only: from the folder alone it served other features than
    # the run's, and its probabilities were not run_race.py --do_predict's.
    config = AlbertConfig(**READING_TINY)
    config.to_json_file(tmp_path / "albert_config.json")
    out = tmp_path / "out"
    model = AlbertMultipleChoice(config)
    model({k: tf.zeros([1, 4, 8], tf.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    spread_weights(model)
    model.output_weights.assign(np.random.default_rng(1).normal(0, 2, (1, config.hidden_size)))
    save_tf1_checkpoint(model, out / "model.ckpt-1", 1)
    run_race(RaceRunConfig.from_flat(dict(
        data_dir=str(data_dir / "race"), albert_config_file=str(tmp_path / "albert_config.json"),
        spm_model_file=spm_model, output_dir=str(out), max_seq_length=64, max_qa_length=16,
        do_train=False, do_eval=False, do_predict=True)))
    assert json.loads((out / LENGTHS_FILE).read_text()) == {"max_seq_length": 64,
                                                             "max_qa_length": 16}
    predicted = dict(line.split(" = ") for line in
                     (out / "predict_results.txt").read_text().splitlines()[1:])
    rows = _questions(data_dir / "race")
    answers = np.array(["ABCD".index(r[3]) for r in rows])

    config_file = str(tmp_path / "albert_config.json")  # no lengths given: the folder's
    result = export_source(str(out), tmp_path / "exports", config_file, spm_model, verify=False)
    probabilities = _served(result["multiple_choice"], rows)
    loss = -np.log(probabilities[np.arange(len(rows)), answers]).mean()
    assert float(predicted["eval_loss"]) == pytest.approx(loss, abs=1e-5)
    assert float(predicted["eval_accuracy"]) == pytest.approx(
        (probabilities.argmax(-1) == answers).mean(), abs=1e-9)

    # A length given wins over the record: other features, other probabilities.
    given = export_source(str(out), tmp_path / "given", config_file, spm_model, verify=False,
                          max_qa_length=4)
    assert np.abs(_served(given["multiple_choice"], rows) - probabilities).max() > 1e-3


def _questions(root):
    rows = []
    for level in data.LEVELS:
        for path in data.level_files(root, "test", level):
            article = json.loads(open(path, encoding="utf-8").read())
            rows += [(article["article"], q, o, a) for q, o, a in
                     zip(article["questions"], article["options"], article["answers"])]
    return rows
