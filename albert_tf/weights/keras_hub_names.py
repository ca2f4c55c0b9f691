"""keras-hub ALBERT preset layout ↔ the original's TF1 names, as data.

A keras-hub `model.weights.h5` holds one group per layer, `layers/<class-in-snake-case>[_n]`
(numbered in the order the functional model lists its layers), each with `vars/0`, `vars/1`…
and the layer's own name in the `vars` group's `name` attribute. Readers go by that name;
the writer reproduces the keys. Rows: (layer name, var index, TF1 name, reshape) where
reshape is "in" for attention q/k/v kernels [H, heads, d] / biases [heads, d] and "out" for
the attention output kernel [heads, d, H]; TF1 keeps them 2-D / 1-D.
"""

from albert_tf.models.formats import MappingView, SequenceView, head_formats

# Top-level layers of AlbertBackbone in h5 key order (key, layer name, TF1 rows).
BACKBONE = (
    ("add", "embeddings_add", ()),
    ("dense", "embedding_projection", (
        (0, "bert/encoder/embedding_hidden_mapping_in/kernel"),
        (1, "bert/encoder/embedding_hidden_mapping_in/bias"))),
    ("dense_1", "pooled_dense", ((0, "bert/pooler/dense/kernel"), (1, "bert/pooler/dense/bias"))),
    ("dropout", "embeddings_dropout", ()),
    ("embedding", "segment_embedding", ((0, "bert/embeddings/token_type_embeddings"),)),
    ("input_layer", "token_ids", ()),
    ("input_layer_1", "segment_ids", ()),
    ("input_layer_2", "padding_mask", ()),
    ("layer_normalization", "embeddings_layer_norm", (
        (0, "bert/embeddings/LayerNorm/gamma"), (1, "bert/embeddings/LayerNorm/beta"))),
    ("position_embedding", "position_embedding", ((0, "bert/embeddings/position_embeddings"),)),
    ("reversible_embedding", "token_embedding", ((0, "bert/embeddings/word_embeddings"),)),
)

BLOCK_NAME = "group_{g}_inner_layer_{k}"
BLOCK_KEY = "transformer_encoder"

# Sub-layers of one TransformerEncoder: (h5 path below the block, layer name, rows).
# Rows: (var index, TF1 name relative to the block prefix, reshape).
BLOCK = (
    ("_feedforward_dropout", "feedforward_dropout", ()),
    ("_feedforward_intermediate_dense", "feedforward_intermediate_dense", (
        (0, "ffn_1/intermediate/dense/kernel", None), (1, "ffn_1/intermediate/dense/bias", None))),
    ("_feedforward_layer_norm", "feedforward_layer_norm", (
        (0, "LayerNorm_1/gamma", None), (1, "LayerNorm_1/beta", None))),
    ("_feedforward_output_dense", "feedforward_output_dense", (
        (0, "ffn_1/intermediate/output/dense/kernel", None),
        (1, "ffn_1/intermediate/output/dense/bias", None))),
    ("_self_attention_dropout", "self_attention_dropout", ()),
    ("_self_attention_layer", "self_attention_layer", ()),
    ("_self_attention_layer/_dropout_layer", "dropout", ()),
    ("_self_attention_layer/_softmax", "softmax", ()),
    ("_self_attention_layer/key_dense", "key", (
        (0, "attention_1/self/key/kernel", "in"), (1, "attention_1/self/key/bias", "in"))),
    ("_self_attention_layer/output_dense", "attention_output", (
        (0, "attention_1/output/dense/kernel", "out"), (1, "attention_1/output/dense/bias", None))),
    ("_self_attention_layer/query_dense", "query", (
        (0, "attention_1/self/query/kernel", "in"), (1, "attention_1/self/query/bias", "in"))),
    ("_self_attention_layer/value_dense", "value", (
        (0, "attention_1/self/value/kernel", "in"), (1, "attention_1/self/value/bias", "in"))),
    ("_self_attention_layer_norm", "self_attention_layer_norm", (
        (0, "LayerNorm/gamma", None), (1, "LayerNorm/beta", None))),
)

# Sub-layers keras names itself (`dropout`, `dropout_1`, … one per block, in a fresh process).
AUTO_NAMED = ("dropout", "softmax")

# The keras-hub tasks of our heads: each head class's own (`FORMATS[head].keras_hub`,
# `albert_tf/models/`), gathered by head id each time the table is read. keras-hub has two
# ALBERT tasks with a head of ours: AlbertTextClassifier (the classifier) and AlbertMaskedLM
# (the MLM head); the writer and reader know their files' layout.
TASKS = MappingView(lambda: {head: f.keras_hub for head, f in head_formats().items()
                             if f.keras_hub is not None})

# AlbertTextClassifier's task.weights.h5: pooled output → dropout → `logits` dense.
CLASSIFIER = TASKS["classifier"].layers

# AlbertMaskedLM's task.weights.h5: the `mlm_head` (tied to the token embedding) holds the
# output bias itself and two sub-layers. Its LayerNorm epsilon is keras-hub's 1e-5 (ours 1e-12).
MLM_HEAD_NAME = TASKS["mlm"].holder
MLM_HEAD = TASKS["mlm"].holder_vars
MLM_HEAD_LAYERS = TASKS["mlm"].layers
MLM_LAYER_NORM_EPSILON = 1e-5

# keras-hub config keys → ours. Dropout is one rate for both of ours; the activation is fixed
# (the tanh gelu) and the initializer's stddev is 0.02.
CONFIG_KEYS = {
    "vocabulary_size": "vocab_size", "num_layers": "num_hidden_layers", "num_heads":
    "num_attention_heads", "num_groups": "num_hidden_groups", "num_inner_repetitions":
    "inner_group_num", "embedding_dim": "embedding_size", "hidden_dim": "hidden_size",
    "intermediate_dim": "intermediate_size", "max_sequence_length": "max_position_embeddings",
    "num_segments": "type_vocab_size",
}
BACKBONE_CLASS = "AlbertBackbone"
TASK_CLASSES = SequenceView(lambda: (task.task_class for task in TASKS.values()))
KERAS_HUB_VERSION = "0.32.0"  # the preset format we write (what the fixtures were saved with)


def block_keys(num_groups, inner_group_num):
    """(h5 key, g, k) of every TransformerEncoder, in the order the functional model first calls
    them (group by group), which is the order keras numbers them in."""
    result = []
    for g in range(num_groups):
        for k in range(inner_group_num):
            n = g * inner_group_num + k
            result.append((BLOCK_KEY + (f"_{n}" if n else ""), g, k))
    return result
