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


def _dense(tf1: str, ours: str, inputs: str, outputs: str) -> tuple:
    """A dense layer's rows: its kernel [inputs, outputs] and its bias [outputs]."""
    return ((f"{tf1}/kernel", f"{ours}.kernel", (inputs, outputs)),
            (f"{tf1}/bias", f"{ours}.bias", (outputs,)))


def _layer_norm(tf1: str, ours: str, size: str) -> tuple:
    """A LayerNorm's rows: its beta and gamma, [size] each."""
    return ((f"{tf1}/beta", f"{ours}.beta", (size,)), (f"{tf1}/gamma", f"{ours}.gamma", (size,)))


EMBEDDINGS = (
    ("bert/embeddings/word_embeddings", "embeddings.word_embeddings", ("vocab_size", "embedding_size")),
    ("bert/embeddings/token_type_embeddings", "embeddings.token_type_embeddings", ("type_vocab_size", "embedding_size")),
    ("bert/embeddings/position_embeddings", "embeddings.position_embeddings", ("max_position_embeddings", "embedding_size")),
    *_layer_norm("bert/embeddings/LayerNorm", "embeddings.layer_norm", "embedding_size"),
)

# Only present when embedding_size != hidden_size.
PROJECTION = _dense("bert/encoder/embedding_hidden_mapping_in", "transformer.embedding_projection",
                    "embedding_size", "hidden_size")

BLOCK_PREFIX = "bert/encoder/transformer/group_{g}/inner_group_{k}/"

ATTENTION = (
    *_dense("attention_1/self/query", "query", "hidden_size", "hidden_size"),
    *_dense("attention_1/self/key", "key", "hidden_size", "hidden_size"),
    *_dense("attention_1/self/value", "value", "hidden_size", "hidden_size"),
    *_dense("attention_1/output/dense", "output_dense", "hidden_size", "hidden_size"),
    *_layer_norm("LayerNorm", "layer_norm", "hidden_size"),
)

FFN = (
    *_dense("ffn_1/intermediate/dense", "intermediate", "hidden_size", "intermediate_size"),
    *_dense("ffn_1/intermediate/output/dense", "output_dense", "intermediate_size", "hidden_size"),
    *_layer_norm("LayerNorm_1", "layer_norm", "hidden_size"),
)

POOLER = _dense("bert/pooler/dense", "pooler", "hidden_size", "hidden_size")

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
