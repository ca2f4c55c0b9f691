"""`FillMask`: the top-k words at each `[MASK]` of raw texts, from a pretraining model's
masked-LM head (Hugging Face's fill-mask pipeline's records):

    fill = FillMask.from_pretrained("pretraining_output_dir", spm_model_file="30k-clean.model")
    fill.predict(["The capital of France is [MASK]."], top_k=5)
    # [[[{'score': 0.41, 'token': 1523, 'token_str': 'paris', 'sequence': 'the capital ...'},
    #    ...]]]        one list per text, one list per mask in it, top_k records per mask

See `texts` for how `[MASK]` is found in raw text.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_tf.models import AlbertPretrainer
from albert_tf.tasks.fill_mask.scoring import top_candidates
from albert_tf.tasks.fill_mask.texts import (FillMaskError, MaskedTextTokenizer, candidates,
                                             check_top_k, checked_texts)
from albert_tf.tokenization import FullTokenizer
from albert_tf.weights.loading import load
from albert_tf.weights.run_inputs import resolve_inputs


class FillMask:
    """A pretraining model (encoder + masked-LM head) and its tokenizer, kept in memory."""

    def __init__(self, model: AlbertPretrainer, tokenizer: MaskedTextTokenizer, inputs=None):
        self.model = model
        self.tokenizer = tokenizer
        self.inputs = inputs
        self._scores = tf.function(
            lambda ids, mask, positions, k: top_candidates(self.model, ids, mask, positions, k),
            autograph=False, reduce_retracing=True)

    @classmethod
    def from_pretrained(cls, path, spm_model_file=None, vocab_file=None,
                        albert_config_file=None, do_lower_case=None,
                        max_seq_length: int | None = None) -> "FillMask":
        """`path`: any weight source holding the masked-LM head (a pretraining output_dir, a
        released model folder, a TF1 checkpoint, an HF `AlbertForMaskedLM`/`AlbertForPreTraining`
        folder); the config and tokenizer files it holds unless given. `max_seq_length`: the
        longest text in pieces (default: the model's max_position_embeddings, at most 512)."""
        path = os.fspath(path)
        inputs = resolve_inputs(init_checkpoint=path, albert_config_file=albert_config_file,
                                spm_model_file=spm_model_file, vocab_file=vocab_file,
                                do_lower_case=do_lower_case)
        config = inputs.albert_config
        if config is None:
            raise FillMaskError(f"{path} holds no model config (albert_config.json, "
                                "config.json); pass albert_config_file=")
        if not (inputs.spm_model_file or inputs.vocab_file):
            raise FillMaskError(f"{path} holds no tokenizer file; pass spm_model_file= (or "
                                "vocab_file= for a WordPiece model)")
        if "mlm" not in inputs.heads:
            raise FillMaskError(f"{inputs.source.path} holds no masked-LM head (heads: "
                                f"{', '.join(inputs.heads) or 'none'}): fill-mask needs a "
                                "pretraining checkpoint")
        length = int(max_seq_length or min(512, config.max_position_embeddings))
        if not 3 <= length <= config.max_position_embeddings:
            raise FillMaskError(f"max_seq_length={length} must be between 3 and the model's "
                                f"max_position_embeddings ({config.max_position_embeddings})")
        model = AlbertPretrainer(config)
        load(model, inputs.source)
        tokenizer = FullTokenizer(inputs.vocab_file, inputs.do_lower_case, inputs.spm_model_file)
        return cls(model, MaskedTextTokenizer(tokenizer, inputs.do_lower_case, length), inputs)

    def encode(self, texts) -> list[list[int]]:
        """The model ids of each masked text ([CLS] ... [SEP])."""
        return [self.tokenizer.ids(text, f"texts[{i}]")
                for i, text in enumerate(checked_texts(texts))]

    def single_word_masks(self, sentences, count: int) -> list[tuple[str, list[int], int]]:
        """Held-out rows to score top-1 on: up to `count` (masked text, its ids, the masked
        word's id), one per sentence (a list of words) that has one. The word masked is the
        first from the third on whose `[MASK]` stands for exactly one piece of the whole
        sentence's ids, so the masked text's ids are the whole one's with the mask at that place."""
        rows = []
        for words in sentences:
            if len(rows) == count:
                break
            whole = self.tokenizer.ids(" ".join(words), "text")
            for at in range(2, len(words) - 1):
                text = " ".join(words[:at] + ["[MASK]"] + words[at + 1:])
                ids = self.encode([text])[0]
                differ = [i for i, (a, b) in enumerate(zip(ids, whole)) if a != b]
                if len(ids) == len(whole) and len(differ) == 1:
                    rows.append((text, ids, whole[differ[0]]))
                    break
        return rows

    def top_ids(self, texts, top_k: int = 5, batch_size: int = 32):
        """(ids per text [n, M_i, k], probabilities [n, M_i, k], model ids per text) in
        numpy, M_i: the masks of text i."""
        top_k = check_top_k(top_k)
        rows = self.encode(texts)
        top_k = min(top_k, self.model.config.vocab_size)
        found, scores = [], []
        for start in range(0, len(rows), int(batch_size)):
            batch = rows[start:start + int(batch_size)]
            width = max(len(r) for r in batch)
            ids = np.zeros((len(batch), width), np.int32)
            mask = np.zeros((len(batch), width), np.int32)
            where = [[i for i, v in enumerate(r) if v == self.tokenizer.mask_id] for r in batch]
            positions = np.zeros((len(batch), max(len(w) for w in where)), np.int32)
            for i, (row, at) in enumerate(zip(batch, where)):
                ids[i, :len(row)], mask[i, :len(row)] = row, 1
                positions[i, :len(at)] = at
            top, probabilities = self._scores(ids, mask, positions, top_k)
            for i, at in enumerate(where):
                found.append(top.numpy()[i, :len(at)])
                scores.append(probabilities.numpy()[i, :len(at)])
        return found, scores, rows

    def predict(self, texts, top_k: int = 5, batch_size: int = 32) -> list:
        """For each text, for each `[MASK]` in it (left to right), its `top_k` candidates:
        dicts with `score`, `token`, `token_str`, `sequence` (see the module docstring). A str
        gives that text's list alone."""
        single = isinstance(texts, str)
        found, scores, rows = self.top_ids(texts, top_k, batch_size)
        results = []
        for top, probabilities, ids in zip(found, scores, rows):
            at = [i for i, v in enumerate(ids) if v == self.tokenizer.mask_id]
            results.append([candidates(self.tokenizer, ids, position, t, p)
                            for position, t, p in zip(at, top, probabilities)])
        return results[0] if single else results
