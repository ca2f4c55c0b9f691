"""The tiny ALBERT configurations the tests build models from (dicts of AlbertConfig fields)."""

# A tiny encoder every model test can build in milliseconds: E ≠ H (so the E→H projection
# exists), 2 layers sharing one group, 2 heads. vocab_size 100 covers the ids the model tests
# draw (< 100); dropout is 0 (the config default), so inference and training differ only by the
# heads' own dropout.
TINY = dict(vocab_size=100, embedding_size=8, hidden_size=16, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)

# Layers in 2 groups of 2 inner groups: every kind of TF1 block name (group_1, inner_group_1).
GROUPED = dict(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2)

# Task runs on the fixtures' text: the vocabulary of their SentencePiece model (spm.model).
SPM_VOCAB_SIZE = 1500
# GLUE (sequences up to 32 tokens; a 128-token run must be refused by max_position_embeddings).
# One layer: no task test depends on depth (layer sharing is the model tests' subject, on TINY
# and GROUPED), and tracing a task's graphs costs per layer (2 layers: 6 % more suite CPU here).
GLUE_TINY = dict(vocab_size=SPM_VOCAB_SIZE, embedding_size=16, hidden_size=32,
                 num_hidden_layers=1, num_attention_heads=4, intermediate_size=37,
                 max_position_embeddings=64)
# SQuAD and RACE (windows up to 96 tokens).
READING_TINY = dict(GLUE_TINY, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                    max_position_embeddings=128)


def tiny_config(**overrides):
    """AlbertConfig of TINY with `overrides` (other fields or a layout such as GROUPED)."""
    from albert_tf.config import AlbertConfig

    return AlbertConfig(**{**TINY, **overrides})
