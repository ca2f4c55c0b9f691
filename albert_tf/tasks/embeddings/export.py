"""The `embed` signature of an encoder export (`export_saved_model.py`): raw strings in,
`embeddings` [B, H] out — `TextEncoder.encode` computed in the graph, with the pooling and
length the source folder's `embedding_config.json` records (else mean pooling and the export's
max_seq_length)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.models import AlbertPretrainer
from albert_tf.serving.saved_model import attach_signature
from albert_tf.tasks.embeddings import embedding
from albert_tf.tasks.embeddings.encoder import TextEncoder, read_embedding_config
from albert_tf.text import text_preprocessor
from albert_tf.tokenization import FullTokenizer

SAMPLE_TEXTS = ["A man is playing a guitar.", "ALBERT shares its layers.", "x"]


class EmbedServing:
    """`serve(text)` of an encoder with an in-graph preprocessor, and the Python
    `TextEncoder` of the same model it must equal."""

    def __init__(self, model, spm_model_file, vocab_file, max_seq_length: int,
                 do_lower_case: bool, albert_text_rules: bool = True, pooling: str = "mean"):
        self.encoder = model.encoder if isinstance(model, AlbertPretrainer) else model
        self.pooling = pooling
        self.preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file,
                                              vocab_file, albert_text_rules)
        self.reference = TextEncoder(self.encoder, FullTokenizer(vocab_file, do_lower_case,
                                                                 spm_model_file),
                                     pooling, max_seq_length)

    def serve(self, text):
        packed = self.preprocessor(text)
        return {"embeddings": embedding.embed(self.encoder, packed["input_ids"],
                                              packed["input_mask"], self.pooling)}

    def attach(self, root, signatures: dict, check):
        """Adds `embed` (and the tokenizer resources it captures) to an encoder export; returns
        `check` with `embed`'s comparison against `TextEncoder.encode` added."""
        serve = tf.function(self.serve, autograph=False,
                            input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        return attach_signature(root, signatures, "embed", serve, self.preprocessor.resources,
                                check, self.check)

    def check(self) -> tuple[dict, dict]:
        """({embed: sample texts}, {embed: `TextEncoder.encode` of them})."""
        return ({"embed": {"text": np.array(SAMPLE_TEXTS)}},
                {"embed": {"embeddings": self.reference.encode(SAMPLE_TEXTS)}})


def embed_serving(model, source_path, spm_model_file, vocab_file, max_seq_length: int,
                  do_lower_case: bool, albert_text_rules: bool = True) -> EmbedServing:
    """The `EmbedServing` of a loaded model; pooling and length as its folder records."""
    recorded = read_embedding_config(source_path)
    length = min(int(recorded.get("max_seq_length") or max_seq_length), int(max_seq_length))
    return EmbedServing(model, spm_model_file, vocab_file, length, do_lower_case,
                        albert_text_rules, recorded.get("pooling", "mean"))
