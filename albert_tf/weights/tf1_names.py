"""The TF1 checkpoint name map, as data.

Each row: (TF1 variable name, attribute path of the Keras weight, shape as config keys).
Block rows are relative to one attention or FFN sub-layer and sit under
`bert/encoder/transformer/group_{g}/inner_group_{k}/`; head rows (`HEAD_ROWS`, gathered from the
head classes) are relative to the model that holds the head. Shapes in config keys let a mismatch name the key at fault. A shape entry is an
int, an `AlbertConfig` key, a head argument of the model (`num_labels`), or `"<n>*<key>"` for a
multiple of one. Every weight is stored with the TF1 layout (2-D attention kernels,
[out, in] `output_weights`), so a row is a pure rename: nothing is reshaped or transposed.
"""

from albert_tf.models import (AlbertClassifier, AlbertMultipleChoice, AlbertPretrainer,
                              AlbertSquadV1, AlbertSquadV2, AlbertTokenClassifier)
from albert_tf.models.formats import MappingView, head_formats

EMBEDDINGS = (
    ("bert/embeddings/word_embeddings", "embeddings.word_embeddings", ("vocab_size", "embedding_size")),
    ("bert/embeddings/token_type_embeddings", "embeddings.token_type_embeddings", ("type_vocab_size", "embedding_size")),
    ("bert/embeddings/position_embeddings", "embeddings.position_embeddings", ("max_position_embeddings", "embedding_size")),
    ("bert/embeddings/LayerNorm/beta", "embeddings.layer_norm.beta", ("embedding_size",)),
    ("bert/embeddings/LayerNorm/gamma", "embeddings.layer_norm.gamma", ("embedding_size",)),
)

# Only present when embedding_size != hidden_size.
PROJECTION = (
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "transformer.embedding_projection.kernel", ("embedding_size", "hidden_size")),
    ("bert/encoder/embedding_hidden_mapping_in/bias", "transformer.embedding_projection.bias", ("hidden_size",)),
)

BLOCK_PREFIX = "bert/encoder/transformer/group_{g}/inner_group_{k}/"

ATTENTION = (
    ("attention_1/self/query/kernel", "query.kernel", ("hidden_size", "hidden_size")),
    ("attention_1/self/query/bias", "query.bias", ("hidden_size",)),
    ("attention_1/self/key/kernel", "key.kernel", ("hidden_size", "hidden_size")),
    ("attention_1/self/key/bias", "key.bias", ("hidden_size",)),
    ("attention_1/self/value/kernel", "value.kernel", ("hidden_size", "hidden_size")),
    ("attention_1/self/value/bias", "value.bias", ("hidden_size",)),
    ("attention_1/output/dense/kernel", "output_dense.kernel", ("hidden_size", "hidden_size")),
    ("attention_1/output/dense/bias", "output_dense.bias", ("hidden_size",)),
    ("LayerNorm/beta", "layer_norm.beta", ("hidden_size",)),
    ("LayerNorm/gamma", "layer_norm.gamma", ("hidden_size",)),
)

FFN = (
    ("ffn_1/intermediate/dense/kernel", "intermediate.kernel", ("hidden_size", "intermediate_size")),
    ("ffn_1/intermediate/dense/bias", "intermediate.bias", ("intermediate_size",)),
    ("ffn_1/intermediate/output/dense/kernel", "output_dense.kernel", ("intermediate_size", "hidden_size")),
    ("ffn_1/intermediate/output/dense/bias", "output_dense.bias", ("hidden_size",)),
    ("LayerNorm_1/beta", "layer_norm.beta", ("hidden_size",)),
    ("LayerNorm_1/gamma", "layer_norm.gamma", ("hidden_size",)),
)

POOLER = (
    ("bert/pooler/dense/kernel", "pooler.kernel", ("hidden_size", "hidden_size")),
    ("bert/pooler/dense/bias", "pooler.bias", ("hidden_size",)),
)

# The heads' rows, relative to the model holding the head, are each head class's own
# (`FORMATS[head].tf1`, beside its layers in `albert_tf/models/`); this table gathers them by
# head id, in the order of `albert_tf.models.HEAD_CLASSES`, each time it is read (a head
# registered later is in it). Heads with the same TF1 names (classifier, multiple_choice) cannot
# be told apart in a checkpoint: the first is the one reported.
HEAD_ROWS = MappingView(lambda: {head: formats.tf1 for head, formats in head_formats().items()})

# The built-in heads by their old names (what tests and users import).
MLM_HEAD = AlbertPretrainer.FORMATS["mlm"].tf1
SOP_HEAD = AlbertPretrainer.FORMATS["sop"].tf1
PRETRAINING_HEADS = MLM_HEAD + SOP_HEAD
CLASSIFIER_HEAD = AlbertClassifier.FORMATS["classifier"].tf1
SQUAD_V1_HEAD = AlbertSquadV1.FORMATS["squad_v1"].tf1
SQUAD_V2_HEAD = AlbertSquadV2.FORMATS["squad_v2"].tf1
MULTIPLE_CHOICE_HEAD = AlbertMultipleChoice.FORMATS["multiple_choice"].tf1
TOKEN_CLASSIFIER_HEAD = AlbertTokenClassifier.FORMATS["token_classifier"].tf1

# Checkpoint entries that are never model weights: the step counter and optimizer slots.
IGNORED_PATTERNS = ("global_step", "/adam_m", "/adam_v", "lamb_m", "lamb_v", "_power")
