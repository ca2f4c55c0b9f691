"""albert_tf.weights.arrays: our own training checkpoints convert through the model; the
projection rules for E == H."""

import numpy as np
import pytest

from support.interop import odd_config, random_source


def test_our_training_checkpoint_converts_with_its_pretraining_heads(tmp_path):
    import tensorflow as tf

    from albert_tf.weights import open_source
    from albert_tf.weights.arrays import source_arrays

    config = odd_config()
    source, model = random_source(config)
    tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt-1"))
    (tmp_path / "albert_config.json").write_text(config.to_json_string())
    ours = open_source(tmp_path / "ckpt-1")
    assert ours.format == "albert_tf" and ours.config == config
    arrays = source_arrays(ours)
    assert sorted(arrays) == sorted(source.arrays)
    for name, value in source.arrays.items():
        np.testing.assert_allclose(arrays[name], value, err_msg=name)


def test_a_trained_projection_with_equal_sizes_is_refused_by_key():
    from albert_tf.weights import SourceError
    from albert_tf.weights.arrays import drop_identity_projection, identity_projection

    config = odd_config(embedding_size=20)
    arrays = identity_projection(config)
    drop_identity_projection(arrays, config, "src")
    assert arrays == {}
    arrays = identity_projection(config)
    arrays["bert/encoder/embedding_hidden_mapping_in/kernel"][0, 1] = 0.5
    with pytest.raises(SourceError, match="config key embedding_size"):
        drop_identity_projection(arrays, config, "src")


def test_shape_mismatch_names_variable_shapes_and_key():
    from albert_tf.weights import SourceError
    from albert_tf.weights.arrays import check_shapes

    config = odd_config()
    arrays = {"bert/encoder/transformer/group_1/inner_group_0/ffn_1/intermediate/dense/kernel":
              np.zeros((20, 30), np.float32)}
    with pytest.raises(SourceError, match=r"intermediate/dense/kernel has shape \[20, 30\] in the "
                                          r"source but \[20, 31\].*config key intermediate_size"):
        check_shapes(arrays, config, "src")
