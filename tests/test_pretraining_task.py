"""The pretraining task: the output_dir describes one model (a restart with another config is
refused before anything changes), input records are checked before the first step."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.errors import InputError, UsageError
from albert_tf.tasks.pretraining.task import PretrainingRunConfig, run_pretraining
from support.entry_points import run_entry_point

SEQ, PREDICTIONS = 16, 3
CONFIG = {"vocab_size": 30, "embedding_size": 8, "hidden_size": 16, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 32}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_records(path, count=4, seq=SEQ, max_id=29):
    rng = np.random.RandomState(0)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(count):
            ints = {"input_ids": rng.randint(5, max_id + 1, seq), "input_mask": np.ones(seq),
                    "segment_ids": np.r_[np.zeros(seq // 2), np.ones(seq - seq // 2)],
                    "token_boundary": np.ones(seq), "masked_lm_positions": [1, 2, 3],
                    "masked_lm_ids": rng.randint(5, 30, PREDICTIONS), "next_sentence_labels": [1]}
            feats = {k: schema.int_feature(np.asarray(v, np.int64)) for k, v in ints.items()}
            feats["masked_lm_weights"] = schema.float_feature(np.ones(PREDICTIONS, np.float32))
            writer.write(tf.train.Example(
                features=tf.train.Features(feature=feats)).SerializeToString())
    return str(path)


def config_file(tmp_path, name="albert_config.json", **changes):
    path = tmp_path / name
    path.write_text(json.dumps({**CONFIG, **changes}))
    return str(path)


def options(tmp_path, records, config, **overrides):
    base = dict(albert_config_file=config, input_file=records, output_dir=str(tmp_path / "out"),
                max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS, train_batch_size=2,
                num_train_steps=2, num_warmup_steps=0, save_checkpoints_steps=2,
                log_every_steps=1, learning_rate=1e-3)
    return PretrainingRunConfig.from_flat({**base, **overrides})


def test_restart_with_another_config_is_refused_and_changes_nothing(tmp_path):
    records = write_records(tmp_path / "r.tfrecord")
    run_pretraining(options(tmp_path, records, config_file(tmp_path)))
    out = tmp_path / "out"
    before = {name: (out / name).read_bytes() for name in sorted(os.listdir(out))
              if not name.startswith("events")}
    other = config_file(tmp_path, "other.json", hidden_size=32, intermediate_size=32)
    with pytest.raises(UsageError, match=r"holds a run of another model .*hidden_size: 16 "
                                         r"there, 32 in .*other\.json"):
        run_pretraining(options(tmp_path, records, other, num_train_steps=4))
    after = {name: (out / name).read_bytes() for name in sorted(os.listdir(out))
             if not name.startswith("events")}
    assert after == before
    # The same config resumes as before.
    run_pretraining(options(tmp_path, records, config_file(tmp_path), num_train_steps=4))
    assert (out / "model.ckpt-4.index").exists()


def test_records_that_do_not_fit_the_flags_or_the_vocabulary_fail_before_training(tmp_path):
    records = write_records(tmp_path / "r.tfrecord", seq=8)
    with pytest.raises(InputError, match="max_seq_length"):
        run_pretraining(options(tmp_path, records, config_file(tmp_path)))
    records = write_records(tmp_path / "big.tfrecord", max_id=40)
    with pytest.raises(InputError, match="vocab_size"):
        run_pretraining(options(tmp_path, records, config_file(tmp_path)))
    assert not (tmp_path / "out").exists()


def test_script_prints_one_error_line_for_another_config(tmp_path):
    records = write_records(tmp_path / "r.tfrecord")
    out = tmp_path / "out"
    out.mkdir()
    (out / "albert_config.json").write_text(json.dumps({**CONFIG, "num_hidden_layers": 2}))
    result = run_entry_point("run_pretraining.py", [
        f"--albert_config_file={config_file(tmp_path)}", f"--input_file={records}",
        f"--output_dir={out}", f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}", "--train_batch_size=2"])
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "num_hidden_layers" in last


def test_a_second_run_on_the_same_output_dir_stops_with_one_line(tmp_path):
    from albert_tf.tasks.output_lock import OutputDirLock

    records = write_records(tmp_path / "r.tfrecord")
    out = tmp_path / "out"
    with OutputDirLock(out):  # as a first run holds it while it trains
        # In-process: a flock conflicts between two opens of the file, in one process or two.
        result = run_entry_point("run_pretraining.py", [
            f"--albert_config_file={config_file(tmp_path)}", f"--input_file={records}",
            f"--output_dir={out}", f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}", "--train_batch_size=2",
            "--num_train_steps=1"])
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "in use by another run" in result.stderr.strip().splitlines()[-1]
    assert sorted(os.listdir(out)) == ["albert_tf.lock"]
