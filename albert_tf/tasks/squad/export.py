"""SQuAD SavedModels for TF Serving.

One SavedModel with two signatures:
* `serving_default`: `input_ids`, `input_mask`, `segment_ids` (and `p_mask` for v2), int32
  [batch, max_seq_length] → `start_logits`/`end_logits` (v1) or the beam outputs
  `start_top_log_probs`, `start_top_index`, `end_top_log_probs`, `end_top_index` and
  `cls_logits` (v2), exactly the model's outputs.
* `answer_text`: raw UTF-8 strings `question`, `context` [batch, the same for both] → `answer`
  (string), `score`
  (start + end logit / log-prob of the chosen span) and, for v2, `null_score` (the cls logit;
  the caller compares it with its tuned threshold). Tokenizing, packing, span search and
  detokenizing run in the graph.

The tokenizer is the run's: SentencePiece with `spm_model_file`, else WordPiece over
`vocab_file` (the Chinese models), in the graph with the ids of the Python features.

What the in-graph path does not do (done by `run_squad.py`'s Python post-processing instead):
only the first window of a long context is read (no sliding windows). With SentencePiece the
answer is the detokenized text, i.e. the *preprocessed* form (lower-cased when `do_lower_case`,
accents stripped) rather than the exact raw substring, because the raw ↔ piece character
alignment (a banded LCS) is not expressible as graph ops at reasonable cost. With WordPiece the
tokenizer carries each piece's raw byte span (`text.wordpiece_offsets`: its normalisation
works character by character), so the answer is the exact substring of the context, as the
Python path gives it. No TFLite file is written.
"""

from __future__ import annotations

import tensorflow as tf
from absl import logging

from albert_tf import models
from albert_tf.serving.saved_model import serving_root, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text import optional as text_optional
from albert_tf.text.wordpiece import text_preprocessor

NEG = -1e30


class SquadServing:
    """The serving functions; `export` saves them with the variables they capture (the Keras
    model is reached through Python closures only, as TF Serving's loader needs)."""

    def __init__(self, model, spm_model_file, max_seq_length: int, max_query_length: int,
                 max_answer_length: int, do_lower_case: bool = True, vocab_file=None):
        self.model = model
        self.version_2 = isinstance(model, models.AlbertSquadV2)
        if not (spm_model_file or vocab_file):
            raise ValueError("SquadServing needs spm_model_file or vocab_file")
        # SentencePiece when spm_model_file is given, else WordPiece (as FullTokenizer picks);
        # None without tensorflow-text: the export then serves ids only (no answer_text).
        self.preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file,
                                              vocab_file) if text_optional.available() else None
        self.wordpiece = not spm_model_file
        self.max_seq_length = max_seq_length
        self.max_query_length = max_query_length
        self.max_answer_length = max_answer_length
        spec = tf.TensorSpec([None, max_seq_length], tf.int32)
        names = ["input_ids", "input_mask", "segment_ids"] + (["p_mask"] if self.version_2 else [])
        self.serve_ids = tf.function(self._serve_ids,
                                     input_signature=[{n: tf.TensorSpec(spec.shape, spec.dtype, n)
                                                       for n in names}])
        self.answer_text = tf.function(self._answer_text, input_signature=[
            tf.TensorSpec([None], tf.string, "question"),
            tf.TensorSpec([None], tf.string, "context")])

    def module(self):
        """(root module, signatures) for `write_saved_model`."""
        # The tokenizer's resource (SentencePiece model, WordPiece table) is captured by
        # answer_text: the root must hold it.
        if self.preprocessor is None:
            logging.warning("%s", text_optional.skipped("the SQuAD export's answer_text signature"))
            root = serving_root({"serve_ids": self.serve_ids})
            return root, {"serving_default": root.serve_ids}
        root = serving_root({"serve_ids": self.serve_ids, "answer_text": self.answer_text},
                            self.preprocessor.resources)
        return root, {"serving_default": root.serve_ids, "answer_text": root.answer_text}

    def _serve_ids(self, inputs):
        return self.model(inputs, training=False)

    def _tokenize(self, text):
        """[B, (ids)] as the SQuAD features tokenize `text`, and for WordPiece the raw
        (start, end) byte span of every piece (None for SentencePiece)."""
        if not self.wordpiece:
            return self.preprocessor.tokenize(text), None
        ids, starts, ends = self.preprocessor.tokenize_with_offsets(text)
        return ids, (starts, ends)

    def pack(self, question, context, with_spans: bool = False):
        """[CLS] question [SEP] context [SEP] (first window only) with SQuAD's segment ids and
        p_mask (0 for [CLS] and context pieces); with `with_spans`, also the raw byte spans of
        the context pieces kept (WordPiece only)."""
        pre = self.preprocessor
        query = self._tokenize(question)[0][:, :self.max_query_length]
        room = self.max_seq_length - query.row_lengths() - 3
        doc, spans = self._tokenize(context)
        kept = tf.ragged.range(doc.row_lengths()) < tf.expand_dims(room, 1)
        doc = tf.ragged.boolean_mask(doc, kept)
        batch = tf.shape(question)[0]
        one = lambda value: tf.RaggedTensor.from_tensor(tf.fill([batch, 1], value))  # noqa
        ids = tf.concat([one(pre.cls_id), query, one(pre.sep_id), doc, one(pre.sep_id)], axis=1)
        ones = lambda ragged, v: tf.ones_like(ragged) * v  # noqa: E731
        segments = tf.concat([one(0), ones(query, 0), one(0), ones(doc, 1), one(1)], axis=1)
        p_mask = tf.concat([one(0), ones(query, 1), one(1), ones(doc, 0), one(1)], axis=1)
        shape = [None, self.max_seq_length]
        features = {"input_ids": ids.to_tensor(0, shape=shape),
                    "input_mask": tf.ones_like(ids).to_tensor(0, shape=shape),
                    "segment_ids": segments.to_tensor(0, shape=shape),
                    "p_mask": p_mask.to_tensor(1, shape=shape)}
        if with_spans:
            spans = tuple(tf.ragged.boolean_mask(t, kept) for t in spans)
            return features, ids, query.row_lengths() + 2, spans
        return features, ids

    @staticmethod
    def _context(features):
        """Context-piece positions ([CLS] is not an answer here, as in post-processing)."""
        return (features["segment_ids"] == 1) & (features["p_mask"] == 0)

    def _best_span_v1(self, features, outputs):
        allowed = tf.cast(self._context(features), tf.float32)
        start = outputs["start_logits"] + (1.0 - allowed) * NEG
        end = outputs["end_logits"] + (1.0 - allowed) * NEG
        scores = start[:, :, None] + end[:, None, :]                       # [B, start, end]
        band = tf.linalg.band_part(tf.ones_like(scores[0]), 0, self.max_answer_length - 1)
        scores = scores + (1.0 - band)[None] * NEG
        flat = tf.reshape(scores, [tf.shape(scores)[0], -1])
        best = tf.argmax(flat, axis=-1, output_type=tf.int32)
        size = self.max_seq_length
        return best // size, best % size, tf.reduce_max(flat, axis=-1)

    def _best_span_v2(self, features, outputs):
        k_end = self.model.end_n_top
        starts = tf.repeat(outputs["start_top_index"], k_end, axis=1)
        ends = outputs["end_top_index"]
        scores = tf.repeat(outputs["start_top_log_probs"], k_end, axis=1) + outputs["end_top_log_probs"]
        context = self._context(features)
        in_context = lambda t: tf.gather(context, t, batch_dims=1)  # noqa: E731
        valid = ((ends >= starts) & (ends < starts + self.max_answer_length) &
                 in_context(starts) & in_context(ends))
        scores = tf.where(valid, scores, NEG)
        best = tf.argmax(scores, axis=-1, output_type=tf.int32)
        pick = lambda t: tf.gather(t, best, batch_dims=1)  # noqa: E731
        return pick(starts), pick(ends), pick(scores)

    def _answer_text(self, question, context):
        checked = checked_text(question=question, context=context)
        context = checked["context"]
        if self.wordpiece:
            features, _, doc_offset, spans = self.pack(checked["question"], context, True)
        else:
            features, _ = self.pack(checked["question"], context)
        inputs = dict(features) if self.version_2 else {k: v for k, v in features.items()
                                                        if k != "p_mask"}
        outputs = self.model(inputs, training=False)
        find = self._best_span_v2 if self.version_2 else self._best_span_v1
        start, end, score = find(features, outputs)
        found = score > NEG / 2
        if self.wordpiece:
            doc_offset = tf.cast(doc_offset, start.dtype)
            text = self._raw_span(context, spans, start - doc_offset, end - doc_offset, found)
        else:
            positions = tf.ragged.range(start, end + 1)
            span_ids = tf.gather(features["input_ids"], positions, batch_dims=1)
            text = tf.strings.strip(self.preprocessor.sentencepiece.detokenize(span_ids))
        result = {"answer": tf.where(found, text, ""), "score": score}
        if self.version_2:
            result["null_score"] = outputs["cls_logits"]
        return result

    @staticmethod
    def _raw_span(context, spans, first, last, found):
        """The context bytes from the start of piece `first` to the end of piece `last` (context
        piece indices per row). Pieces hold no whitespace, so there is nothing to strip as the
        Python path does. Rows without an answer read a padding entry (their text is dropped)."""
        def at(ragged, index):
            # One padding column: a row may have no context piece at all.
            dense = tf.pad(ragged.to_tensor(0), [[0, 0], [0, 1]])
            index = tf.where(found, tf.cast(index, tf.int64), 0)
            return tf.gather(dense, index[:, None], batch_dims=1)[:, 0]

        begin, stop = at(spans[0], first), at(spans[1], last)
        return tf.strings.substr(context, begin, tf.maximum(stop - begin, 0))


def export(model, run, config=None, export_dir=None, version: int | None = None,
           extras: dict | None = None) -> str:
    """Writes `<export_dir>/<version>` (one past the highest numeric folder by default, the
    layout TF Serving polls) through `write_saved_model`, with `extras` (its TFLite files)
    published together; returns its path."""
    export_dir = export_dir or run.export_dir
    module = SquadServing(model, run.spm_model_file, run.max_seq_length, run.max_query_length,
                          run.max_answer_length, run.do_lower_case, run.vocab_file)
    root, signatures = module.module()
    return write_saved_model(root, export_dir, signatures, version, extras=extras)
