"""`Predictor` on a classifier SavedModel's edges: a multi-label export with its own
--label_separator, and a regressor (a score per text, no labels)."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier
from albert_tf.serving.predictor import Predictor
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.examples import InputExample
from albert_tf.tasks.classification.export import export_classifier
from support.configs import SPM_VOCAB_SIZE, tiny_config
from support.informative import assert_spread, spread_weights

SEQ = 24
TEXTS = ["The cat sat on the mat.", "Prices rose 1,000.5 percent, Amrozi said.", "short",
         "A man is playing a guitar on stage.", "Café owners were not amused", "ok then",
         "Stocks fell sharply in early trading.", "nothing"]
# Names holding a comma: splitting on "," instead of the export's separator breaks them.
NAMES = ["sports", "arts,culture", "tech", "science,health"]


def _inputs(spm_model, texts):
    """The features run_classifier.py builds for single texts: the Keras model's input."""
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    rows = [F.convert_single_example(
        InputExample(str(i), tokenization.preprocess_text(t, lower=True), None, "0"),
        ["0"], SEQ, tokenizer) for i, t in enumerate(texts)]
    return {name: tf.constant([getattr(r, name) for r in rows], tf.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}


def _exported(model, spm_model, folder, **kwargs):
    model(_inputs(spm_model, TEXTS[:1]))
    spread_weights(model, seed=5)
    # Each output centred on the texts (its mean logit 0): some texts get several labels at
    # the threshold, some none.
    logits = model(_inputs(spm_model, TEXTS), training=False)["logits"].numpy()
    model.output_bias.assign(model.output_bias.numpy() - logits.mean(0))
    export_classifier(model, str(folder / "classifier"), SEQ, spm_model, True, False, None,
                      **kwargs)
    return Predictor.open(folder / "classifier")


def test_a_multi_label_savedmodel_splits_on_its_own_separator(spm_model, tmp_path):
    # Predictor split the export's `labels` on "," whatever --label_separator the run had, and a
    # text with no label came back as [""].
    model = AlbertClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE), len(NAMES),
                             multi_label=True, threshold=0.503)
    predictor = _exported(model, spm_model, tmp_path, label_names=NAMES, label_separator="|")
    probabilities = model(_inputs(spm_model, TEXTS), training=False)["probabilities"].numpy()
    assert_spread(probabilities, 1e-3)
    expected = [[NAMES[i] for i in np.flatnonzero(row >= 0.503)] for row in probabilities]
    counts = [len(labels) for labels in expected]
    assert 0 in counts and max(counts) >= 2, counts  # an empty set and a set of several
    assert any("arts,culture" in labels or "science,health" in labels for labels in expected)
    np.testing.assert_allclose(predictor.predict(TEXTS), probabilities, atol=1e-5)
    assert predictor.classify(TEXTS) == expected


def test_a_regression_savedmodel_predicts_its_score_and_refuses_labels(spm_model, tmp_path):
    model = AlbertClassifier(tiny_config(vocab_size=SPM_VOCAB_SIZE), 1)
    predictor = _exported(model, spm_model, tmp_path)
    scores = model(_inputs(spm_model, TEXTS), training=False)["predictions"].numpy()
    assert np.ptp(scores) > 1e-2, scores  # a comparison at 1e-5 tells the texts apart
    predicted = predictor.predict(TEXTS)
    assert predicted.shape == (len(TEXTS),)
    np.testing.assert_allclose(predicted, scores, atol=1e-5)
    for call in (predictor.classify, predictor.predict_labels):
        with pytest.raises(InputError, match=r"classifier/1: a regression model \(it predicts a "
                           r"score, not a label\); use predict\(texts\) for the scores$"):
            call(TEXTS)
