"""The TF1 checkpoint name map, as data.

Each row: (TF1 variable name, attribute path of the Keras weight, shape as config keys).
Block rows are relative to one attention or FFN sub-layer and sit under
`bert/encoder/transformer/group_{g}/inner_group_{k}/`; head rows are relative to the model that
holds the head. Shapes in config keys let a mismatch name the key at fault. A shape entry is an
int, an `AlbertConfig` key, a head argument of the model (`num_labels`), or `"<n>*<key>"` for a
multiple of one. Every weight is stored with the TF1 layout (2-D attention kernels,
[out, in] `output_weights`), so a row is a pure rename: nothing is reshaped or transposed.
"""

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

# Relative to an AlbertPretrainer: its masked-LM head, then its sentence-order head.
MLM_HEAD = (
    ("cls/predictions/transform/dense/kernel", "masked_lm.transform.kernel", ("hidden_size", "embedding_size")),
    ("cls/predictions/transform/dense/bias", "masked_lm.transform.bias", ("embedding_size",)),
    ("cls/predictions/transform/LayerNorm/beta", "masked_lm.layer_norm.beta", ("embedding_size",)),
    ("cls/predictions/transform/LayerNorm/gamma", "masked_lm.layer_norm.gamma", ("embedding_size",)),
    ("cls/predictions/output_bias", "masked_lm.output_bias", ("vocab_size",)),
)

SOP_HEAD = (
    ("cls/seq_relationship/output_weights", "sentence_order.output_weights", (2, "hidden_size")),
    ("cls/seq_relationship/output_bias", "sentence_order.output_bias", (2,)),
)

PRETRAINING_HEADS = MLM_HEAD + SOP_HEAD

# Task heads, relative to the task model, in the original's fine-tuning checkpoints.
# The GLUE classifier's head sits at the checkpoint root.
CLASSIFIER_HEAD = (
    ("output_weights", "output_weights", ("num_labels", "hidden_size")),
    ("output_bias", "output_bias", ("num_labels",)),
)

SQUAD_V1_HEAD = (
    ("cls/squad/output_weights", "output_weights", (2, "hidden_size")),
    ("cls/squad/output_bias", "output_bias", (2,)),
)

# The answerability head's last dense layer has no bias in the original.
SQUAD_V2_HEAD = (
    ("start_logits/dense/kernel", "start_dense.kernel", ("hidden_size", 1)),
    ("start_logits/dense/bias", "start_dense.bias", (1,)),
    ("end_logits/dense_0/kernel", "end_dense_0.kernel", ("2*hidden_size", "hidden_size")),
    ("end_logits/dense_0/bias", "end_dense_0.bias", ("hidden_size",)),
    ("end_logits/LayerNorm/beta", "end_layer_norm.beta", ("hidden_size",)),
    ("end_logits/LayerNorm/gamma", "end_layer_norm.gamma", ("hidden_size",)),
    ("end_logits/dense_1/kernel", "end_dense_1.kernel", ("hidden_size", 1)),
    ("end_logits/dense_1/bias", "end_dense_1.bias", (1,)),
    ("answer_class/dense_0/kernel", "answer_dense_0.kernel", ("2*hidden_size", "hidden_size")),
    ("answer_class/dense_0/bias", "answer_dense_0.bias", ("hidden_size",)),
    ("answer_class/dense_1/kernel", "answer_dense_1.kernel", ("hidden_size", 1)),
)

# The RACE head: one score per (context, choice) pair, at the checkpoint root.
MULTIPLE_CHOICE_HEAD = (
    ("output_weights", "output_weights", (1, "hidden_size")),
    ("output_bias", "output_bias", (1,)),
)

# The token classifier (run_ner.py; HF `AlbertForTokenClassification`'s `classifier`): one
# [out, in] projection per position, in a scope of its own so a GLUE head never loads into it.
TOKEN_CLASSIFIER_HEAD = (
    ("token_classifier/output_weights", "token_output_weights", ("num_labels", "hidden_size")),
    ("token_classifier/output_bias", "token_output_bias", ("num_labels",)),
)

# The rows of each head, by the head ids of `albert_tf.models.HEAD_CLASSES` (their `HEADS`), in
# that order. Heads with the same TF1 names (classifier, multiple_choice) cannot be told apart in
# a checkpoint: the first is the one reported.
HEAD_ROWS = {
    "mlm": MLM_HEAD,
    "sop": SOP_HEAD,
    "classifier": CLASSIFIER_HEAD,
    "squad_v1": SQUAD_V1_HEAD,
    "squad_v2": SQUAD_V2_HEAD,
    "multiple_choice": MULTIPLE_CHOICE_HEAD,
    "token_classifier": TOKEN_CLASSIFIER_HEAD,
}

# Checkpoint entries that are never model weights: the step counter and optimizer slots.
IGNORED_PATTERNS = ("global_step", "/adam_m", "/adam_v", "lamb_m", "lamb_v", "_power")
