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


@pytest.mark.parametrize("version_2", [False, True])
def test_exported_signatures(version_2, spm_model, tmp_path):
    model = AlbertSquadV2(CONFIG, 3, 2) if version_2 else AlbertSquadV1(CONFIG)
    run = SquadRunConfig(albert_config_file="", spm_model_file=spm_model, output_dir="",
                         max_seq_length=64, max_query_length=12, max_answer_length=6,
                         export_dir=str(tmp_path))
    if version_2:  # saving costs ~20 s on 2 cores: the v1 module is checked unsaved
        loaded = tf.saved_model.load(squad_export.export(model, run))
    else:
        module = squad_export.SquadServing(model, spm_model, 64, 12, 6)
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

    module = squad_export.SquadServing(model, spm_model, 64, 12, 6)
    packed, _ = module.pack(tf.constant(QUESTIONS), tf.constant(CONTEXTS))
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
    import os
    import subprocess
    import sys

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
    code = ("import sys, tensorflow_text; from tensorflow.python.tools import saved_model_cli; "
            "sys.argv[0] = 'saved_model_cli'; saved_model_cli.main()")
    subprocess.run([sys.executable, "-c", code, "run", "--dir", path, "--tag_set", "serve",
                    "--signature_def", "serving_default", "--outdir", str(tmp_path / "out"),
                    "--inputs", ";".join(f"{n}={tmp_path / n}.npy" for n in ids)],
                   check=True, capture_output=True, timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    np.testing.assert_allclose(np.load(tmp_path / "out" / "start_logits.npy"),
                               model(ids)["start_logits"], atol=1e-5)


def test_answer_text_refuses_mismatched_batches_and_non_utf8(spm_model):
    module = squad_export.SquadServing(AlbertSquadV1(CONFIG), spm_model, 64, 12, 6)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"question:\] \[2\] \[context:\] \[1\]"):
        module.answer_text(tf.constant(QUESTIONS), tf.constant(CONTEXTS[:1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="context is not valid UTF-8"):
        module.answer_text(tf.constant(QUESTIONS[:1]), tf.constant([b"caf\xe9 au lait"]))
