"""SQuAD SavedModel: the ids signature equals the model, the raw-text signature packs like the
Python features and returns the best span's text."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertSquadV1, AlbertSquadV2
from albert_tf.tasks.squad import export as squad_export
from albert_tf.tasks.squad import features, reader
from albert_tf.tasks.squad.task import SquadRunConfig
from albert_tf.tokenization import load_sentencepiece

CONFIG = AlbertConfig(vocab_size=1500, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
QUESTIONS = ["Who wrote the Apache License?", "When was the café opened?"]
CONTEXTS = ["The Apache License was written by the Apache Software Foundation in 2004.",
            "The Café “Zürich” opened on 3 May 1999 with 1,000.5 litres of coffee."]


@pytest.fixture(scope="module")
def v1(spm_model):
    """(model, its SquadServing): one module for the tests that need no other settings, since
    each new module traces its text signatures again (seconds each)."""
    tf.keras.utils.set_random_seed(3)
    model = AlbertSquadV1(CONFIG)
    return model, squad_export.SquadServing(model, spm_model, 64, 12, 6, doc_stride=20)


@pytest.mark.parametrize("version_2", [False, True])
def test_exported_signatures(version_2, spm_model, v1, tmp_path):
    model = AlbertSquadV2(CONFIG, 3, 2) if version_2 else v1[0]
    run = SquadRunConfig(albert_config_file="", spm_model_file=spm_model, output_dir="",
                         max_seq_length=64, max_query_length=12, max_answer_length=6,
                         export_dir=str(tmp_path))
    if version_2:  # saving costs ~20 s on 2 cores: the v1 module is checked unsaved
        loaded = tf.saved_model.load(squad_export.export(model, run))
    else:
        module = v1[1]
        loaded = type("Loaded", (), {"signatures": {"serving_default": module.serve_ids,
                                                    "answer_text": module.answer_text}})
    sp = load_sentencepiece(spm_model)
    examples = [reader.SquadExample(str(i), q, c) for i, (q, c) in
                enumerate(zip(QUESTIONS, CONTEXTS))]
    python = features.convert_examples_to_features(examples, sp, 64, 16, 12, False)
    assert len(python) == 2  # each context fits one window
    ids = {k: np.array([getattr(f, k) for f in python], np.int32)
           for k in ("input_ids", "input_mask", "segment_ids", "p_mask")}
    if not version_2:
        del ids["p_mask"]
    serve = loaded.signatures["serving_default"]
    served = (serve(**{k: tf.constant(v) for k, v in ids.items()}) if version_2 else
              serve({k: tf.constant(v) for k, v in ids.items()}))
    direct = model(ids)
    for key, value in direct.items():
        np.testing.assert_allclose(served[key], value, atol=1e-5)

    packed, _ = v1[1].pack(tf.constant(QUESTIONS), tf.constant(CONTEXTS))  # the model's own
    for key in ("input_ids", "input_mask", "segment_ids", "p_mask"):
        np.testing.assert_array_equal(packed[key], [getattr(f, key) for f in python])

    answers = loaded.signatures["answer_text"](question=tf.constant(QUESTIONS),
                                               context=tf.constant(CONTEXTS))
    answers = {k: v.numpy() for k, v in answers.items()}
    assert set(answers) == ({"answer", "score", "null_score"} if version_2 else {"answer", "score"})
    for row, feature in enumerate(python):
        context = [k for k in range(64) if feature.segment_ids[k] == 1 and feature.p_mask[k] == 0]
        if version_2:
            d = {k: v.numpy()[row] for k, v in direct.items()}
            pairs = [(d["start_top_log_probs"][i] + d["end_top_log_probs"][i * 2 + j],
                      d["start_top_index"][i], d["end_top_index"][i * 2 + j])
                     for i in range(3) for j in range(2)]
            pairs = [p for p in pairs if p[1] in context and p[2] in context and 0 <= p[2] - p[1] < 6]
            assert float(answers["null_score"][row]) == pytest.approx(d["cls_logits"], abs=1e-5)
            if not pairs:
                assert answers["answer"][row] == b""
                continue
            score, start, end = max(pairs, key=lambda p: p[0])
        else:
            s, e = direct["start_logits"].numpy()[row], direct["end_logits"].numpy()[row]
            score, start, end = max((s[a] + e[b], a, b) for a in context for b in context
                                    if 0 <= b - a < 6)
        assert float(answers["score"][row]) == pytest.approx(score, abs=1e-4)
        text = sp.DecodePieces(feature.tokens[start:end + 1]).strip()
        assert answers["answer"][row].decode() == text


def test_tf_serving_loader_restores_the_export(spm_model, tmp_path):
    """`saved_model_cli run` restores variables with the TF1-style loader TF Serving uses."""
    from support.serving import saved_model_cli

    model = AlbertSquadV1(CONFIG)
    run = SquadRunConfig(albert_config_file="", spm_model_file=spm_model, output_dir="",
                         max_seq_length=64, max_query_length=12, max_answer_length=6,
                         export_dir=str(tmp_path / "export"))
    path = squad_export.export(model, run)
    assert path == str(tmp_path / "export" / "1")  # the one version rule: <export_dir>/<n>
    rng = np.random.default_rng(0)
    ids = {"input_ids": rng.integers(5, 1500, (2, 64)).astype(np.int32),
           "input_mask": np.ones((2, 64), np.int32), "segment_ids": np.zeros((2, 64), np.int32)}
    for name, value in ids.items():
        np.save(tmp_path / f"{name}.npy", value)
    saved_model_cli("run", "--dir", path, "--tag_set", "serve", "--signature_def",
                    "serving_default", "--outdir", str(tmp_path / "out"),
                    "--inputs", ";".join(f"{n}={tmp_path / n}.npy" for n in ids))
    np.testing.assert_allclose(np.load(tmp_path / "out" / "start_logits.npy"),
                               model(ids)["start_logits"], atol=1e-5)


def test_answer_text_refuses_mismatched_batches_and_non_utf8(v1):
    module = v1[1]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"question:\] \[2\] \[context:\] \[1\]"):
        module.answer_text(tf.constant(QUESTIONS), tf.constant(CONTEXTS[:1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="context is not valid UTF-8"):
        module.answer_text(tf.constant(QUESTIONS[:1]), tf.constant([b"caf\xe9 au lait"]))


# WordPiece (the Chinese models: --vocab_file alone). Accents, mixed case, CJK with and without
# spaces, full-width punctuation: the answers must be the exact context text, as the Python
# post-processing cuts it out.
CRAFTED_SQUAD = {"title": "Crafted", "paragraphs": [
    {"context": "Das Café „Zürich“ in MÜNCHEN wurde 1999 von Ångström & Søren McDonald eröffnet; "
                "résumé: naïve ÉCOLE-style coffee, 1,000.5 litres.",
     "qas": [{"id": "crafted-1", "question": "Who opened the Café?",
              "answers": [{"text": "Ångström & Søren McDonald", "answer_start": 51}]}]},
    {"context": "北京是中华人民共和国的首都，Beijing（北京）is its CAPITAL; 上海 is bigger. "
                "我爱你！ The Forbidden City (紫禁城) lies in Dōngchéng.",
     "qas": [{"id": "crafted-2", "question": "什么是中国的首都？",
              "answers": [{"text": "北京", "answer_start": 0}]}]}]}


def _wordpiece_squad(data_dir, paragraphs=6):
    """A SQuAD dict: the first short dev-v1.1 paragraphs (one question each; they fit one
    window below) and the crafted article."""
    data = reader.load_squad_json(data_dir / "squad" / "v1.1" / "dev-v1.1.json")
    short = [dict(p, qas=p["qas"][:1]) for a in data["data"] for p in a["paragraphs"]
             if len(p["context"]) < 450][:paragraphs]
    return {"version": "1.1", "data": [{"title": "Dev", "paragraphs": short}, CRAFTED_SQUAD]}


def _wordpiece_vocab(path, squad):
    from albert_tf.tokenization import preprocess_text
    from support.wordpiece_vocab import build_vocab

    texts = [preprocess_text(t) for a in squad["data"] for p in a["paragraphs"]
             for t in [p["context"]] + [q["question"] for q in p["qas"]]]
    return build_vocab(path, texts, words=2000)


def _python_answers(model, examples, pieces, seq, query, answer, version_2):
    """run_squad's prediction path: features, model outputs, n-best, text from the context
    (n_best_size = every position, so the best valid span is found wherever it ranks)."""
    from albert_tf.tasks.squad import postprocess

    feats = features.convert_examples_to_features(examples, pieces, seq, 32, query, False)
    assert len(feats) == len(examples)  # one window each: the served path reads the first only
    ids = {k: np.array([getattr(f, k) for f in feats], np.int32)
           for k in ("input_ids", "input_mask", "segment_ids", "p_mask")}
    if not version_2:
        del ids["p_mask"]
    out = {k: v.numpy() for k, v in model(ids).items()}
    result_dict = {}
    if version_2:
        results = [postprocess.RawResultV2(f.unique_id, *(out[k][i].tolist() for k in (
            "start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index")),
            float(out["cls_logits"][i])) for i, f in enumerate(feats)]
        cls_dict = {}
        postprocess.accumulate_predictions_v2(result_dict, cls_dict, examples, feats, results,
                                              seq, answer, model.start_n_top, model.end_n_top)
        # No null threshold: every question answered, as answer_text does (null_score apart).
        predictions = postprocess.write_predictions_v2(result_dict, cls_dict, examples, feats,
                                                       results, seq, answer)[0]
        return predictions, feats
    results = [postprocess.RawResult(f.unique_id, out["start_logits"][i].tolist(),
                                     out["end_logits"][i].tolist()) for i, f in enumerate(feats)]
    postprocess.accumulate_predictions_v1(result_dict, examples, feats, results, seq, answer)
    predictions = postprocess.write_predictions_v1(result_dict, examples, feats, results, seq,
                                                   answer)[0]
    return predictions, feats


@pytest.mark.parametrize("version_2", [False, True])
def test_wordpiece_answer_text_is_the_python_prediction(version_2, data_dir, tmp_path):
    from albert_tf.tokenization import WordpiecePieces

    squad = _wordpiece_squad(data_dir)
    vocab_file = str(tmp_path / "vocab.txt")
    size = len(_wordpiece_vocab(vocab_file, squad))
    config = AlbertConfig(**{**CONFIG.to_dict(), "vocab_size": size,
                             "max_position_embeddings": 192})
    tf.keras.utils.set_random_seed(1)
    model = AlbertSquadV2(config, 3, 2) if version_2 else AlbertSquadV1(config)
    examples = reader.examples_from_json(squad, False)
    python, feats = _python_answers(model, examples, WordpiecePieces(vocab_file), 192, 24, 8,
                                    version_2)
    module = squad_export.SquadServing(model, None, 192, 24, 8, vocab_file=vocab_file)
    questions = tf.constant([e.question_text for e in examples])
    contexts = tf.constant([e.paragraph_text for e in examples])
    packed, _ = module.pack(questions, contexts)
    for key in ("input_ids", "input_mask", "segment_ids", "p_mask"):
        np.testing.assert_array_equal(packed[key], [getattr(f, key) for f in feats])
    served = module.answer_text(questions, contexts)
    answers = [a.decode() for a in served["answer"].numpy()]
    assert answers == [python[e.qas_id] for e in examples]
    # Spans of their own paragraphs; v2's random model abstains ("") on a few questions.
    assert sum(not a for a in answers) <= (2 if version_2 else 0)
    assert all(a in e.paragraph_text for a, e in zip(answers, examples) if a)


def test_run_squad_exports_a_wordpiece_model(data_dir, tmp_path):
    """`run_squad.py --vocab_file=... --do_predict --export_dir=...`: the export, loaded in a
    fresh process, answers every question with the text of predictions.json."""
    import json

    from albert_tf.checkpoint import save_tf1_checkpoint
    from albert_tf.serving.verify import verify_in_fresh_process
    from support.entry_points import run_entry_point

    squad = _wordpiece_squad(data_dir)
    (tmp_path / "predict.json").write_text(json.dumps(squad))
    size = len(_wordpiece_vocab(tmp_path / "vocab.txt", squad))
    config = AlbertConfig(**{**CONFIG.to_dict(), "vocab_size": size,
                             "max_position_embeddings": 192})
    config.to_json_file(tmp_path / "albert_config.json")
    tf.keras.utils.set_random_seed(2)
    model = AlbertSquadV1(config)
    model({k: tf.zeros([1, 8], tf.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    init = save_tf1_checkpoint(model, str(tmp_path / "init" / "model.ckpt"))
    done = run_entry_point("run_squad.py", [
        f"--albert_config_file={tmp_path / 'albert_config.json'}",
        f"--vocab_file={tmp_path / 'vocab.txt'}", f"--output_dir={tmp_path / 'out'}",
        f"--predict_file={tmp_path / 'predict.json'}", f"--init_checkpoint={init}",
        f"--predict_feature_file={tmp_path / 'p.tfrecord'}",
        f"--predict_feature_left_file={tmp_path / 'p.jsonl'}", "--do_predict",
        f"--export_dir={tmp_path / 'export'}", "--max_seq_length=192", "--max_query_length=24",
        "--doc_stride=32", "--max_answer_length=8", "--n_best_size=192"])
    assert done.returncode == 0, done.stderr[-3000:]
    predictions = json.loads((tmp_path / "out" / "predictions.json").read_text())
    examples = reader.examples_from_json(squad, False)
    served = verify_in_fresh_process(tmp_path / "export" / "1", {"answer_text": {
        "question": np.array([e.question_text for e in examples]),
        "context": np.array([e.paragraph_text for e in examples])}})["answer_text"]
    assert set(served) == {"answer", "score"}
    assert list(served["answer"]) == [predictions[e.qas_id] for e in examples]


FILLER = ("The committee met on Tuesday to discuss the budget, and after a long debate the "
          "members agreed to postpone the vote until the next session of the year. ")


def _pointer(piece_id):
    """A stand-in span model whose start and end logits are high only at `piece_id`."""
    def model(inputs, training=False):
        hit = tf.cast(tf.equal(inputs["input_ids"], piece_id), tf.float32) * 10.0
        return {"start_logits": hit, "end_logits": hit}
    return model


def test_answer_text_finds_an_answer_past_the_first_window(spm_model):
    sp = load_sentencepiece(spm_model)
    filler = set(sp.EncodeAsIds(FILLER.lower()))
    # A word with a piece the filler lacks: the stand-in model points at that piece only.
    word, piece = next((w, p) for w in ("ship", "man", "whale", "music", "london")
                       for p in sp.EncodeAsIds(" " + w) if p not in filler)
    context = FILLER * 4 + f"It happened on the {word.title()}."
    question = "Where did it happen?"
    assert len(sp.EncodeAsIds(context.lower())) > 3 * 64  # several windows of 64
    module = squad_export.SquadServing(_pointer(piece), spm_model, 64, 12, 6, doc_stride=20)
    word = sp.DecodeIds([piece]).strip()
    packed = module.windows(tf.constant([question, question]),
                            tf.constant([context, "It happened in " + word.title() + "."]))
    assert packed["row"].numpy().tolist().count(0) > 3 and packed["row"].numpy()[-1] == 1
    answers = module.answer_text(tf.constant([question]), tf.constant([context]))
    assert answers["answer"].numpy().tolist() == [word.encode()]
    assert float(answers["score"][0]) == pytest.approx(20.0)


def test_answer_text_scores_every_window_as_the_python_features(spm_model, v1):
    model, module = v1
    sp = load_sentencepiece(spm_model)
    context = FILLER * 3
    example = reader.SquadExample("0", "What was postponed?", context)
    python = features.convert_examples_to_features([example], sp, 64, 20, 12, False)
    assert len(python) > 2
    packed = module.windows(tf.constant([example.question_text]), tf.constant([context]))
    for key in ("input_ids", "input_mask", "segment_ids", "p_mask"):
        np.testing.assert_array_equal(packed["features"][key], [getattr(f, key) for f in python])
    best = (-np.inf, None)
    for feature in python:
        ids = {k: np.array([getattr(feature, k)], np.int32)
               for k in ("input_ids", "input_mask", "segment_ids")}
        out = model(ids)
        s, e = out["start_logits"].numpy()[0], out["end_logits"].numpy()[0]
        context_at = [k for k in range(64) if feature.segment_ids[k] == 1 and feature.p_mask[k] == 0]
        for a in context_at:
            for b in context_at:
                if 0 <= b - a < 6 and s[a] + e[b] > best[0]:
                    best = (s[a] + e[b], sp.DecodePieces(feature.tokens[a:b + 1]).strip())
    answers = module.answer_text(tf.constant([example.question_text]), tf.constant([context]))
    assert float(answers["score"][0]) == pytest.approx(best[0], abs=1e-4)
    assert answers["answer"].numpy()[0].decode() == best[1]
