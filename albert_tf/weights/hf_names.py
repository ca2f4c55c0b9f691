"""Hugging Face ALBERT weight names ↔ the original's TF1 names, as data.

Each row: (HF name, TF1 name, transpose). torch `Linear` stores its weight [out, in]; a TF1
dense kernel is [in, out], so those rows are transposed. TF1 `output_weights` of the heads are
already [out, in] and are not. Encoder rows sit under `albert.` in every model with a head and
at the root in a bare `AlbertModel`; block rows under `BLOCK_PREFIX` (HF) / the TF1 block prefix.
Head rows are the head classes' own (`albert_tf.models`, `FORMATS`); `HEADS` gathers them.
"""

from albert_tf.models.formats import MappingView, SequenceView, head_formats
from albert_tf.weights.tf1_names import BLOCK_PREFIX as TF1_BLOCK_PREFIX

ENCODER_PREFIX = "albert."


def _linear(hf: str, tf1: str) -> tuple:
    """A dense layer's rows: torch's `weight` [out, in] is TF1's `kernel` [in, out] transposed."""
    return ((f"{hf}.weight", f"{tf1}/kernel", True), (f"{hf}.bias", f"{tf1}/bias", False))


def _layer_norm(hf: str, tf1: str) -> tuple:
    """A LayerNorm's rows: torch's `weight` and `bias` are TF1's `gamma` and `beta`."""
    return ((f"{hf}.weight", f"{tf1}/gamma", False), (f"{hf}.bias", f"{tf1}/beta", False))


EMBEDDINGS = (
    ("embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", False),
    ("embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", False),
    ("embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", False),
    *_layer_norm("embeddings.LayerNorm", "bert/embeddings/LayerNorm"),
)

# HF always has the E→H projection; the original (and our model) only when E != H.
PROJECTION = _linear("encoder.embedding_hidden_mapping_in",
                     "bert/encoder/embedding_hidden_mapping_in")

BLOCK_PREFIX = "encoder.albert_layer_groups.{g}.albert_layers.{k}."

BLOCK = (
    *_linear("attention.query", "attention_1/self/query"),
    *_linear("attention.key", "attention_1/self/key"),
    *_linear("attention.value", "attention_1/self/value"),
    *_linear("attention.dense", "attention_1/output/dense"),
    *_layer_norm("attention.LayerNorm", "LayerNorm"),
    *_linear("ffn", "ffn_1/intermediate/dense"),
    *_linear("ffn_output", "ffn_1/intermediate/output/dense"),
    *_layer_norm("full_layer_layer_norm", "LayerNorm_1"),
)

# AlbertForQuestionAnswering and AlbertForMaskedLM have no pooler.
POOLER = _linear("pooler", "bert/pooler/dense")

# Heads sit at the model root; their rows are each head class's own (`FORMATS[head].hf`,
# `albert_tf/models/`), gathered here by head id each time the table is read. The MLM decoder
# is tied to the word embeddings (HF saves only its bias, as `predictions.bias`).
HEADS = MappingView(lambda: {head: f.hf for head, f in head_formats().items() if f.hf})

# Saved by some versions, never weights of their own: the tied decoder (checked against the
# word table / output bias when present) and torch buffers.
TIED = {"predictions.decoder.weight": "bert/embeddings/word_embeddings",
        "predictions.decoder.bias": "cls/predictions/output_bias"}
BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")

# The classes without a task head: the encoder alone, the MLM head without the SOP head (both
# format facts of HF's), and AlbertForPreTraining (the pretrainer's heads' `hf_class`).
PRETRAINING_CLASSES = ("AlbertModel", "AlbertForMaskedLM", "AlbertForPreTraining")


def _architectures() -> dict:
    result = {"AlbertModel": (), "AlbertForMaskedLM": ("mlm",)}
    for head, formats in head_formats().items():
        if formats.hf:
            result[formats.hf_class] = result.get(formats.hf_class, ()) + (head,)
    return result


# The HF class that holds each set of heads (what the writer names in `architectures`):
# `AlbertForPreTraining` holds mlm and sop; each task head its own class.
ARCHITECTURES = MappingView(_architectures)


def _shared_names() -> dict:
    """{head: the first head with the same HF names} for heads HF stores under one name."""
    first, result = {}, {}
    for head, rows in HEADS.items():
        key = tuple(row[0] for row in rows)
        result[head] = first.setdefault(key, head)
    return {head: owner for head, owner in result.items()
            if list(result.values()).count(owner) > 1}


# The heads HF saves under one set of names (`classifier.*`): which one a file holds follows
# its `architectures`, and classes whose heads share those names map to their own head.
CLASSIFIER_HEADS = SequenceView(lambda: tuple(_shared_names()))
CLASSIFIER_HEAD_OF = MappingView(lambda: {
    head_formats()[head].hf_class: head for head, owner in _shared_names().items()
    if head != owner})
# Which classes carry no pooler.
WITHOUT_POOLER = SequenceView(lambda: ("AlbertForMaskedLM",) + tuple(
    f.hf_class for f in head_formats().values() if f.hf and not f.hf_pooler))

# HF `hidden_act` → ours. HF `gelu` is the exact erf form, which neither the original nor our
# layers compute; `gelu_new`, `gelu_pytorch_tanh` and `gelu_fast` are the tanh form (ours `gelu`).
ACTIVATIONS_IN = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu",
                  "relu": "relu", "tanh": "tanh", "linear": "linear"}
# Ours → HF (`gelu` and `gelu_new` are both the tanh form here).
ACTIVATIONS_OUT = {"gelu": "gelu_new", "gelu_new": "gelu_new", "relu": "relu", "tanh": "tanh",
                   "linear": "linear", "": "linear"}

# HF config keys that are ours under the same name, and HF's defaults for them (a config.json
# saved by transformers leaves out keys equal to the class defaults only in old versions).
CONFIG_KEYS = {
    "vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
    "num_hidden_groups": 1, "num_attention_heads": 64, "intermediate_size": 16384,
    "inner_group_num": 1, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
    "max_position_embeddings": 512, "type_vocab_size": 2, "initializer_range": 0.02,
}
LAYER_NORM_EPS = 1e-12


def block_rows(num_groups, inner_group_num):
    """(HF name without the encoder prefix, TF1 name, transpose) of every block weight."""
    rows = []
    for g in range(num_groups):
        for k in range(inner_group_num):
            hf_prefix = BLOCK_PREFIX.format(g=g, k=k)
            tf1_prefix = TF1_BLOCK_PREFIX.format(g=g, k=k)
            rows += [(hf_prefix + h, tf1_prefix + t, tr) for h, t, tr in BLOCK]
    return rows
