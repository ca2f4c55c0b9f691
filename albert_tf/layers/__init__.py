"""Keras layers of ALBERT: embeddings, attention and FFN sub-layers, shared encoder, heads."""

from albert_tf.layers.activations import gelu_tanh, get_activation
from albert_tf.layers.attention import AttentionSublayer, attention_bias
from albert_tf.layers.dense import Dense, matmul_last
from albert_tf.layers.embeddings import AlbertEmbeddings
from albert_tf.layers.encoder import AlbertTransformer
from albert_tf.layers.feedforward import FeedForwardSublayer
from albert_tf.layers.heads import MaskedLMHead, SentenceOrderHead
from albert_tf.layers.normalization import LayerNorm
