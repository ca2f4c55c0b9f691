"""run_squad end to end on real SQuAD data with a tiny model (a few steps), v1.1 and v2.0."""

import json

import pytest

from albert_tf.config import AlbertConfig
from albert_tf.tasks.squad import reader
from albert_tf.tasks.squad.task import SquadRunConfig, run_squad
from support.configs import READING_TINY
from support.entry_points import run_entry_point
from support.model_folders import assert_self_contained

TINY = AlbertConfig(**READING_TINY)


def _subset(data, articles, paragraphs):
    return {"version": data["version"], "data": [
        {"title": a["title"], "paragraphs": a["paragraphs"][:paragraphs]}
        for a in data["data"][:articles]]}


def _ids(data):
    return {qa["id"] for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]}


@pytest.fixture()
def config_file(tmp_path):
    path = tmp_path / "albert_config.json"
    TINY.to_json_file(path)
    return str(path)


def _split(data_file, tmp_path, paragraphs):
    train, held_out = reader.split_by_article(reader.load_squad_json(data_file))
    train, held_out = _subset(train, 1, paragraphs), _subset(held_out, 1, paragraphs)
    (tmp_path / "train.json").write_text(json.dumps(train))
    (tmp_path / "predict.json").write_text(json.dumps(held_out))
    return str(tmp_path / "train.json"), str(tmp_path / "predict.json"), _ids(held_out)


def test_v1_script_trains_and_predicts_every_question(data_dir, spm_model, config_file, tmp_path):
    train, predict, ids = _split(data_dir / "squad" / "v1.1" / "dev-v1.1.json", tmp_path, 2)
    out = tmp_path / "out"
    command = [f"--albert_config_file={config_file}",
               f"--spm_model_file={spm_model}", f"--output_dir={out}", f"--train_file={train}",
               f"--predict_file={predict}", f"--predict_feature_file={tmp_path / 'p.tfrecord'}",
               f"--predict_feature_left_file={tmp_path / 'p.jsonl'}", "--do_train", "--do_predict",
               "--max_seq_length=96", "--doc_stride=48", "--max_query_length=24",
               "--train_batch_size=8", "--num_train_epochs=0.5", "--save_checkpoints_steps=1",
               "--learning_rate=1e-3", "--predict_batch_size=32"]
    done = run_entry_point("run_squad.py", command)
    assert done.returncode == 0, done.stderr[-3000:]
    for path in (train, predict):  # each file's [UNK] rate is logged
        assert f" tokens) in {path}" in done.stderr and "[UNK] rate" in done.stderr
    predictions = json.loads((out / "predictions.json").read_text())
    assert set(predictions) == ids
    nbest = json.loads((out / "nbest_predictions.json").read_text())
    assert all(0 < len(v) <= 20 for v in nbest.values())
    results = (out / "eval_results.txt").read_text()
    assert "best f1 = " in results and "best perf happened at step:" in results
    assert (out / "model.ckpt-best.index").exists()
    assert_self_contained(out, TINY, spm_model)
    # a second, predict-only run from the best checkpoint reuses both feature files
    stamp = (tmp_path / "p.jsonl").stat().st_mtime_ns
    run = SquadRunConfig.from_flat(dict(
        albert_config_file=config_file, spm_model_file=spm_model, output_dir=str(tmp_path / "o2"),
        predict_file=predict, predict_feature_file=str(tmp_path / "p.tfrecord"),
        predict_feature_left_file=str(tmp_path / "p.jsonl"), do_predict=True,
        init_checkpoint=str(out / "model.ckpt-best"), max_seq_length=96, doc_stride=48,
        max_query_length=24, predict_batch_size=32, export_dir=str(tmp_path / "export"),
        tflite="float32"))
    again = run_squad(run)
    # The TFLite files are versioned with the SavedModel export/1: export/tflite/1.
    meta = json.loads((tmp_path / "export" / "tflite" / "1" / "squad.json").read_text())
    assert meta["outputs"] == ["start_logits", "end_logits"] and meta["max_seq_length"] == 96
    assert (tmp_path / "export" / "tflite" / "1" / "squad.float32.tflite").exists()
    assert (tmp_path / "p.jsonl").stat().st_mtime_ns == stamp
    assert json.loads((tmp_path / "o2" / "predictions.json").read_text()) == predictions
    assert set(again) == {"exact_match", "f1"}


def test_v2_library_run_writes_null_odds_for_every_question(data_dir, spm_model, config_file,
                                                            tmp_path):
    train, predict, ids = _split(data_dir / "squad" / "v2.0" / "dev-v2.0.first5articles.json",
                                 tmp_path, 1)
    run = SquadRunConfig.from_flat(dict(
        albert_config_file=config_file, spm_model_file=spm_model, output_dir=str(tmp_path / "o"),
        version_2_with_negative=True, train_file=train, predict_file=predict,
        predict_feature_file=str(tmp_path / "p.tfrecord"),
        predict_feature_left_file=str(tmp_path / "p.jsonl"), do_train=True, do_predict=True,
        max_seq_length=96, doc_stride=48, max_query_length=24, train_batch_size=8,
        num_train_epochs=0.3, save_checkpoints_steps=100, learning_rate=1e-3,
        predict_batch_size=32))
    result = run_squad(run)
    assert {"exact", "f1", "total", "null_score_diff_threshold"} <= set(result)
    assert result["total"] == len(ids)
    for name in ("predictions.json", "null_odds.json", "nbest_predictions.json"):
        assert set(json.loads((tmp_path / "o" / name).read_text())) == ids


@pytest.mark.parametrize("changes, message", [
    ({}, "At least one of"),
    ({"do_train": True}, "train_file"),
    ({"do_predict": True, "predict_file": "x.json"}, "predict_feature_file"),
    ({"do_train": True, "train_file": "t.json", "max_seq_length": 20, "max_query_length": 17},
     "must be greater than"),
    ({"do_train": True, "train_file": "t.json", "max_seq_length": 512}, "sequence length 512"),
    ({"export_dir": "e", "tflite": "float32,int4"}, "--tflite: unknown kind 'int4'"),
    ({"do_train": True, "train_file": "t.json", "tflite": "float32"}, "--tflite needs --export_dir"),
    ({"export_dir": "e", "tflite": "float32", "version_2_with_negative": True}, "v1.1 models only"),
])
def test_flag_validation(changes, message):
    run = SquadRunConfig(albert_config_file="c", spm_model_file="s", output_dir="o", **changes)
    with pytest.raises(ValueError, match=message):
        run.validate(TINY)


ORIGINAL_FLAGS = {  # every flag of the original run_squad_v1.py / run_squad_v2.py, its default
    "albert_config_file": None, "vocab_file": None, "spm_model_file": None, "output_dir": None,
    "train_file": None, "predict_file": None, "train_feature_file": None,
    "predict_feature_file": None, "predict_feature_left_file": None, "init_checkpoint": None,
    "albert_hub_module_handle": None, "do_lower_case": "true", "max_seq_length": "384",
    "doc_stride": "128", "max_query_length": "64", "do_train": "false", "do_predict": "false",
    "train_batch_size": "32", "predict_batch_size": "8", "learning_rate": "5e-05",
    "num_train_epochs": "3.0", "warmup_proportion": "0.1", "save_checkpoints_steps": "1000",
    "iterations_per_loop": "1000", "n_best_size": "20", "max_answer_length": "30",
    "use_tpu": "false", "tpu_name": None, "tpu_zone": None, "gcp_project": None, "master": None,
    "num_tpu_cores": "8", "use_einsum": "true", "export_dir": None, "start_n_top": "5",
    "end_n_top": "5", "dropout_prob": "0.1"}


def test_script_has_every_original_flag_and_default():
    text = run_entry_point("run_squad.py", ["--helpshort"]).stdout
    for name, default in ORIGINAL_FLAGS.items():
        assert f"--{name}:" in text or f"--[no]{name}:" in text, name
        if default is not None:
            block = text.split(f"{name}:", 1)[1].split("\n  --", 1)[0]
            assert f"(default: '{default}')" in block, name


def test_v1_with_a_wordpiece_vocab_only(data_dir, tmp_path):
    """--vocab_file without --spm_model_file (the WordPiece models): training features find
    their answers, and every prediction maps back to text of its own context."""
    from support.wordpiece_vocab import build_vocab

    train, predict, ids = _split(data_dir / "squad" / "v1.1" / "dev-v1.1.json", tmp_path, 2)
    texts = [p["context"] + " " + qa["question"]
             for f in (train, predict) for a in json.loads(open(f).read())["data"]
             for p in a["paragraphs"] for qa in p["qas"]]
    vocab = build_vocab(tmp_path / "vocab.txt", texts, words=400)
    config = tmp_path / "albert_config.json"
    AlbertConfig(**{**TINY.to_dict(), "vocab_size": len(vocab)}).to_json_file(config)
    out = tmp_path / "out"
    done = run_entry_point("run_squad.py", [
        f"--albert_config_file={config}", f"--vocab_file={tmp_path / 'vocab.txt'}",
        f"--output_dir={out}", f"--train_file={train}", f"--predict_file={predict}",
        f"--predict_feature_file={tmp_path / 'p.tfrecord'}",
        f"--predict_feature_left_file={tmp_path / 'p.jsonl'}", "--do_train", "--do_predict",
        "--max_seq_length=96", "--doc_stride=48", "--max_query_length=24",
        "--train_batch_size=8", "--num_train_epochs=0.5", "--save_checkpoints_steps=100",
        "--learning_rate=1e-3", "--predict_batch_size=32"])
    assert done.returncode == 0, done.stderr[-3000:]
    predictions = json.loads((out / "predictions.json").read_text())
    assert set(predictions) == ids
    contexts = {qa["id"]: p["context"].lower() for a in json.loads(open(predict).read())["data"]
                for p in a["paragraphs"] for qa in p["qas"]}
    assert all(answer.lower() in contexts[qid] for qid, answer in predictions.items())


def test_wordpiece_pieces_locate_training_answers(data_dir, tmp_path):
    """Through the WordPiece adapter, the answer span of (almost) every training question
    covers exactly the answer's words."""
    from albert_tf.tasks.squad.features import convert_examples_to_features
    from albert_tf.tokenization import WordpiecePieces
    from support.wordpiece_vocab import build_vocab

    train, _, _ = _split(data_dir / "squad" / "v1.1" / "dev-v1.1.json", tmp_path, 2)
    examples = reader.read_squad_examples(train, True)
    vocab = build_vocab(tmp_path / "vocab.txt",
                        [e.paragraph_text + " " + e.question_text for e in examples], words=400)
    pieces = WordpiecePieces(str(tmp_path / "vocab.txt"))
    assert pieces.GetPieceSize() == len(vocab)
    assert [pieces.IdToPiece(pieces.PieceToId(p)) for p in ("[CLS]", "\u2581the", "ing")] == [
        "[CLS]", "\u2581the", "ing"]
    found = matched = 0
    for example in examples:
        features = convert_examples_to_features([example], pieces, 128, 64, 32, True,
                                                lambda f: None, True)
        for feature in features:
            if feature.start_position == 0:  # the answer is not in this window
                continue
            found += 1
            span = "".join(feature.tokens[feature.start_position:feature.end_position + 1])
            answer = example.orig_answer_text.lower().replace(" ", "")
            matched += span.replace("\u2581", "") == answer
    assert found > 20 and matched >= 0.9 * found, (matched, found)

