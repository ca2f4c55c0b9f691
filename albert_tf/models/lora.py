"""LoRA adapters (`--lora_rank`): the encoder frozen; rank-R adapters on the shared layer's
attention query and value projections, a rank-1 adapter of the word table, and the task head
trained.

The layer adapters are Keras' own (`Dense.enable_lora`: kernel + A·B·alpha/rank, alpha = rank,
B starting at zero so training starts from the base model). ALBERT's blocks are shared, so the
adapters of one attention sub-layer serve every pass that runs it: one set per group. The word
table's adapter (`AlbertEmbeddings.enable_lora`: row i reads W[i] + A[i]·B, A starting at zero)
lets a task move the words it needs, what full fine-tuning does most on a small pretrained
model (docs/compression.md); at rank 1 it is one number per word and one direction.
A run's checkpoints hold only what it trains (`trained_part`); exports merge the adapters into
the kernels and the word table first (`merged_lora`), so exported files hold plain weights and
no adapter op.
"""

from __future__ import annotations

import contextlib

import tensorflow as tf

from albert_tf.layers.encoder import AlbertTransformer

# The attention projections that get rank-R adapters (docs/compression.md).
TARGETS = ("query", "value")
# The rank of the word table's adapter, whatever R (V×1 + 1×E numbers: at R=8 on ALBERT-base
# about as many as the layer's adapters).
WORD_RANK = 1


def _encoder(model):
    return getattr(model, "encoder", model)


def _transformers(model) -> list:
    return [layer for layer in model._flatten_layers(include_self=True, recursive=True)
            if isinstance(layer, AlbertTransformer)]


def adapted_layers(model) -> list:
    """The Dense layers that carry (or would carry) adapters, in the model's order."""
    return [getattr(attention, name) for transformer in _transformers(model)
            for attention in transformer.attention_layers for name in TARGETS]


def lora_rank(model) -> int:
    """The adapters' rank, 0 when the model has none."""
    layers = adapted_layers(model)
    return int(layers[0].lora_rank) if layers and layers[0].lora_enabled else 0


def _embeddings(model):
    return getattr(_encoder(model), "embeddings", None)


def word_lora_rank(model) -> int:
    """The word table adapter's rank, 0 when it has none."""
    return int(getattr(_embeddings(model), "word_lora_rank", 0))


def enable_lora(model, rank: int, word_rank: int = WORD_RANK) -> None:
    """Freezes every encoder weight (embeddings, the shared blocks, the pooler), adds rank-R
    adapters to the query and value projections and a rank-`word_rank` adapter to the word
    table (0: none, as folders written before it); the head stays trainable."""
    for variable in _encoder(model).weights:
        variable.trainable = False
    for layer in adapted_layers(model):
        layer.enable_lora(int(rank))
    if word_rank:
        _embeddings(model).enable_lora(int(word_rank))


def _word_adapters(model) -> dict:
    """{checkpoint name: variable} of the word table's adapter (none without one)."""
    embeddings = _embeddings(model)
    if not word_lora_rank(model):
        return {}
    return {"embeddings_word_lora_a": embeddings.word_lora_a,
            "embeddings_word_lora_b": embeddings.word_lora_b}


def adapter_variables(model) -> list:
    return [v for layer in adapted_layers(model) if layer.lora_enabled
            for v in (layer.lora_kernel_a, layer.lora_kernel_b)] + list(
                _word_adapters(model).values())


class _Part(tf.Module):
    """A node of `trained_part`'s object graph (the same names as the model's)."""

    @property
    def weights(self):
        return self._trained()  # not an attribute: the object graph holds the children only


def _node(**children) -> _Part:
    node = _Part()
    for name, child in children.items():
        setattr(node, name, child)
    return node


def trained_part(model):
    """What a checkpoint of `model` holds: the model itself, or with adapters only the adapters
    (`model/<block>_query_lora_kernel_a`, ...) and the head under its usual names
    (`model/output_weights`, ...): `tf.train.Checkpoint(model=trained_part(model))` writes and
    reads a LoRA run's checkpoints. `.weights` lists its variables (the non-finite check
    before each save)."""
    if not lora_rank(model):
        return model
    # Flat names, 2 deep: a variable is named by its shortest path, and the optimizer's list of
    # trained variables (optimizer/_trainable_variables/<i>) is 3 deep.
    adapters = {f"{attention.name}_{name}_{ab}": getattr(getattr(attention, name), ab)
                for transformer in _transformers(model)
                for attention in transformer.attention_layers for name in TARGETS
                for ab in ("lora_kernel_a", "lora_kernel_b")}
    children = {name: child for name, child in model._trackable_children("checkpoint").items()
                if name != "encoder"}
    part = _node(**adapters, **_word_adapters(model), **children)
    object.__setattr__(part, "_trained", lambda: list(model.trainable_weights))
    return part


def parameter_counts(model) -> tuple[int, int]:
    """(trained, all): the parameters a run trains, and the model's without its adapters."""
    adapters = {id(v) for v in adapter_variables(model)}
    total = sum(int(v.numpy().size) for v in model.weights if id(v) not in adapters)
    trained = sum(int(v.numpy().size) for v in model.trainable_weights)
    return trained, total


@contextlib.contextmanager
def merged_lora(model):
    """Within it every adapted kernel holds kernel + A·B·alpha/rank, the word table W + A·B,
    and the layers run plain weights (what an export traces and saves); the weights and
    adapters are restored after."""
    layers = [layer for layer in adapted_layers(model) if layer.lora_enabled]
    kept = [layer._kernel.numpy() for layer in layers]
    embeddings, word_rank = _embeddings(model), word_lora_rank(model)
    words = embeddings.word_embeddings.numpy() if word_rank else None
    try:
        for layer in layers:
            merged = layer.kernel  # Keras' merged kernel while the adapters are on
            layer._kernel.assign(tf.cast(merged, layer._kernel.dtype))
            layer.lora_enabled = False
        if word_rank:
            embeddings.word_embeddings.assign(embeddings.merged_word_embeddings())
            embeddings.word_lora_rank = 0
        yield model
    finally:
        for layer, kernel in zip(layers, kept):
            layer._kernel.assign(kernel)
            layer.lora_enabled = True
        if word_rank:
            embeddings.word_embeddings.assign(words)
            embeddings.word_lora_rank = word_rank
