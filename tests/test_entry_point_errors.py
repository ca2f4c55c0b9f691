"""A new user's bad inputs, through the real entry points: each ends with exit status != 0, no
traceback, and a last stderr line `error: ...` naming the file, line, flag or config key at fault.
The entry points run in this process (`run_entry_point`: a fresh flag set, stderr and the exit
status as a process has them); the full-disk case runs in a real process (a file-size limit).
"""

import json
import os
import shutil

import pytest

from support.entry_points import console_env, run_entry_point, run_process
from support.interop import INTEROP
from support.paths import FIXTURES, SHARED

TINY = {"vocab_size": 1500, "embedding_size": 8, "hidden_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 64}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Every bad (and the few good) inputs the cases below point at."""
    if not FIXTURES.exists():
        pytest.skip(f"needs {FIXTURES} (the project's ../shared folder)")
    root = tmp_path_factory.mktemp("bad_inputs")
    paths = {"root": root, "spm": str(FIXTURES / "spm" / "spm.model"),
             "glue": str(FIXTURES / "glue" / "data")}
    (root / "config.json").write_text(json.dumps(TINY))
    (root / "not_json.json").write_text("{vocab_size: 10")
    (root / "bad_key.json").write_text(json.dumps({**TINY, "hidden_sise": 16}))
    (root / "bad_value.json").write_text(json.dumps({**TINY, "num_attention_heads": 3}))
    (root / "short.json").write_text(json.dumps({**TINY, "max_position_embeddings": 16}))
    (root / "small_vocab.json").write_text(json.dumps({**TINY, "vocab_size": 100}))
    (root / "text.txt").write_text("not a checkpoint\n")
    for name, header_only, binary in (("header", True, False), ("latin1", False, True)):
        task = root / name / "MRPC"
        shutil.copytree(FIXTURES / "glue" / "data" / "MRPC", task)
        lines = (task / "train.tsv").read_bytes().splitlines(keepends=True)
        if header_only:
            (task / "train.tsv").write_bytes(lines[0])
        if binary:
            (task / "train.tsv").write_bytes(lines[0] + lines[1].replace(b"a", b"\xe9", 1))
    # A checkpoint of another model (hidden_size 32): a shape mismatch names variable and key;
    # and a pretraining checkpoint of this model (no classifier head).
    from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer
    from albert_tf.checkpoint import save_tf1_checkpoint

    save_tf1_checkpoint(AlbertModel(AlbertConfig(**{**TINY, "hidden_size": 32,
                                                    "intermediate_size": 32})),
                        str(root / "other" / "model.ckpt"))
    save_tf1_checkpoint(AlbertPretrainer(AlbertConfig(**TINY)), str(root / "pretrained" / "model.ckpt"))
    (root / "empty.tfrecord").write_bytes(b"")
    write_pretraining_records(root / "truncated.tfrecord")
    data = (root / "truncated.tfrecord").read_bytes()
    (root / "truncated.tfrecord").write_bytes(data[:len(data) - 40])
    # Weight sources: a folder that is not a model, and an HF folder with only a PyTorch pickle.
    (root / "not_a_model").mkdir()
    (root / "not_a_model" / "notes.txt").write_text("no weights here\n")
    (root / "torch_only").mkdir()
    shutil.copy(INTEROP / "hf" / "pretraining" / "config.json", root / "torch_only")
    (root / "torch_only" / "pytorch_model.bin").write_bytes(b"not read without torch")
    paths["hf"] = str(INTEROP / "hf" / "pretraining")
    (root / "corrupt").mkdir()
    (root / "corrupt" / "model.ckpt.index").write_bytes(os.urandom(300))
    (root / "corrupt" / "model.ckpt.data-00000-of-00001").write_bytes(os.urandom(300))
    binary = root / "binary" / "MRPC"
    shutil.copytree(FIXTURES / "glue" / "data" / "MRPC", binary)
    header = (binary / "train.tsv").read_bytes().splitlines(keepends=True)[0]
    (binary / "train.tsv").write_bytes(header + bytes(range(256)) * 4)
    (root / "binary.txt").write_bytes(b"first line\n" + bytes(range(128, 256)) + b"\n")
    (root / "empty.txt").write_text("")
    squad_v2 = SHARED / "data" / "squad" / "v2.0" / "dev-v2.0.first5articles.json"
    paths["squad_v2"] = str(squad_v2)
    data = json.loads(squad_v2.read_text())  # v2 training layout: one answer or none
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"] = qa["answers"][:1]
    (root / "train-v2.json").write_text(json.dumps(data))
    (root / "predictions_list.json").write_text("[]")
    ids = [qa["id"] for a in json.loads(squad_v2.read_text())["data"]
           for p in a["paragraphs"] for qa in p["qas"]]
    (root / "predictions.json").write_text(json.dumps({i: "" for i in ids}))
    (root / "na_prob_short.json").write_text(json.dumps({i: 0.5 for i in ids[1:]}))
    return paths


def write_pretraining_records(path, count=4, seq=16, predictions=3):
    import numpy as np
    import tensorflow as tf

    from albert_tf.data import schema

    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(count):
            ints = {"input_ids": np.arange(seq) + 5, "input_mask": np.ones(seq),
                    "segment_ids": np.zeros(seq), "token_boundary": np.ones(seq),
                    "masked_lm_positions": np.arange(1, predictions + 1),
                    "masked_lm_ids": np.arange(predictions) + 5, "next_sentence_labels": [0]}
            feats = {k: schema.int_feature(np.asarray(v, np.int64)) for k, v in ints.items()}
            feats["masked_lm_weights"] = schema.float_feature(np.ones(predictions, np.float32))
            writer.write(tf.train.Example(
                features=tf.train.Features(feature=feats)).SerializeToString())


def _glue(p, *extra, data=None, config="config.json"):
    return ["run_classifier.py", f"--data_dir={data or p['glue']}", "--task_name=mrpc",
            f"--spm_model_file={p['spm']}", f"--albert_config_file={p['root'] / config}",
            f"--output_dir={p['root'] / 'glue_out'}", "--max_seq_length=32", *extra]


def _pretrain(p, *extra, input_file=None):
    return ["run_pretraining.py", f"--albert_config_file={p['root'] / 'config.json'}",
            f"--input_file={input_file or p['root'] / 'empty.tfrecord'}",
            f"--output_dir={p['root'] / 'pretrain_out'}", "--max_seq_length=16",
            "--max_predictions_per_seq=3", "--train_batch_size=2", *extra]


def _squad(p, *extra):
    return ["run_squad.py", f"--albert_config_file={p['root'] / 'config.json'}",
            f"--spm_model_file={p['spm']}", f"--output_dir={p['root'] / 'squad_out'}",
            "--max_seq_length=64", "--max_query_length=16", "--doc_stride=32", *extra]


# id, command builder, words the last line must hold
CASES = [
    ("glue-missing-flag", lambda p: ["run_classifier.py", "--task_name=mrpc"],
     ["--data_dir"]),
    ("glue-no-action", lambda p: _glue(p), ["do_train"]),
    ("glue-unknown-task", lambda p: [a if a != "--task_name=mrpc" else "--task_name=nope"
                                     for a in _glue(p, "--do_train")], ["nope"]),
    ("glue-config-missing", lambda p: _glue(p, "--do_train", config="nowhere.json"),
     ["nowhere.json"]),
    ("glue-config-not-json", lambda p: _glue(p, "--do_train", config="not_json.json"),
     ["not_json.json"]),
    ("glue-config-unknown-key", lambda p: _glue(p, "--do_train", config="bad_key.json"),
     ["hidden_sise"]),
    ("glue-config-bad-value", lambda p: _glue(p, "--do_train", config="bad_value.json"),
     ["num_attention_heads"]),
    ("glue-seq-longer-than-positions", lambda p: _glue(p, "--do_train", config="short.json"),
     ["max_position_embeddings"]),
    ("glue-vocabulary-bigger-than-the-model",
     lambda p: _glue(p, "--do_train", config="small_vocab.json"), ["spm.model", "vocab_size"]),
    ("pretrain-seq-longer-than-positions",
     lambda p: _pretrain(p, "--max_seq_length=128"), ["--max_seq_length", "max_position_embeddings"]),
    ("glue-data-dir-missing", lambda p: _glue(p, "--do_train", data=str(p["root"] / "nowhere")),
     ["nowhere"]),
    ("glue-header-only", lambda p: _glue(p, "--do_train", data=str(p["root"] / "header")),
     ["train.tsv", "header"]),
    ("glue-not-utf8", lambda p: _glue(p, "--do_train", data=str(p["root"] / "latin1")),
     ["train.tsv:2", "UTF-8"]),
    ("glue-bad-optimizer", lambda p: _glue(p, "--do_train", "--optimizer=sgd"), ["--optimizer"]),
    ("glue-init-not-a-checkpoint",
     lambda p: _glue(p, "--do_train", f"--init_checkpoint={p['root'] / 'text.txt'}"),
     ["text.txt"]),
    ("glue-init-shape-mismatch",
     lambda p: _glue(p, "--do_train", f"--init_checkpoint={p['root'] / 'other' / 'model.ckpt'}"),
     ["hidden_size", "32", "16"]),
    ("glue-predict-with-pretrained-only",
     lambda p: _glue(p, "--do_predict",
                     f"--init_checkpoint={p['root'] / 'pretrained' / 'model.ckpt'}"),
     ["pretrained/model.ckpt", "no trained head"]),
    ("glue-spm-not-a-model",
     lambda p: [a if not a.startswith("--spm_model_file") else
                f"--spm_model_file={p['root'] / 'text.txt'}" for a in _glue(p, "--do_train")],
     ["text.txt"]),
    ("glue-no-tokenizer",
     lambda p: [a for a in _glue(p, "--do_train") if not a.startswith("--spm_model_file")],
     ["--spm_model_file", "--vocab_file"]),
    ("race-no-tokenizer",
     lambda p: ["run_race.py", f"--data_dir={p['root']}", f"--output_dir={p['root'] / 'race_out'}",
                f"--albert_config_file={p['root'] / 'config.json'}"],
     ["--spm_model_file", "--vocab_file"]),
    ("squad-wordpiece-vocab-without-unk",
     lambda p: [a if not a.startswith("--spm_model_file") else
                f"--vocab_file={p['root'] / 'text.txt'}"
                for a in _squad(p, f"--export_dir={p['root'] / 'squad_export'}")],
     ["text.txt", "[UNK]"]),
    ("squad-no-tokenizer",
     lambda p: [a for a in _squad(p, "--do_train") if not a.startswith("--spm_model_file")],
     ["--spm_model_file", "--vocab_file"]),
    ("pretrain-glob-matches-nothing",
     lambda p: _pretrain(p, input_file=p["root"] / "none-*.tfrecord"), ["none-*.tfrecord"]),
    ("pretrain-empty-records", lambda p: _pretrain(p), ["no records", "empty.tfrecord"]),
    ("pretrain-not-a-tfrecord", lambda p: _pretrain(p, input_file=p["root"] / "text.txt"),
     ["text.txt"]),
    ("pretrain-truncated-record", lambda p: _pretrain(
        p, "--num_train_steps=3", input_file=p["root"] / "truncated.tfrecord"),
     ["truncated.tfrecord"]),
    ("glue-binary-train-file", lambda p: _glue(p, "--do_train", data=str(p["root"] / "binary")),
     ["train.tsv:", "UTF-8"]),
    ("glue-init-corrupt-index",
     lambda p: _glue(p, "--do_train", f"--init_checkpoint={p['root'] / 'corrupt' / 'model.ckpt'}"),
     ["model.ckpt"]),
    ("export-saved-model-not-a-checkpoint",
     lambda p: ["export_saved_model.py", f"--albert_config_file={p['root'] / 'config.json'}",
                f"--init_checkpoint={p['root'] / 'text.txt'}",
                f"--export_dir={p['root'] / 'exports'}"], ["text.txt"]),
    ("glue-init-folder-not-a-model",
     lambda p: _glue(p, "--do_train", f"--init_checkpoint={p['root'] / 'not_a_model'}"),
     ["not_a_model", "no weights found"]),
    ("glue-config-contradicts-the-hf-folder",
     lambda p: _glue(p, "--do_train", f"--init_checkpoint={p['hf']}"),
     ["--albert_config_file=", "config.json says embedding_size=8", "embedding_size=16"]),
    ("export-saved-model-hf-pickle-without-torch",  # torch blocked: see WITHOUT below
     lambda p: ["export_saved_model.py", f"--init_checkpoint={p['root'] / 'torch_only'}",
                f"--export_dir={p['root'] / 'exports'}"], ["pytorch_model.bin", "torch"]),
    ("export-checkpoints-not-a-run-dir",
     lambda p: ["export_checkpoints.py", f"--albert_directory={p['root'] / 'corrupt'}",
                f"--export_path={p['root'] / 'tf1' / 'model.ckpt'}"],
     ["--albert_directory", "albert_config.json"]),
    ("squad-predict-file-not-json",
     lambda p: _squad(p, "--do_predict", f"--predict_file={p['root'] / 'text.txt'}",
                      f"--predict_feature_file={p['root'] / 'p.tfrecord'}",
                      f"--predict_feature_left_file={p['root'] / 'p.jsonl'}",
                      f"--init_checkpoint={p['root'] / 'other' / 'model.ckpt'}"), ["text.txt"]),
    ("race-unknown-task",
     lambda p: ["run_race.py", "--task_name=squad", f"--data_dir={p['root']}",
                f"--albert_config_file={p['root'] / 'config.json'}", f"--spm_model_file={p['spm']}",
                f"--output_dir={p['root'] / 'race_out'}"], ["--task_name", "squad"]),
    ("create-data-undecodable-line",
     lambda p: ["create_pretraining_data.py", f"--input_file={p['root'] / 'binary.txt'}",
                f"--output_file={p['root'] / 'cpd2.tfrecord'}", f"--spm_model_file={p['spm']}",
                "--undecodable_lines=fail", "--max_seq_length=32"], ["binary.txt:2"]),
    ("evaluate-squad-na-prob-missing-an-id",
     lambda p: ["-m", "albert_tf.evaluate_squad", p["squad_v2"], str(p["root"] / "predictions.json"),
                "--na-prob-file", str(p["root"] / "na_prob_short.json")], ["na_prob_short.json"]),
    ("squad-predict-needs-feature-files",
     lambda p: _squad(p, "--do_predict", f"--predict_file={p['squad_v2']}"),
     ["predict_feature_file"]),
    ("squad-v1-on-v2-data",
     lambda p: _squad(p, "--do_train", f"--train_file={p['root'] / 'train-v2.json'}",
                      f"--train_feature_file={p['root'] / 'squad_train.tfrecord'}"),
     ["--version_2_with_negative"]),
    ("squad-train-file-missing",
     lambda p: _squad(p, "--do_train", f"--train_file={p['root'] / 'train-v9.json'}"),
     ["train-v9.json"]),
    ("race-data-missing",
     lambda p: ["run_race.py", f"--data_dir={p['root'] / 'no_race'}",
                f"--albert_config_file={p['root'] / 'config.json'}", f"--spm_model_file={p['spm']}",
                f"--output_dir={p['root'] / 'race_out'}", "--max_seq_length=64",
                "--max_qa_length=16"], ["no_race"]),
    ("create-data-empty-input",
     lambda p: ["create_pretraining_data.py", f"--input_file={p['root'] / 'empty.txt'}",
                f"--output_file={p['root'] / 'cpd.tfrecord'}", f"--spm_model_file={p['spm']}",
                "--max_seq_length=32", "--dupe_factor=1"], ["empty.txt"]),
    ("evaluate-squad-predictions-not-an-object",
     lambda p: ["-m", "albert_tf.evaluate_squad", p["squad_v2"],
                str(p["root"] / "predictions_list.json")], ["predictions_list.json"]),
]


# Modules a case runs without, as where they are not installed.
WITHOUT = {"export-saved-model-hf-pickle-without-torch": ("torch",)}


@pytest.mark.parametrize("name, command, words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_ends_in_one_error_line(inputs, name, command, words):
    script, *argv = command(inputs)
    result = run_entry_point(script, argv, without=WITHOUT.get(name, ()))
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert lines and lines[-1].startswith("error: "), result.stderr[-3000:]
    for word in words:
        assert word in lines[-1], lines[-1]


def test_full_disk_while_checkpointing_is_one_line_and_leaves_no_partial_checkpoint(inputs):
    import resource

    def small_file_limit():  # as `ulimit -f 60`: writes past 60 KiB fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (60 * 1024, 60 * 1024))

    # A run copies its SentencePiece model (258 KiB) into the output_dir before training; the
    # folder already holds that copy here (as a re-run's would), so the checkpoint is what fails.
    out = inputs["root"] / "full_disk_out"
    out.mkdir()
    shutil.copy(inputs["spm"], out / "spm.model")
    script, *argv = _glue(inputs, "--do_train", "--train_step=2", "--save_checkpoints_steps=2",
                          "--train_batch_size=4")
    result = run_process(script, [*argv, f"--output_dir={out}"], env=console_env(),
                         preexec_fn=small_file_limit)
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert last.startswith("error: could not write checkpoint model.ckpt-2") and "File too large" in last
    assert not [name for name in os.listdir(out) if name.startswith("model.ckpt")]
