"""albert_tf.weights.writers.tf1: an original-style folder (checkpoint with the original's
names, albert_config.json, 30k-clean.model) that reads back to the same weights."""

import numpy as np
import pytest

from support.interop import interop


def test_hf_classifier_to_tf1_folder_and_back(tmp_path):
    import tensorflow as tf

    from albert_tf.config import AlbertConfig
    from albert_tf.weights import open_source
    from albert_tf.weights.arrays import source_arrays
    from albert_tf.weights.writers.tf1 import write_tf1

    source = open_source(interop("hf", "classifier"))
    report = write_tf1(source, tmp_path / "tf1")
    assert report.heads == ("classifier",) and report.left == ()
    folder = tmp_path / "tf1"
    assert AlbertConfig.from_json_file(folder / "albert_config.json") == source.config
    assert (folder / "30k-clean.model").is_file()
    names = tf.train.load_checkpoint(str(folder / "model.ckpt-0")).get_variable_to_shape_map()
    assert "output_weights" in names and "global_step" in names
    assert "bert/encoder/transformer/group_0/inner_group_0/ffn_1/intermediate/dense/kernel" in names
    back = open_source(folder)
    assert back.format == "tf1" and back.config == source.config
    arrays = source_arrays(back)
    assert sorted(arrays) == sorted(source.arrays)
    for name, value in source.arrays.items():
        np.testing.assert_array_equal(arrays[name], value, err_msg=name)


def test_a_config_that_disagrees_with_the_source_is_refused_by_key(tmp_path):
    from albert_tf.weights import SourceError, open_source
    from albert_tf.weights.writers.tf1 import write_tf1

    source = open_source(interop("hf", "classifier"))
    other = source.config.replace(intermediate_size=38)
    with pytest.raises(SourceError, match="config key intermediate_size"):
        write_tf1(source, tmp_path / "tf1", config=other)
    assert list(tmp_path.iterdir()) == []
