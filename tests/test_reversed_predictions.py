"""Predictions follow their own row's probabilities, on a model that predicts both classes.

The MRPC fixture of test_run_classifier.py predicts class 1 for every test row, so a bug that
reverses the predictions (their order, or which class each names) but not the probabilities
passed there. Here a spread model (support/informative.py) with its output bias centred on the
rows predicts each class for some of them, and every place that derives a label from the
probabilities is checked row by row against the argmax of that row's own probabilities:
run_classifier's test_results.tsv / submit_results.tsv / test_predictions.tsv, the export's
serve_text labels, and LiteClassifier / Predictor on the export.
"""

import csv
import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.config import AlbertConfig
from albert_tf.lite import LiteClassifier
from albert_tf.models import AlbertClassifier
from albert_tf.serving.predictor import Predictor
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.config import GlueRunConfig
from albert_tf.tasks.classification.processors import get_processor, read_tsv
from albert_tf.tasks.classification.task import run_glue
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY
from support.informative import spread_weights

SEQ, ROWS = 32, 40


def _features(data_dir, spm_model):
    examples = get_processor("mrpc").get_test_examples(str(data_dir))
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    rows = [F.convert_single_example(e, ["0", "1"], SEQ, tokenizer) for e in examples]
    return {name: tf.constant([getattr(r, name) for r in rows], tf.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}


@pytest.fixture(scope="module")
def predicted(tmp_path_factory, data_dir, spm_model):
    """An MRPC --do_predict and --export_dir run (tflite float32) on the first ROWS test rows,
    from a checkpoint whose model predicts both classes."""
    root = tmp_path_factory.mktemp("both_classes")
    glue = root / "glue" / "MRPC"
    glue.mkdir(parents=True)
    lines = (data_dir / "glue" / "MRPC" / "test.tsv").read_text(encoding="utf-8").splitlines()
    (glue / "test.tsv").write_text("\n".join(lines[:ROWS + 1]) + "\n", encoding="utf-8")
    config = root / "albert_config.json"
    config.write_text(json.dumps(GLUE_TINY))
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), 2)
    features = _features(root / "glue", spm_model)
    model(features)
    spread_weights(model, seed=5)
    logits = model(features, training=False)["logits"].numpy()
    # Centred: the two logits' mean difference over the rows is 0, so both classes occur.
    model.output_bias.assign(model.output_bias.numpy() - logits.mean(0))
    start = save_tf1_checkpoint(model, root / "start" / "model.ckpt")
    run_glue(GlueRunConfig.from_flat(dict(
        task_name="MRPC", data_dir=str(root / "glue"), albert_config_file=str(config),
        spm_model_file=spm_model, output_dir=str(root / "output"), init_checkpoint=start,
        max_seq_length=SEQ, do_train=False, do_eval=False, do_predict=True,
        export_dir=str(root / "export"), tflite="float32", predict_batch_size=16)))
    texts = [line.split("\t")[3:5] for line in lines[1:ROWS + 1]]
    return root, model(features, training=False)["probabilities"].numpy(), texts


def test_prediction_files_follow_each_rows_probabilities(predicted):
    root, expected, _ = predicted
    output = root / "output"
    probabilities = np.loadtxt(output / "test_results.tsv", delimiter="\t")
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)  # the checkpoint's own rows
    argmax = probabilities.argmax(1)
    assert set(argmax.tolist()) == {0, 1}, argmax  # both classes predicted,
    assert argmax.tolist() != argmax[::-1].tolist()  # in an order that reversing changes
    submit = [line.split("\t") for line in
              (output / "submit_results.tsv").read_text().splitlines()[1:]]
    assert [int(label) for _, label in submit] == argmax.tolist()
    rows = list(csv.reader(open(output / "test_predictions.tsv", newline=""), delimiter="\t"))
    assert rows[0] == ["id", "label"]
    assert [label for _, label in rows[1:]] == [str(i) for i in argmax]
    guids = [fields[0] for _, fields in read_tsv(str(root / "glue" / "MRPC" / "test.tsv"))[1:]]
    assert [guid for guid, _ in rows[1:]] == [guid for guid, _ in submit] == guids


def test_the_exports_labels_follow_each_rows_probabilities(predicted):
    root, expected, texts = predicted
    text_a, text_b = [a for a, _ in texts], [b for _, b in texts]
    argmax = expected.argmax(1)
    assert set(argmax.tolist()) == {0, 1} and argmax.tolist() != argmax[::-1].tolist()
    names = [str(i) for i in argmax]
    (version,) = [p for p in (root / "export").iterdir() if p.name.isdigit()]
    served = tf.saved_model.load(str(version)).signatures["serve_text"](
        text_a=tf.constant(text_a), text_b=tf.constant(text_b))
    np.testing.assert_allclose(served["probabilities"].numpy(), expected, atol=1e-5)
    assert served["predictions"].numpy().tolist() == argmax.tolist()
    assert [label.decode() for label in served["labels"].numpy()] == names
    predictor = Predictor.open(root / "export", name="classifier")
    assert predictor.classify(text_a, text_b) == predictor.predict_labels(text_a, text_b) == names
    lite = LiteClassifier.from_folder(root / "export" / "tflite" / version.name, kind="float32")
    own = lite.predict(text_a, text_b)
    np.testing.assert_allclose(own, expected, atol=1e-5)
    assert lite.predict_labels(text_a, text_b) == lite.classify(text_a, text_b) == \
        [str(i) for i in own.argmax(1)] == names
