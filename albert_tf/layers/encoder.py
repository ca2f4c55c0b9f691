"""The shared encoder: E→H projection, then L layer applications over G groups × K inner blocks."""

import keras
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.layers.attention import AttentionSublayer, attention_bias
from albert_tf.layers.dense import Dense
from albert_tf.layers.feedforward import FeedForwardSublayer
from albert_tf.layers.gather import gather_rows
from albert_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertTransformer(keras.layers.Layer):
    """One attention and one FFN sub-layer object per (group, inner group) that some layer uses.

    Layer l runs inner blocks k = 0..K−1 with the attention of group `group_map[l][0]` and the
    FFN of group `group_map[l][1]`; every inner-block output is collected (L·K outputs).
    """

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        c = config
        self.embedding_projection = None
        if c.embedding_size != c.hidden_size:
            self.embedding_projection = Dense(
                c.hidden_size, kernel_initializer=truncated_normal(c.initializer_range),
                name="embedding_hidden_mapping_in")
        self.layer_groups = tuple(c.group_map())
        attention_groups = sorted({a for a, _ in self.layer_groups})
        ffn_groups = sorted({f for _, f in self.layer_groups})
        # Parallel tuples (not dicts) so Keras and tf.train.Checkpoint track them plainly.
        self.attention_keys = tuple((g, k) for g in attention_groups for k in range(c.inner_group_num))
        self.ffn_keys = tuple((g, k) for g in ffn_groups for k in range(c.inner_group_num))
        self.attention_layers = [
            AttentionSublayer(c.hidden_size, c.num_attention_heads, c.initializer_range,
                              c.hidden_dropout_prob, c.attention_probs_dropout_prob,
                              name=f"group_{g}_inner_group_{k}_attention")
            for g, k in self.attention_keys]
        self.ffn_layers = [
            FeedForwardSublayer(c.hidden_size, c.intermediate_size, c.hidden_act,
                                c.initializer_range, c.hidden_dropout_prob,
                                name=f"group_{g}_inner_group_{k}_ffn")
            for g, k in self.ffn_keys]
        # Keras tracks the lists for `weights`, but TF's object graph (tf.train.Checkpoint,
        # SavedModel) does not see into them: name each sub-layer as an attribute too.
        for layer in self.attention_layers + self.ffn_layers:
            setattr(self, layer.name, layer)
        # Training with --recompute (`use_recompute`): each block's activations are recomputed
        # in the backward step instead of kept. Not part of the config: the same model.
        self.recompute = False

    def build(self, input_shape=None):
        c = self.config
        if self.embedding_projection is not None:
            self.embedding_projection.build((None, None, c.embedding_size))
        for layer in self.attention_layers + self.ffn_layers:
            layer.build((None, None, c.hidden_size))

    def attention_for(self, group, inner):
        return self.attention_layers[self.attention_keys.index((group, inner))]

    def ffn_for(self, group, inner):
        return self.ffn_layers[self.ffn_keys.index((group, inner))]

    def call(self, embedding_output, input_mask, training=False, return_attention=False,
             output_positions=None):
        """With `output_positions` [B,P] the final block computes only those rows, so the last
        output is [B,P,H]: the pretraining heads read ~21 of 128 positions, and skipping the
        rest of the last block's query/output/FFN matmuls saves ~6 % of an ALBERT-base step."""
        x = embedding_output
        if self.embedding_projection is not None:
            x = self.embedding_projection(x)
        bias = attention_bias(input_mask)
        outputs, probs = [], []
        chain = {}  # --recompute: id(variable) -> the value its latest pass was given
        blocks = [(a, f, inner) for a, f in self.layer_groups
                  for inner in range(self.config.inner_group_num)]
        for index, (attention_group, ffn_group, inner) in enumerate(blocks):
            attention = self.attention_for(attention_group, inner)
            rows = None
            if output_positions is not None and index == len(blocks) - 1:
                rows = gather_rows(x, output_positions)
            ffn = self.ffn_for(ffn_group, inner)
            if self.recompute and training and rows is None and not return_attention:
                # Only the block's input is kept; its activations are recomputed backwards.
                x = _recomputed_block(attention, ffn, x, bias, chain)
                outputs.append(x)
                continue
            if return_attention:
                x, p = attention(x, bias, training=training, return_probs=True, query_input=rows)
                probs.append(p)
            else:
                x = attention(x, bias, training=training, query_input=rows)
            x = ffn(x, training=training)
            outputs.append(x)
        return (outputs, probs) if return_attention else outputs

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(AlbertConfig.from_dict(config.pop("config")), **config)


class _StoredValues(keras.layers.Layer):
    """Reads variables as stored (float32 under a mixed-precision policy): a layer built with
    `autocast=False` reads them outside the bf16/fp16 autocast its caller is in."""

    def __init__(self, variables):
        super().__init__(autocast=False, trainable=False)
        self.read = lambda: [tf.identity(v.value) for v in variables]

    def call(self, anchor):
        return self.read()


# A function call Grappler keeps (`_noinline`): the gradient of `_link` passes through it, which
# keeps the arithmetic optimizer from folding the passes' running sums into one AddN.
_hand_back = tf.function(tf.identity, autograph=False, reduce_retracing=True,
                         experimental_attributes={"_noinline": True})


@tf.custom_gradient
def _link(value):
    return tf.identity(value), _hand_back


def _recomputed_block(attention, ffn, x, bias, chain):
    """One block under `keras.remat` (`tf.recompute_grad`), its trainable weights passed in:
    pass k takes w_k = _link(w_{k−1}) of the shared layer's weights (`chain`), so the backward
    step sums grad(w_k) = g_k + grad(w_{k+1}) as soon as pass k's own g_k exists. Reading the
    variables in every pass instead leaves TensorFlow to sum all N passes' gradients in one AddN
    at the end, N weight-sized gradients held at once (24 × 50 MB at ALBERT-large); a plain
    identity chain too, once Grappler's arithmetic optimizer folds its Adds into that AddN. The
    weights reach the sub-layers through a `keras.StatelessScope`, in the forward pass and in
    the recomputation alike."""
    variables = [v for v in attention.weights + ffn.weights if v.trainable]
    fresh = [v for v in variables if id(v) not in chain]
    if fresh:
        chain.update(zip(map(id, fresh), _StoredValues(fresh)(x)))
    weights = [_link(chain[id(v)]) for v in variables]
    chain.update(zip(map(id, variables), weights))

    def block(x, bias, *weights):
        with keras.StatelessScope(list(zip(variables, weights)), initialize_variables=False):
            return ffn(attention(x, bias, training=True), training=True)
    return keras.remat(block)(x, bias, *weights)


def use_recompute(model) -> None:
    """Every `AlbertTransformer` in `model` recomputes its blocks in the backward step (the
    memory of one block's activations instead of all of them, for a second forward pass).
    Dropout inside the blocks would draw other masks when recomputed (its seed moves on), so a
    config with dropout is refused, naming its keys."""
    for layer in model._flatten_layers(include_self=True, recursive=True):
        if isinstance(layer, AlbertTransformer):
            c = layer.config
            if c.hidden_dropout_prob or c.attention_probs_dropout_prob:
                raise UsageError(
                    f"--recompute needs a model without dropout in its layers (its config has "
                    f"hidden_dropout_prob {c.hidden_dropout_prob}, attention_probs_dropout_prob "
                    f"{c.attention_probs_dropout_prob}): a recomputed pass would draw other "
                    "dropout masks; set both to 0 in --albert_config_file (as ALBERT v2 does)")
            layer.recompute = True
