"""run_ner.py end to end on real tweets (the Broad Twitter Corpus in ../shared/data/ner/btc)
with a tiny model: flags parsed as the script parses them, then train, evaluate each checkpoint
and keep the best, predict the held-out tweets (section H, the empty tokens and tokens with
spaces it has included), export (SavedModel and TFLite), and serve the export.

Quality is not judged: the model trains 4 steps at a tiny rate, so its tags stay varied and
the entity scores are not all zero (a collapsed all-O tagger would make the checks trivial)."""

import contextlib
import json
import logging

import numpy as np
import pytest
from absl import flags
from absl import logging as absl_logging

from albert_tf import cli
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.token_classification import features as F
from albert_tf.tasks.token_classification.config import NER_FLAGS, NerRunConfig
from albert_tf.tasks.token_classification.metrics import chunks, tagging_metrics
from albert_tf.tasks.token_classification.results import read_conll_tags
from albert_tf.tasks.token_classification.task import run_ner
from support.configs import GLUE_TINY
from support.entry_points import run_entry_point
from support.model_folders import assert_self_contained
from support.paths import DATA

SEQ, STRIDE = 32, 12
LABELS = ["B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER", "O"]


def _blocks(path):
    return [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]


def run_cli(argv) -> dict:
    """run_ner.py's flags parsed as the script parses them, then its library call."""
    values = flags.FlagValues()
    cli.define_flags("run_ner.py", NER_FLAGS, NerRunConfig, runtime=True, flag_values=values)
    values(["run_ner.py", *argv])
    return run_ner(cli.config_from_flags(NerRunConfig, values))


@pytest.fixture(scope="module")
def run(tmp_path_factory, spm_model):
    btc = DATA / "ner" / "btc"
    if not btc.exists():
        pytest.skip(f"needs {btc} (the project's ../shared folder; absent in a plain clone)")
    root = tmp_path_factory.mktemp("ner")
    (root / "train.conll").write_text("\n\n".join(_blocks(btc / "train.conll")[:300]) + "\n",
                                      encoding="utf-8")
    dev = _blocks(btc / "dev.conll")
    held_out = dev[:150] + [dev[1466], dev[1961], dev[1962]]  # the last ones: odd tokens
    (root / "test.conll").write_text("\n\n".join(held_out) + "\n", encoding="utf-8")
    (root / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    with logged_lines() as lines:
        summary = run_cli([
            f"--train_file={root / 'train.conll'}", f"--dev_file={root / 'test.conll'}",
            f"--test_file={root / 'test.conll'}",
            f"--albert_config_file={root / 'albert_config.json'}",
            f"--spm_model_file={spm_model}", f"--output_dir={root / 'output'}",
            f"--max_seq_length={SEQ}", f"--doc_stride={STRIDE}", "--do_train", "--do_eval",
            "--do_predict", f"--export_dir={root / 'export'}", "--tflite=float32", "--train_step=4",
            "--save_checkpoints_steps=2", "--train_batch_size=8", "--eval_batch_size=64",
            "--predict_batch_size=64", "--learning_rate=1e-5", "--seed=1"])
    (root / "log.txt").write_text("\n".join(lines), encoding="utf-8")
    return root, summary


@contextlib.contextmanager
def logged_lines():
    """The messages absl logs at INFO and above while inside (as a script's console shows)."""
    lines, logger = [], absl_logging.get_absl_logger()
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_each_file_logs_its_unk_rate(run):
    root, _ = run
    log = (root / "log.txt").read_text(encoding="utf-8")
    for name in ("train.conll", "test.conll"):
        assert f" tokens) in {root / name}" in log and "[UNK] rate" in log


def _test_sentences(root):
    from albert_tf.tasks.token_classification.data import read_sentences

    return read_sentences(str(root / "test.conll"))


def test_every_test_token_gets_a_tag(run):
    root, _ = run
    sentences = _test_sentences(root)
    written = (root / "output" / "test_predictions.conll").read_text(encoding="utf-8")
    rows = [[line.rsplit("\t", 1) for line in block.split("\n")]
            for block in written.rstrip("\n").split("\n\n")]
    assert len(rows) == len(sentences) == 153
    for sentence, lines in zip(sentences, rows):
        assert [token for token, _ in lines] == sentence.tokens  # "", "ke s", " " included
        assert all(tag in LABELS for _, tag in lines)
    # Long tweets were split: more windows than sentences.
    windows = sum(1 for _ in F.input_fn_builder(str(root / "output" / "ner_predict.tf_record"),
                                                SEQ, False)(1))
    assert windows > len(sentences) + 20


def _eval_blocks(path):
    text = path.read_text()
    return [dict(line.split(" = ", 1) for line in block.strip().splitlines() if " = " in line)
            for block in text.split("=" * 50) if block.strip()]


def test_output_dir_is_usable_alone(run, spm_model):
    root, _ = run
    assert_self_contained(root / "output", GLUE_TINY, spm_model, labels=LABELS)


def test_eval_results_and_best_checkpoint(run):
    root, _ = run
    output = root / "output"
    blocks = _eval_blocks(output / "eval_results.txt")
    assert [b["global_step"] for b in blocks[:2]] == ["2", "4"]
    for block in blocks[:2]:
        for key in ("eval_precision", "eval_recall", "eval_f1", "eval_accuracy", "eval_loss",
                    "eval_f1_PER", "eval_f1_ORG", "eval_f1_LOC"):
            assert 0.0 <= float(block[key]) <= (1.0 if key != "eval_loss" else 10.0), key
    last, best_step, best_value = (output / "best_trial.txt").read_text().split(":")
    f1s = [float(b["eval_f1"]) for b in blocks[:2]]
    assert last == "4" and float(best_value) == pytest.approx(max(f1s))
    assert int(best_step) == (2 if f1s[0] >= f1s[1] else 4)
    assert (output / "model.ckpt-best.index").exists()
    assert json.loads((output / "labels.json").read_text()) == LABELS


def test_eval_f1_equals_the_f1_of_its_own_test_predictions(run):
    """dev file = test file: the best checkpoint's eval_f1 is the F1 of test_predictions.conll
    against the file's tags, by our metric (and by seqeval: test_same_numbers_as_seqeval)."""
    root, summary = run
    output = root / "output"
    best = _eval_blocks(output / "eval_results.txt")[-1]  # the best checkpoint's lines
    gold = [s.tags for s in _test_sentences(root)]
    predicted = read_conll_tags(str(output / "test_predictions.conll"))
    ours = tagging_metrics(gold, predicted)
    assert float(best["eval_f1"]) == pytest.approx(ours["eval_f1"], abs=1e-12)
    assert 0.0 < ours["eval_f1"] < 1.0
    for key in ("eval_precision", "eval_recall", "eval_accuracy"):
        assert float(best[key]) == pytest.approx(ours[key], abs=1e-12)
    assert summary["predict"]["metrics"] == ours  # test_results.txt
    written = dict(line.split(" = ") for line in
                   (output / "test_results.txt").read_text().splitlines())
    assert float(written["eval_f1"]) == ours["eval_f1"]
    seqeval = pytest.importorskip("seqeval.metrics", reason="seqeval (pip install -e .[test])")
    assert float(best["eval_f1"]) == pytest.approx(seqeval.f1_score(gold, predicted), abs=1e-12)


def _export(root):
    (version,) = [p for p in (root / "export").iterdir() if p.name.isdigit()]
    return version


def test_serve_text_gives_the_cli_tags_word_for_word(run):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of serve_text)

    root, _ = run
    sentences = [s for s in _test_sentences(root)
                 if all(t and len(t.split()) == 1 for t in s.tokens)]
    assert len(sentences) > 140
    predicted = read_conll_tags(str(root / "output" / "test_predictions.conll"))
    by_tokens = {tuple(s.tokens): tags for s, tags in zip(_test_sentences(root), predicted)}
    texts = [" ".join(s.tokens) for s in sentences]
    served = tf.saved_model.load(str(_export(root))).signatures["serve_text"](
        text=tf.constant(texts))
    strings = {k: [[x.decode() for x in row] for row in v.numpy()]
               for k, v in served.items() if v.dtype == tf.string}
    for i, (sentence, text) in enumerate(zip(sentences, texts)):
        n = len(sentence.tokens)
        want = by_tokens[tuple(sentence.tokens)]
        assert strings["words"][i][:n] == sentence.tokens
        assert strings["tags"][i][:n] == want, text
        assert all(t == "" for t in strings["tags"][i][n:])
        # The entities are the chunks of those tags, as character spans of the text.
        starts, ends = served["word_starts"].numpy()[i], served["word_ends"].numpy()[i]
        spans = [(kind, int(starts[a]), int(ends[b])) for kind, a, b in chunks(want)]
        got = [(label, int(s), int(e)) for label, s, e in zip(
            strings["entity_labels"][i], served["entity_starts"].numpy()[i],
            served["entity_ends"].numpy()[i]) if label]
        assert got == spans
        assert strings["entity_texts"][i][:len(spans)] == [text[s:e] for _, s, e in spans]
    assert sum(len(chunks(by_tokens[tuple(s.tokens)])) for s in sentences) > 20


def test_serving_default_and_tflite_on_the_cli_windows(run):
    import tensorflow as tf

    from albert_tf.serving.lite import interpreter_runner

    root, _ = run
    output = root / "output"
    batch = next(iter(F.input_fn_builder(str(output / "ner_predict.tf_record"), SEQ, False)(16)))
    served = tf.saved_model.load(str(_export(root))).signatures["serving_default"](
        input_ids=batch["input_ids"], input_mask=batch["input_mask"],
        segment_ids=batch["segment_ids"])
    # The tag of each word in its home window is the one test_predictions.conll has.
    predicted = read_conll_tags(str(output / "test_predictions.conll"))
    rows, columns = np.nonzero(batch["is_max_context"].numpy())
    for r, c in zip(rows, columns):
        sentence, word = batch["example_index"].numpy()[r], batch["word_ids"].numpy()[r, c]
        assert served["tags"].numpy()[r, c].decode() == predicted[sentence][word]
        assert LABELS[served["tag_ids"].numpy()[r, c]] == predicted[sentence][word]
    folder = root / "export" / "tflite" / _export(root).name  # versioned with the SavedModel
    metadata = json.loads((folder / "token_classifier.json").read_text())
    assert metadata["label_names"] == LABELS and metadata["max_seq_length"] == SEQ
    lite = interpreter_runner(str(folder / "token_classifier.float32.tflite"))
    got = lite(input_word_ids=batch["input_ids"].numpy()[:2],
               input_mask=batch["input_mask"].numpy()[:2],
               input_type_ids=batch["segment_ids"].numpy()[:2])
    np.testing.assert_allclose(got["probabilities"], served["probabilities"].numpy()[:2],
                               atol=1e-4)


def test_export_saved_model_exports_the_output_dirs_token_classifier(run, tmp_path):
    """export_saved_model.py on the run's output_dir alone: a token_classifier/ export whose
    serve_text gives run_ner.py's own export's tags, word for word (short texts: one window
    each, whatever the stride)."""
    import tensorflow as tf

    from albert_tf.source_export import export_source

    root, _ = run
    result = export_source(str(root / "output"), tmp_path / "exports", max_seq_length=SEQ,
                           verify=False)
    assert result["heads"] == ["token_classifier"]
    texts = tf.constant([" ".join(s.tokens) for s in _test_sentences(root)[:40]
                         if sum(len(t) for t in s.tokens) < 40])
    ours = tf.saved_model.load(result["token_classifier"]).signatures["serve_text"](text=texts)
    cli = tf.saved_model.load(str(_export(root))).signatures["serve_text"](text=texts)
    for key in ("words", "tags", "entity_labels", "entity_texts"):
        assert ours[key].numpy().tolist() == cli[key].numpy().tolist(), key
    np.testing.assert_allclose(ours["probabilities"].numpy(), cli["probabilities"].numpy(),
                               atol=1e-6)
    assert any(tag not in (b"", b"O") for tag in ours["tags"].numpy().ravel())


def test_bad_row_is_one_error_line(tmp_path, spm_model):
    (tmp_path / "train.conll").write_text("Peter\tB-PER\nBlackburn\n", encoding="utf-8")
    (tmp_path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    done = run_entry_point("run_ner.py", [
        f"--train_file={tmp_path / 'train.conll'}",
        f"--albert_config_file={tmp_path / 'albert_config.json'}",
        f"--spm_model_file={spm_model}", f"--output_dir={tmp_path / 'out'}", "--do_train",
        f"--max_seq_length={SEQ}"], cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {tmp_path / 'train.conll'}:2: no tag column (earlier lines have "
                      "one): 'Blackburn'"], done.stderr


@pytest.mark.parametrize("argv, words", [
    (["--do_train"], "--do_train needs --train_file"),
    (["--do_predict", "--test_file=x", "--doc_stride=31"], r"between 1 and --max_seq_length - 2 \(30\), got 31"),
    (["--export_dir=e", "--tflite=float64"], "unknown kind 'float64'"),
    (["--do_eval", "--dev_file=x", "--tflite=float32"], "--tflite needs --export_dir"),
])
def test_flags_that_cannot_work_are_named(tmp_path, spm_model, argv, words):
    from albert_tf.errors import UsageError

    (tmp_path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    with pytest.raises(UsageError, match=words):
        run_cli([f"--albert_config_file={tmp_path / 'albert_config.json'}",
                 f"--spm_model_file={spm_model}", f"--output_dir={tmp_path / 'out'}",
                 f"--max_seq_length={SEQ}", *argv])


def test_run_classifier_conventions():
    """The flags run_ner.py shares with run_classifier.py, with its defaults."""
    shared = set(("albert_config_file vocab_file spm_model_file output_dir cached_dir "
                  "init_checkpoint do_lower_case max_seq_length do_train do_eval do_predict "
                  "train_batch_size eval_batch_size predict_batch_size learning_rate train_step "
                  "warmup_step save_checkpoints_steps keep_checkpoint_max optimizer export_dir "
                  "tflite onnx openvino shuffle_buffer seed train_file dev_file test_file "
                  "label_list num_hidden_layers distill_from distill_temperature distill_alpha "
                  "lora_rank lora_word_rank").split())
    assert shared | {"doc_stride"} == set(NER_FLAGS.split())
    defaults = cli.config_defaults(NerRunConfig)
    assert defaults["train_step"] == 1000 and defaults["do_lower_case"] is True
    assert (defaults["max_seq_length"], defaults["doc_stride"]) == (128, None)
    assert NerRunConfig().stride == 63 and NerRunConfig(max_seq_length=3).stride == 1
    # One declaration (run_config.ClassifierTaskConfig); run_ner.py changes two defaults.
    classifier = cli.config_defaults(ClassifierRunConfig)
    assert {name: (classifier[name], defaults[name]) for name in shared | {"doc_stride"}
            if classifier[name] != defaults[name]} == {"max_seq_length": (512, 128),
                                                       "shuffle_buffer": (100, 1000)}
