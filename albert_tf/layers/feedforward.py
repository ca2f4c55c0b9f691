"""The FFN half of an ALBERT block: `ffn_1/intermediate/dense` (+act), output dense, `LayerNorm_1`."""

import keras

from albert_tf.layers.activations import get_activation
from albert_tf.layers.dense import Dense
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.normalization import LayerNorm


@keras.saving.register_keras_serializable(package="albert_tf")
class FeedForwardSublayer(keras.layers.Layer):
    def __init__(self, hidden_size, intermediate_size, hidden_act="gelu", initializer_range=0.02,
                 dropout_rate=0.0, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        init = truncated_normal(initializer_range)
        # The activation is applied in call(): training uses the fused gelu.
        self.intermediate = Dense(intermediate_size, kernel_initializer=init,
                                               name="intermediate")
        self.activation = get_activation(hidden_act)
        self.training_activation = get_activation(hidden_act, fused=True)
        self.output_dense = Dense(hidden_size, kernel_initializer=init, name="output_dense")
        self.layer_norm = LayerNorm(name="LayerNorm_1")
        self.dropout = keras.layers.Dropout(dropout_rate) if dropout_rate else None

    def build(self, input_shape):
        self.intermediate.build((None, None, self.hidden_size))
        self.output_dense.build((None, None, self.intermediate_size))
        self.layer_norm.build((None, None, self.hidden_size))

    def call(self, x, training=False):
        hidden = self.intermediate(x)
        activation = self.training_activation if training else self.activation
        if activation is not None:
            hidden = activation(hidden)
        out = self.output_dense(hidden)
        if self.dropout is not None:
            out = self.dropout(out, training=training)
        return self.layer_norm(out + x)

    def get_config(self):
        return {**super().get_config(), "hidden_size": self.hidden_size,
                "intermediate_size": self.intermediate_size, "hidden_act": self.hidden_act,
                "initializer_range": self.initializer_range, "dropout_rate": self.dropout_rate}
