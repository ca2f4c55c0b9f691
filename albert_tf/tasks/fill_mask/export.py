"""The `fill_mask` signature of an encoder export from a pretraining model
(`export_saved_model.py`): raw strings with `[MASK]`s and `top_k` in, per mask the top-k ids,
pieces and probabilities out — what `FillMask.predict` gives, computed in the graph.

The text is split on the literal `[MASK]` and each piece tokenized on its own by the export's
in-graph tokenizer (`albert_tf.text`), as `texts.MaskedTextTokenizer` does in Python. A text
longer than the export's max_seq_length is cut there ([SEP] last), where `FillMask` refuses
it. Outputs, M: the most masks of a text in the batch:
  `ids` int32 [B, M, k], `pieces` string [B, M, k], `scores` float32 [B, M, k] (softmax over the
  vocabulary), `mask_count` int32 [B]; slots past a text's own masks hold -1, "" and 0.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.serving.saved_model import attach_signature
from albert_tf.tasks.fill_mask.scoring import top_candidates
from albert_tf.tasks.fill_mask.texts import MASK
from albert_tf.text import text_preprocessor
from albert_tf.tokenization import FullTokenizer

INPUTS = [tf.TensorSpec([None], tf.string, name="text"), tf.TensorSpec([], tf.int32, name="top_k")]
# What the export's fresh-process check sends (several masks, one glued to a word, one text
# without a mask).
SAMPLE_TEXTS = ["The quick brown [MASK] jumps over the lazy dog.", "[MASK] shares its[MASK].",
                "no mask here"]


class FillMaskServing:
    """`serve(text, top_k)` of an `AlbertPretrainer` with an in-graph `preprocessor`
    (`AlbertPreprocessor` or `WordpiecePreprocessor`) whose vocabulary holds `[MASK]`."""

    def __init__(self, model, preprocessor, pieces, max_seq_length: int):
        self.model = model
        self.preprocessor = preprocessor
        self.max_seq_length = int(max_seq_length)
        self.mask_id = list(pieces).index(MASK)
        self.pieces = np.array(pieces, dtype=object)

    def ids(self, text):
        """[B] masked strings → ragged [B, (S)] ids: [CLS] pieces [MASK] pieces ... [SEP]."""
        chunks = tf.strings.split(text, MASK)  # [B, (C)]
        tokens = self.preprocessor.tokenize_strings(chunks.flat_values)  # [N, (T)]
        masks = tf.fill([tf.shape(chunks.flat_values)[0], 1], self.mask_id)
        with_masks = tf.concat([tokens, masks], axis=1)  # a mask after every chunk ...
        rows = chunks.with_flat_values(with_masks).merge_dims(1, 2)
        rows = rows[:, :-1][:, :self.max_seq_length - 2]  # ... but the last; cut to length
        count = tf.shape(text)[0]
        cls = tf.fill([count, 1], self.preprocessor.cls_id)
        sep = tf.fill([count, 1], self.preprocessor.sep_id)
        return tf.concat([cls, tf.cast(rows, tf.int32), sep], axis=1)

    def serve(self, text, top_k):
        rows = self.ids(text)
        ids = rows.to_tensor(0)
        mask = tf.ones_like(rows).to_tensor(0)
        is_mask = tf.equal(ids, self.mask_id)
        places = tf.ragged.boolean_mask(
            tf.broadcast_to(tf.range(tf.shape(ids)[1]), tf.shape(ids)), is_mask)
        positions = places.to_tensor(0)
        top, scores = top_candidates(self.model, ids, mask, positions, top_k)
        real = tf.sequence_mask(places.row_lengths(), tf.shape(positions)[1])[:, :, None]
        real = tf.broadcast_to(real, tf.shape(top))
        pieces = tf.gather(tf.constant(self.pieces, tf.string), top)
        return {"ids": tf.where(real, top, -1), "scores": tf.where(real, scores, 0.0),
                "pieces": tf.where(real, pieces, ""),
                "mask_count": tf.cast(places.row_lengths(), tf.int32)}

    def attach(self, root, signatures: dict, check):
        """Adds `fill_mask` (and the tokenizer resources it captures) to an encoder export's
        root and signatures; returns `check` (the encoder's) with this signature's added."""
        serve = tf.function(self.serve, input_signature=INPUTS, autograph=False)
        return attach_signature(root, signatures, "fill_mask", serve,
                                self.preprocessor.resources, check, self.check)

    def check(self, top_k: int = 3) -> tuple[dict, dict]:
        """({fill_mask: inputs}, {fill_mask: the Keras model's numeric outputs}) for the
        export's fresh-process comparison."""
        outputs = self.serve(tf.constant(SAMPLE_TEXTS), tf.constant(top_k, tf.int32))
        calls = {"fill_mask": {"text": np.array(SAMPLE_TEXTS), "top_k": np.int32(top_k)}}
        return calls, {"fill_mask": {name: outputs[name].numpy()
                                     for name in ("ids", "scores", "mask_count")}}


def fill_mask_serving(model, config, spm_model_file, vocab_file, max_seq_length: int,
                      do_lower_case: bool, albert_text_rules: bool = True) -> FillMaskServing:
    """The `FillMaskServing` of a loaded `AlbertPretrainer` and its tokenizer file; the piece
    table is the tokenizer's, padded with "" to the model's vocab_size."""
    preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file, vocab_file,
                                     albert_text_rules)
    tokenizer = FullTokenizer(vocab_file, do_lower_case, spm_model_file)
    pieces = [tokenizer.inv_vocab.get(i, "") for i in range(config.vocab_size)]
    return FillMaskServing(model, preprocessor, pieces, max_seq_length)
