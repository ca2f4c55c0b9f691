"""albert_tf.text.sentencepiece_resource: in-graph SentencePiece tokenizers keep working after a
new global seed (tensorflow-text's own resource went with TensorFlow's eager kernels), their
model goes with them, and exports built from them still load and tokenize."""

import gc
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.text import AlbertPreprocessor
from albert_tf.text.sentencepiece_resource import SentencepieceModel

pytest.importorskip("tensorflow_text", reason="the in-graph tokenizer needs tensorflow-text")

TEXTS = tf.constant(["Hello world, 1,000.5 times again.", "the whale"])


@pytest.mark.parametrize("albert_text_rules", [True, False])
def test_a_new_seed_leaves_built_tokenizers_working(spm_model, albert_text_rules):
    first = AlbertPreprocessor(spm_model, 16, albert_text_rules=albert_text_rules)
    want = first(TEXTS)["input_ids"].numpy()
    keras.utils.set_random_seed(5)  # clears TensorFlow's eager kernels
    tf.random.set_seed(6)
    np.testing.assert_array_equal(first(TEXTS)["input_ids"], want)


def test_dropping_one_tokenizer_leaves_the_others_model(spm_model):
    # The op alone (albert_text_rules=False): the unigram search's tokenizers are built alike,
    # and tracing it twice would only cost time.
    first = AlbertPreprocessor(spm_model, 16, albert_text_rules=False)
    want = first(TEXTS)["input_ids"].numpy()
    second = AlbertPreprocessor(spm_model, 16, albert_text_rules=False)
    np.testing.assert_array_equal(second(TEXTS)["input_ids"], want)
    del second
    gc.collect()  # the second's model resource goes; the first keeps its own
    np.testing.assert_array_equal(first(TEXTS)["input_ids"], want)


def test_the_model_resource_is_destroyed_with_its_tokenizer(spm_model, tmp_path):
    import tensorflow_text as text

    layer = AlbertPreprocessor(spm_model, 16, albert_text_rules=False)
    model = layer.sentencepiece._model_resource
    assert isinstance(model, SentencepieceModel)
    handle = model.resource_handle
    tf.saved_model.save(layer.sentencepiece, str(tmp_path / "saved"))  # traces a copy
    # tensorflow-text's op wrappers live in the tokenizer class's module.
    ops = sys.modules[text.SentencepieceTokenizer.__module__].gen_sentencepiece_tokenizer
    assert int(ops.sentencepiece_vocab_size_op(handle)) == 1500
    del layer, model
    gc.collect()
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        ops.sentencepiece_vocab_size_op(handle)


def test_an_export_after_a_new_seed_loads_and_tokenizes(spm_model, tmp_path):
    # The op alone: every raw-text export test saves the unigram search's tokenizers.
    layer = AlbertPreprocessor(spm_model, 16, albert_text_rules=False)
    want = layer(TEXTS)["input_ids"].numpy()
    keras.utils.set_random_seed(7)

    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def ids(self, strings):
            return self.layer(strings)["input_ids"]

    tf.saved_model.save(Module(), str(tmp_path / "export"))
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    np.testing.assert_array_equal(loaded.ids(TEXTS), want)
    keras.utils.set_random_seed(8)  # a loaded export's resources are the op's own, as before
    np.testing.assert_array_equal(loaded.ids(TEXTS), want)
