import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.serving.preprocessing import build_preprocessing, export_preprocessing
from albert_tf.serving.saved_model import write_saved_model
from albert_tf.serving.verify import verify_in_fresh_process
from support.serving import saved_model_cli

TEXTS = ["The quick brown fox jumps over the lazy dog.", "Héllo  Wörld, 1,000.5 naïve ﬁle!"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, spm_model):
    return export_preprocessing(spm_model, str(tmp_path_factory.mktemp("pre")), max_seq_length=24)


def _python_ids(spm_model, text_a, text_b=None, length=24):
    tok = tokenization.FullTokenizer(None, True, spm_model)
    a = tok.convert_tokens_to_ids(tok.tokenize(tokenization.preprocess_text(text_a, lower=True)))
    b = [] if text_b is None else tok.convert_tokens_to_ids(tok.tokenize(tokenization.preprocess_text(text_b, lower=True)))
    budget = length - (3 if text_b is not None else 2)
    while len(a) + len(b) > budget:
        (a if len(a) > len(b) else b).pop()
    ids = [2] + a + [3] + (b + [3] if text_b is not None else [])
    return ids + [0] * (length - len(ids))


def test_single_and_pair_signatures_in_a_fresh_process(exported, spm_model):
    out = verify_in_fresh_process(exported, {
        "serving_default": {"text": np.array(TEXTS)},
        "serve_pair": {"text_a": np.array(TEXTS), "text_b": np.array(TEXTS[::-1])}})
    for i, text in enumerate(TEXTS):
        assert out["serving_default"]["input_word_ids"][i].tolist() == _python_ids(spm_model, text)
        assert out["serve_pair"]["input_word_ids"][i].tolist() == _python_ids(spm_model, text, TEXTS[::-1][i])
    assert out["serve_pair"]["input_type_ids"].max() == 1
    assert out["serving_default"]["input_mask"].dtype == np.int32


def test_model_travels_as_an_asset(exported, spm_model):
    info = tf.saved_model.load(exported).signatures["tokenization_info"]()
    path = info["spm_model_file"].numpy().decode()
    assert path.startswith(exported) and os.path.exists(path)
    assert open(path, "rb").read() == open(spm_model, "rb").read()
    assert bool(info["do_lower_case"].numpy()) and int(info["max_seq_length"].numpy()) == 24


def test_saved_model_cli_run_with_tensorflow_text(exported, spm_model, tmp_path):
    saved_model_cli("run", "--dir", exported, "--tag_set", "serve", "--signature_def",
                    "serving_default", "--input_exprs", f"text={TEXTS!r}", "--outdir", str(tmp_path))
    ids = np.load(tmp_path / "input_word_ids.npy")
    assert [row.tolist() for row in ids] == [_python_ids(spm_model, t) for t in TEXTS]


def test_mismatched_batches_and_non_utf8_text_are_refused(exported):
    """Same rule as the file readers: 2 text_a with 1 text_b is not broadcast, and bytes that
    are not UTF-8 are refused; each error names the input."""
    signatures = tf.saved_model.load(exported).signatures
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_a:\] \[2\] \[text_b:\] \[1\]"):
        signatures["serve_pair"](text_a=tf.constant(TEXTS), text_b=tf.constant(TEXTS[:1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="text_b is not valid UTF-8"):
        signatures["serve_pair"](text_a=tf.constant(TEXTS), text_b=tf.constant([b"ok", b"caf\xe9"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="text is not valid UTF-8"):
        signatures["serving_default"](text=tf.constant([b"\xff\xfe"]))


def test_every_signature_calls_one_traced_tokenizer(spm_model):
    """serving_default, both segments of serve_pair and TF Hub's calls share one trace of the
    text rules and the search (tracing them per call site made each export seconds slower)."""
    module, signatures = build_preprocessing(spm_model, 24)
    preprocessor, traced = module.preprocessor, []
    tokenize = preprocessor.tokenize
    preprocessor.tokenize = lambda strings: traced.append(strings) or tokenize(strings)
    for function in (signatures["serving_default"], signatures["serve_pair"], module.__call__,
                     module.tokenize.__call__):
        function.get_concrete_function()
    assert len(traced) == 1
    packed = module.serve_pair(tf.constant(TEXTS), tf.constant(TEXTS[::-1]))
    assert packed["input_word_ids"].numpy()[1].tolist() == _python_ids(spm_model, TEXTS[1],
                                                                        TEXTS[0])


def test_save_reuses_the_traces_of_bert_pack_inputs(spm_model, tmp_path):
    """Its four variants (1 or 2 segments, ragged rank 1 or 2) are traced as the module is
    built; saving must not trace them again (it did while `seq_length`'s spec had no name)."""
    module, signatures = build_preprocessing(spm_model, 24)
    pack = module.bert_pack_inputs.__call__
    assert pack.experimental_get_tracing_count() == 4
    write_saved_model(module, str(tmp_path), signatures)
    assert pack.experimental_get_tracing_count() == 4
