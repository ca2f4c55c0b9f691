"""weights.heads: which heads a checkpoint holds, read from the head classes' TF1 rows, for the
original's names (with and without a TF-Hub `module/` scope) and for our object-graph names."""

import pytest
import tensorflow as tf

from albert_tf.models import (AlbertClassifier, AlbertModel, AlbertMultipleChoice,
                              AlbertPretrainer, AlbertSquadV1, AlbertSquadV2,
                              AlbertTokenClassifier)
from albert_tf.weights.heads import head_loaded, heads_of, model_heads, our_heads, tf1_heads
from albert_tf.weights.our_checkpoints import variable_shapes
from albert_tf.weights.tf1_checkpoint import tf1_weights

# build(config), heads in TF1 names, heads in our names (attributes, not classes: see our_heads)
MODELS = {
    "encoder": (AlbertModel, ((), None), ((), None)),
    "pretrainer": (AlbertPretrainer, (("mlm", "sop"), None), (("mlm", "sop"), None)),
    "classifier": (lambda c: AlbertClassifier(c, 3), (("classifier",), 3), (("classifier",), 3)),
    "squad_v1": (AlbertSquadV1, (("squad_v1",), None), (("classifier",), 2)),
    "squad_v2": (AlbertSquadV2, (("squad_v2",), None), (("squad_v2",), None)),
    "multiple_choice": (AlbertMultipleChoice, (("classifier",), 1), (("classifier",), 1)),
    "token_classifier": (lambda c: AlbertTokenClassifier(c, 4), (("token_classifier",), 4),
                         (("token_classifier",), 4)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_heads_held_by_names(name, tiny_config, tmp_path):
    build, in_tf1, in_ours = MODELS[name]
    model = build(tiny_config)
    arrays = tf1_weights(model)
    shapes = {n: list(v.shape) for n, v in arrays.items()}
    assert tf1_heads(shapes) == in_tf1
    assert tf1_heads({"module/" + n: s for n, s in shapes.items()}) == in_tf1
    assert heads_of(arrays) == in_tf1[0]
    prefix = tf.train.Checkpoint(model=model).write(str(tmp_path / "ours"))
    assert our_heads(variable_shapes(prefix)) == in_ours


def test_model_heads_and_what_a_load_assigned(tiny_config):
    assert model_heads(AlbertModel(tiny_config)) == ()
    assert model_heads(AlbertPretrainer(tiny_config)) == ("mlm", "sop")
    loaded = ["bert/pooler/dense/kernel", "output_weights"]
    assert head_loaded("classifier", loaded) and head_loaded("multiple_choice", loaded)
    assert not head_loaded("squad_v1", loaded) and not head_loaded("mlm", loaded)
