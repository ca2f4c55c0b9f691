"""The paper run's stages on a tiny corpus and tiny models (2 training steps): the data (held-out
sets balanced, the SOP one without random-document pairs), resumable training, cached scores,
and Figure 1 for any checkpoint (`python -m albert_tf.paper.layers`)."""

import importlib.util
import json
import os

import pytest
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.errors import InputError, UsageError
from albert_tf.paper import data as paper_data
from albert_tf.paper import health, scoring, speed, training, transitions
from albert_tf.paper.plan import ModelSpec, PaperOptions
from albert_tf.training import Runtime
from support.entry_points import run_entry_point
from support.paths import FIXTURES

SEQ, PREDS = 32, 5


def _options(root, **changes):
    values = dict(input_file=str(root / "corpus.txt"), output_dir=str(root / "out"),
                  spm_model_file=str(FIXTURES / "spm" / "spm.model"), hidden_size=16,
                  num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                  embedding_size=8, embedding_sizes=(8, 16), max_seq_length=SEQ,
                  max_predictions_per_seq=PREDS, train_batch_size=4, steps=2, num_workers=1,
                  max_heldout_examples=16, eval_batch_size=8)
    values.update(changes)
    return PaperOptions.create(quick=True, **values)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Data and two trained models (all-shared and not-shared), shared by the tests below."""
    if not FIXTURES.exists():
        pytest.skip(f"needs {FIXTURES} (the project's ../shared folder)")
    root = tmp_path_factory.mktemp("paper")
    documents = (FIXTURES / "create_pretraining_data" / "input.txt").read_text().split("\n\n")
    (root / "corpus.txt").write_text("\n\n".join(documents[:20]) + "\n")
    options = _options(root)
    data = paper_data.build_data(options, progress=lambda line: None)
    runtime = Runtime()
    models = [ModelSpec("sop", "all", 8), ModelSpec("sop", "none", 8)]
    trained = training.train_models(options, models, data, runtime, printer=lambda *a, **k: None)
    return {"root": root, "options": options, "data": data, "runtime": runtime,
            "models": models, "trained": trained}


def _labels(path):
    spec = schema.pretraining_features(SEQ, PREDS)
    return [int(schema.decode(r, spec)["next_sentence_labels"][0])
            for r in tf.data.TFRecordDataset(path)]


def _mlm_accuracy(model, path):
    """Weighted share of masked slots whose argmax is the label, over the records at `path`."""
    spec = schema.pretraining_features(SEQ, PREDS)
    rows = [schema.decode(r, spec) for r in tf.data.TFRecordDataset(path)]
    batch = {name: tf.stack([row[name] for row in rows])
             for name in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")}
    logits = model(batch, training=False)["masked_lm_logits"]
    right = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32),
                             tf.cast(tf.stack([row["masked_lm_ids"] for row in rows]), tf.int32)),
                    tf.float32)
    weights = tf.cast(tf.stack([row["masked_lm_weights"] for row in rows]), tf.float32)
    return float(tf.reduce_sum(right * weights) / tf.reduce_sum(weights))


def test_heldout_sets_are_balanced_and_sop_is_order_alone(run):
    data = run["data"]
    for kind in ("sop", "nsp"):
        labels = _labels(data[f"heldout_{kind}"])
        assert len(labels) == data[f"heldout_{kind}_instances"] > 0
        assert labels.count(0) == labels.count(1)
    assert data["heldout_sop_selection"]["random_document_pairs_dropped"] > 0
    assert data["heldout_nsp_selection"]["random_document_pairs_dropped"] == 0
    assert data["train_documents"] + data["heldout_documents"] == 20


def test_data_is_built_once_and_other_settings_are_refused(run):
    again = paper_data.build_data(run["options"], progress=lambda line: None)
    assert again == run["data"]
    with pytest.raises(UsageError, match="dupe_factor"):
        paper_data.build_data(_options(run["root"], dupe_factor=7), progress=lambda line: None)


def test_a_second_run_trains_nothing(run, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a finished model was trained again")

    monkeypatch.setattr(training, "run_pretraining", refuse)
    lines = []
    again = training.train_models(run["options"], run["models"], run["data"], run["runtime"],
                                  printer=lambda *a, **k: lines.append(a[0]))
    assert again == run["trained"]
    assert len(lines) == 2 and all("trained already" in line for line in lines)
    for result in again.values():
        assert result["steps_per_second"] > 0 and result["resumed_from_step"] == 0


def test_a_half_trained_model_resumes(run):
    spec = run["models"][0]
    directory = training.model_dir(run["options"], spec)
    marker = os.path.join(directory, training.MARKER)
    with open(marker) as f:
        record = json.load(f)
    with open(marker, "w") as f:  # as a run killed while training leaves it
        json.dump({"settings": record["settings"]}, f)
    tf.compat.v1.train.update_checkpoint_state(directory, os.path.join(directory, "model.ckpt-1"))
    result = training.train_models(run["options"], [spec], run["data"], run["runtime"],
                                   printer=lambda *a, **k: None)[spec.name]
    assert result["resumed_from_step"] == 1
    assert tf.train.latest_checkpoint(directory).endswith("model.ckpt-2")


def test_scores_and_figure_1_curve(run, monkeypatch):
    options, data = run["options"], run["data"]
    found = scoring.score_model(run["runtime"], options, run["models"][0], data, with_curve=True)
    assert found["heldout_examples"] == {"sop": data["heldout_sop_instances"],
                                         "nsp": data["heldout_nsp_instances"]}
    # The masked-LM accuracy recomputed from the trained model's argmax on every held-out
    # record, weighted as the original's metric (padding slots have weight 0), mean of the sets.
    model, _, _ = scoring.load_pretrainer(run["runtime"], training.model_dir(options,
                                                                              run["models"][0]))
    want = [_mlm_accuracy(model, data[f"heldout_{kind}"]) for kind in ("sop", "nsp")]
    assert found["mlm_accuracy"] == pytest.approx(sum(want) / 2, abs=1e-6), want
    # A share of the held-out pairs (k of n, not a mean of batch means or a share of padding).
    for task in ("nsp", "sop"):
        right = found[f"{task}_accuracy"] * found["heldout_examples"][task]
        assert right == pytest.approx(round(right), abs=1e-6), (task, right)
    curve = found["layer_smoothness"]
    assert curve["layers"] == [1, 2] and len(curve["cosine_similarity"]) == 2
    not_shared = scoring.score_model(run["runtime"], options, run["models"][1], data, False)
    assert found["parameters"] < not_shared["parameters"]
    monkeypatch.setattr(scoring, "load_pretrainer", None)  # a second call reads the cache
    assert scoring.score_model(run["runtime"], options, run["models"][0], data, True) == found
    # Its own task (SOP): the training accuracy the trainer logged, step by step, is read back
    # (of the model no other test trains again).
    spec = run["models"][1]
    own = health.own_task(spec, not_shared, run["trained"][spec.name], options)
    curve = health.training_curve(run["trained"][spec.name]["directory"])
    assert [step for step, _ in curve] == [1, 2] and own["training_accuracy_last"] == curve[-1][1]
    assert own["heldout_examples"] == data["heldout_sop_instances"] and own["steps"] == 2


def test_speed_is_timed_in_turns_and_kept(run, monkeypatch):
    timed = speed.measure(run["runtime"], run["options"], run["models"], run["data"], rounds=2,
                          steps=2, printer=lambda *a, **k: None)
    assert set(timed) == {spec.name for spec in run["models"]}
    for result in timed.values():
        assert result["steps_per_second"] > 0 and len(result["rounds"]) == 2
    monkeypatch.setattr(speed, "_train_step", None)  # the same models again: speed.json
    assert speed.measure(run["runtime"], run["options"], run["models"], run["data"], rounds=2,
                         steps=2, printer=lambda *a, **k: None) == timed


def test_records_are_measured_on_their_original_text(run):
    batch = next(transitions.record_batches([run["data"]["heldout_sop"]], SEQ, PREDS, 4, 4))
    assert not (batch["input_ids"] == 4).any()  # no [MASK] left (id 4 in the fixture model)


def test_layers_command_on_a_run_folder_and_text(run, tmp_path):
    model = training.model_dir(run["options"], run["models"][0])
    result = run_entry_point("-m", [
        "albert_tf.paper.layers", f"--init_checkpoint={model}",
        f"--input_file={run['root'] / 'corpus.txt'}", f"--output_dir={tmp_path}",
        f"--spm_model_file={FIXTURES / 'spm' / 'spm.model'}", "--max_examples=6",
        "--max_seq_length=32"])
    assert result.returncode == 0, result.stderr[-2000:]
    written = json.loads((tmp_path / "layer_smoothness.json").read_text())
    assert written["layers"] == [1, 2] and len(written["l2_distance"]) == 2
    assert written["tokens"] == 6 * 32
    # A figure exactly where matplotlib is installed (the [test] extra installs it).
    assert bool(written["figures"]) == (importlib.util.find_spec("matplotlib") is not None)
    if written["figures"]:
        assert (tmp_path / "layer_smoothness.png").read_bytes()[:4] == b"\x89PNG"


def test_too_few_documents_is_one_error_and_leaves_no_files(tmp_path):
    text = tmp_path / "three.txt"
    text.write_text("First one.\n\nSecond one.\n\nThird one.\n", encoding="utf-8")
    out = tmp_path / "data"
    out.mkdir()
    with pytest.raises(InputError, match=r"three\.txt holds 3 document\(s\).*at least 10"):
        paper_data.split_documents([str(text)], str(out / "train.txt"), str(out / "heldout.txt"),
                                   0.1)
    assert list(out.iterdir()) == []


def _corpus(root, documents):
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.txt").write_text("\n\n".join(documents) + "\n")


def test_too_few_heldout_pairs_is_an_error_before_any_training(tmp_path):
    # It trained every model (15 minutes at full size), then failed: KeyError 'masked_lm_accuracy'.
    documents = (FIXTURES / "create_pretraining_data" / "input.txt").read_text().split("\n\n")
    # Every 10th document is held out: here each of those is one sentence, so no pair survives.
    _corpus(tmp_path, [d if i % 10 != 9 else "Only one short sentence here."
                       for i, d in enumerate(documents[:20])])
    with pytest.raises(InputError, match=r"data: the held-out SOP set has 0 pair\(s\) \(of 2 made "
                       r"from 2 held-out document\(s\)\); scoring needs at least 2"):
        paper_data.build_data(_options(tmp_path), progress=lambda line: None)
    assert not (tmp_path / "out" / "data" / "data.json").exists()


def test_a_truncated_data_json_is_one_error_naming_it(tmp_path):
    _corpus(tmp_path, ["One sentence.", "Another one."])
    marker = tmp_path / "out" / "data" / "data.json"
    marker.parent.mkdir(parents=True)
    marker.write_text('{"settings": {"input_files": [["/x", 3')
    with pytest.raises(InputError, match=r"data\.json:1: not valid JSON \(.*\); a damaged record"):
        paper_data.build_data(_options(tmp_path), progress=lambda line: None)
