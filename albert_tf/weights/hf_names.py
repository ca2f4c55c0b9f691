"""Hugging Face ALBERT weight names ↔ the original's TF1 names, as data.

Each row: (HF name, TF1 name, transpose). torch `Linear` stores its weight [out, in]; a TF1
dense kernel is [in, out], so those rows are transposed. TF1 `output_weights` of the heads are
already [out, in] and are not. Encoder rows sit under `albert.` in every model with a head and
at the root in a bare `AlbertModel`; block rows under `BLOCK_PREFIX` (HF) / the TF1 block prefix.
"""

from albert_tf.weights.tf1_names import BLOCK_PREFIX as TF1_BLOCK_PREFIX

ENCODER_PREFIX = "albert."

EMBEDDINGS = (
    ("embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", False),
    ("embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", False),
    ("embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", False),
    ("embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", False),
    ("embeddings.LayerNorm.bias", "bert/embeddings/LayerNorm/beta", False),
)

# HF always has the E→H projection; the original (and our model) only when E != H.
PROJECTION = (
    ("encoder.embedding_hidden_mapping_in.weight", "bert/encoder/embedding_hidden_mapping_in/kernel", True),
    ("encoder.embedding_hidden_mapping_in.bias", "bert/encoder/embedding_hidden_mapping_in/bias", False),
)

BLOCK_PREFIX = "encoder.albert_layer_groups.{g}.albert_layers.{k}."

BLOCK = (
    ("attention.query.weight", "attention_1/self/query/kernel", True),
    ("attention.query.bias", "attention_1/self/query/bias", False),
    ("attention.key.weight", "attention_1/self/key/kernel", True),
    ("attention.key.bias", "attention_1/self/key/bias", False),
    ("attention.value.weight", "attention_1/self/value/kernel", True),
    ("attention.value.bias", "attention_1/self/value/bias", False),
    ("attention.dense.weight", "attention_1/output/dense/kernel", True),
    ("attention.dense.bias", "attention_1/output/dense/bias", False),
    ("attention.LayerNorm.weight", "LayerNorm/gamma", False),
    ("attention.LayerNorm.bias", "LayerNorm/beta", False),
    ("ffn.weight", "ffn_1/intermediate/dense/kernel", True),
    ("ffn.bias", "ffn_1/intermediate/dense/bias", False),
    ("ffn_output.weight", "ffn_1/intermediate/output/dense/kernel", True),
    ("ffn_output.bias", "ffn_1/intermediate/output/dense/bias", False),
    ("full_layer_layer_norm.weight", "LayerNorm_1/gamma", False),
    ("full_layer_layer_norm.bias", "LayerNorm_1/beta", False),
)

# AlbertForQuestionAnswering and AlbertForMaskedLM have no pooler.
POOLER = (
    ("pooler.weight", "bert/pooler/dense/kernel", True),
    ("pooler.bias", "bert/pooler/dense/bias", False),
)

# Heads sit at the model root. The MLM decoder is tied to the word embeddings (HF saves only
# its bias, as `predictions.bias`).
HEADS = {
    "mlm": (
        ("predictions.dense.weight", "cls/predictions/transform/dense/kernel", True),
        ("predictions.dense.bias", "cls/predictions/transform/dense/bias", False),
        ("predictions.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma", False),
        ("predictions.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", False),
        ("predictions.bias", "cls/predictions/output_bias", False),
    ),
    "sop": (
        ("sop_classifier.classifier.weight", "cls/seq_relationship/output_weights", False),
        ("sop_classifier.classifier.bias", "cls/seq_relationship/output_bias", False),
    ),
    "classifier": (
        ("classifier.weight", "output_weights", False),
        ("classifier.bias", "output_bias", False),
    ),
    # AlbertForMultipleChoice: one score per choice from the pooled output, as the RACE head.
    "multiple_choice": (
        ("classifier.weight", "output_weights", False),
        ("classifier.bias", "output_bias", False),
    ),
    "squad_v1": (
        ("qa_outputs.weight", "cls/squad/output_weights", False),
        ("qa_outputs.bias", "cls/squad/output_bias", False),
    ),
    # AlbertForTokenClassification: the same `classifier` names, applied to every position.
    "token_classifier": (
        ("classifier.weight", "token_classifier/output_weights", False),
        ("classifier.bias", "token_classifier/output_bias", False),
    ),
}

# Saved by some versions, never weights of their own: the tied decoder (checked against the
# word table / output bias when present) and torch buffers.
TIED = {"predictions.decoder.weight": "bert/embeddings/word_embeddings",
        "predictions.decoder.bias": "cls/predictions/output_bias"}
BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")

# The HF class that holds each set of heads (what the writer names in `architectures`).
ARCHITECTURES = {
    "AlbertModel": (),
    "AlbertForPreTraining": ("mlm", "sop"),
    "AlbertForMaskedLM": ("mlm",),
    "AlbertForSequenceClassification": ("classifier",),
    "AlbertForQuestionAnswering": ("squad_v1",),
    "AlbertForMultipleChoice": ("multiple_choice",),
    "AlbertForTokenClassification": ("token_classifier",),
}
# Classes whose `classifier` is not a sequence classifier on the pooled output.
CLASSIFIER_HEAD_OF = {"AlbertForMultipleChoice": "multiple_choice",
                      "AlbertForTokenClassification": "token_classifier"}
# The heads HF saves as `classifier.*`: which one a file holds follows its `architectures`.
CLASSIFIER_HEADS = ("classifier", "multiple_choice", "token_classifier")
# Which classes carry a pooler.
WITHOUT_POOLER = ("AlbertForMaskedLM", "AlbertForQuestionAnswering",
                  "AlbertForTokenClassification")

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
