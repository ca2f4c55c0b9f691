"""albert_tf.pretraining_data.example_encoder: the bytes are protobuf's deterministic
serialization of the original's padded features, and making them loads no TensorFlow."""

import subprocess
import sys

import pytest
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.pretraining_data import example_encoder
from albert_tf.pretraining_data.instances import Instance


def _instance(n=9, len_a=3, positions=(1, 5), ids=(7, 300), label=1, a_id=20, b_id=21):
    tokens = [2] + [a_id] * len_a + [3] + [b_id] * (n - len_a - 3) + [3]
    return Instance(tokens, len_a, [k % 2 for k in range(n)], list(positions), list(ids), label)


def _reference_example(features):
    feature = {name: schema.float_feature(v) if name == "masked_lm_weights" else schema.int_feature(v)
               for name, v in features.items()}
    return tf.train.Example(features=tf.train.Features(feature=feature))


@pytest.mark.parametrize("instance,seq,preds,perm", [
    (_instance(), 16, 5, False),
    (_instance(n=150, len_a=70, positions=(130, 140), ids=(5, 99999), a_id=1000, b_id=70000), 200, 4, False),
    (_instance(positions=(), ids=(), label=0), 9, 3, True),
    (_instance(n=12, len_a=1), 12, 2, False),
])
def test_bytes_equal_deterministic_protobuf(instance, seq, preds, perm):
    encoder = example_encoder.ExampleEncoder(seq, preds, perm)
    features = encoder.features(instance)
    ours = encoder.serialize(instance)
    assert ours == _reference_example(features).SerializeToString(deterministic=True)
    assert len(features["masked_lm_positions"]) == preds * (2 if perm else 1)
    assert all(len(features[k]) == seq for k in ("input_ids", "input_mask", "segment_ids", "token_boundary"))


def test_padding_and_segments():
    features = example_encoder.ExampleEncoder(12, 4).features(_instance())
    assert features["input_mask"] == [1] * 9 + [0] * 3
    assert features["segment_ids"] == [0] * 5 + [1] * 4 + [0] * 3
    assert features["masked_lm_weights"] == [1.0, 1.0, 0.0, 0.0]
    assert features["masked_lm_positions"] == [1, 5, 0, 0]
    assert features["next_sentence_labels"] == [1]


def test_records_parse_with_the_training_spec_and_decode():
    encoder = example_encoder.ExampleEncoder(12, 4)
    parsed = schema.decode(encoder.serialize(_instance()), schema.pretraining_features(12, 4))
    assert parsed["input_ids"].dtype == tf.int32
    assert parsed["input_ids"].numpy().tolist()[:9] == _instance().input_ids
    assert parsed["masked_lm_ids"].numpy().tolist() == [7, 300, 0, 0]


def test_oversized_instance_is_an_error():
    with pytest.raises(ValueError, match="exceeds max_seq_length"):
        example_encoder.ExampleEncoder(5, 4).serialize(_instance())


def test_key_order_is_the_schemas_sorted():
    assert example_encoder.KEY_ORDER == tuple(sorted(schema.PRETRAINING_WRITE_ORDER))


def test_record_making_modules_load_no_tensorflow(spm_model, tmp_path):
    """What the local pool's and Beam's workers import to make records, and the tokenizers they
    load from local files; a Beam worker that loaded TensorFlow paid ~10 s and hundreds of MB
    for nothing."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n", "utf-8")
    code = ("import sys\n"
            "import albert_tf.pretraining_data.example_encoder, albert_tf.pretraining_data.parallel\n"
            "import albert_tf.pretraining_data.summary, albert_tf.pretraining_data.options\n"
            "from albert_tf.tokenization import FullTokenizer\n"
            f"assert FullTokenizer(None, True, {spm_model!r}).tokenize('a b')\n"
            f"assert FullTokenizer({str(vocab)!r}, True).tokenize('a b')\n"
            "print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False"]
