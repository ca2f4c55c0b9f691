"""A RACE folder records the lengths its run built features with (sequence_lengths.json), and
export_saved_model on the folder alone serves with them: the same probabilities as
`run_race.py --do_predict`; a length given to the export wins."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.errors import InputError
from albert_tf.source_export import export_source
from albert_tf.weights.model_folder import LENGTHS_FILE, read_lengths, write_lengths
from support.race_folder import predicted_race_folder, raw_questions


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
    out, predicted = predicted_race_folder(data_dir / "race", spm_model, tmp_path)
    assert json.loads((out / LENGTHS_FILE).read_text()) == {"max_seq_length": 64,
                                                             "max_qa_length": 16}
    rows = raw_questions(data_dir / "race", "test")
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

