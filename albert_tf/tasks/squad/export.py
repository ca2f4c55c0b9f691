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

A context longer than one window is read as run_squad.py's features read it: windows of the
`max_seq_length - len(question) - 3` pieces left, `doc_stride` pieces apart, until one reaches
the end; the answer is the best-scoring span over all of them (each window's best span, as
below, then the highest score; v2's `null_score` is the lowest cls logit of the windows, as the
Python post-processing takes it). Unlike the Python path, a span is scored in every window
holding it rather than only in the one where its start has the most context.

What the in-graph path does not do (done by `run_squad.py`'s Python post-processing instead):
no n-best list, no null-score threshold. With SentencePiece the
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
from albert_tf.errors import UsageError
from albert_tf.serving import reference
from albert_tf.serving.head_export import HeadExport, numpy_outputs
from albert_tf.serving.saved_model import inference_call, serving_root, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text import optional as text_optional
from albert_tf.text import packing
from albert_tf.text.wordpiece import text_preprocessor

NEG = -1e30


def _kept(dense, keep):
    """[B, N] → [B, (kept)]: each row's entries where `keep` is true, in order (one mask and
    row lengths, not the generic ragged constructors' checks)."""
    return tf.RaggedTensor.from_row_lengths(tf.boolean_mask(dense, keep),
                                            tf.reduce_sum(tf.cast(keep, tf.int64), 1),
                                            validate=False)


class SquadServing:
    """The serving functions; `export` saves them with the variables they capture (the Keras
    model is reached through Python closures only, as TF Serving's loader needs)."""

    def __init__(self, model, spm_model_file, max_seq_length: int, max_query_length: int,
                 max_answer_length: int, do_lower_case: bool = True, vocab_file=None,
                 doc_stride: int = 128):
        self.model = model
        self._model_call = inference_call(model)
        if int(doc_stride) < 1:
            raise ValueError(f"doc_stride must be at least 1, got {doc_stride}")
        self.doc_stride = int(doc_stride)
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
        self.serve_ids = tf.function(self._serve_ids, autograph=False,
                                     input_signature=[{n: tf.TensorSpec(spec.shape, spec.dtype, n)
                                                       for n in names}])
        self.answer_text = tf.function(self._answer_text, autograph=False, input_signature=[
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
        return self._model_call(inputs)

    def _tokenize(self, text):
        """[B, (ids)] as the SQuAD features tokenize `text`, and for WordPiece the raw
        (start, end) byte span of every piece (None for SentencePiece)."""
        if not self.wordpiece:
            return self.preprocessor.tokenize_strings(text), None
        ids, starts, ends = self.preprocessor.tokenize_with_offsets(text)
        return ids, (starts, ends)

    def pack(self, question, context):
        """`windows` as ([W, max_seq_length] features, [W, (ids)] ids)."""
        packed = self.windows(question, context)
        return packed["features"], packed["ids"]

    def windows(self, question, context) -> dict:
        """[CLS] question [SEP] window [SEP] for every window of each context (the module
        docstring), with SQuAD's segment ids and p_mask (0 for [CLS] and context pieces):
        `features` and `ids` per window, `row` (its question), `doc_offset` (the position of its
        first context piece), `window_start` (that piece's index in the context) and, for
        WordPiece, `spans`: the raw byte spans of each context's pieces."""
        pre = self.preprocessor
        question_ids = self._tokenize(question)[0]
        doc, spans = self._tokenize(context)
        query_length = tf.minimum(question_ids.row_lengths(), self.max_query_length)
        room = tf.maximum(self.max_seq_length - query_length - 3, 1)
        length = doc.row_lengths()
        step = tf.maximum(tf.minimum(tf.constant(self.doc_stride, tf.int64), room), 1)
        count = tf.where(length > room, (length - room + step - 1) // step + 1,
                         tf.ones_like(length))
        row = tf.repeat(tf.range(tf.size(count, out_type=tf.int64)), count)
        k = tf.range(tf.reduce_sum(count)) - tf.gather(tf.cumsum(count, exclusive=True), row)
        window_start = k * tf.gather(step, row)
        size = tf.maximum(tf.minimum(tf.gather(room, row), tf.gather(length, row) - window_start),
                          0)
        # Pieces by flat ranges rather than ragged slicing, gathering and concatenation, whose
        # generic kernels traced several times the ops (and their checks) of what is needed.
        first = tf.gather(doc.row_starts(), row) + window_start
        doc = tf.gather(doc.flat_values, tf.ragged.range(first, first + size))
        query_start = tf.gather(question_ids.row_starts(), row)
        query = tf.gather(question_ids.flat_values, tf.ragged.range(
            query_start, query_start + tf.gather(query_length, row)))
        # [CLS] query [SEP] window [SEP]: the question always fits (max_seq_length >
        # max_query_length + 3 is checked), and an empty window still gets its [SEP].
        packed = packing.pack(query, doc, self.max_seq_length, pre.cls_id, pre.sep_id,
                              empty_b_is_pair=True)
        position = tf.range(self.max_seq_length, dtype=tf.int64)[tf.newaxis, :]
        doc_offset = query.row_lengths() + 2
        in_doc = (position >= doc_offset[:, None]) & (position < (doc_offset + size)[:, None])
        p_mask = tf.cast(~((position == 0) | in_doc), tf.int32)
        features = {**packed, "p_mask": p_mask}
        ids = _kept(packed["input_ids"], packed["input_mask"] > 0)
        return {"features": features, "ids": ids, "row": row, "spans": spans,
                "doc_offset": doc_offset, "window_start": window_start}

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
        packed = self.windows(checked["question"], context)
        features, row = packed["features"], packed["row"]
        inputs = dict(features) if self.version_2 else {k: v for k, v in features.items()
                                                        if k != "p_mask"}
        outputs = self._model_call(inputs)
        find = self._best_span_v2 if self.version_2 else self._best_span_v1
        start, end, score = find(features, outputs)                       # per window
        # Per question, the window whose best span scores highest (the first on a tie).
        batch = tf.shape(context, out_type=tf.int64)[0]
        # (Segment ops: ragged rows and their padding traced several times the ops.)
        row_best = tf.math.unsorted_segment_max(score, row, batch)
        window = tf.range(tf.size(score, out_type=tf.int64))
        best = tf.math.unsorted_segment_min(
            tf.where(score == tf.gather(row_best, row), window, tf.size(score, out_type=tf.int64)),
            row, batch)
        pick = lambda t: tf.gather(t, best)  # noqa: E731
        start, end, score = pick(start), pick(end), pick(score)
        found = score > NEG / 2
        if self.wordpiece:
            shift = tf.cast(pick(packed["window_start"]) - pick(packed["doc_offset"]), start.dtype)
            text = self._raw_span(context, packed["spans"], start + shift, end + shift, found)
        else:
            offsets = tf.range(self.max_answer_length, dtype=start.dtype)[tf.newaxis, :]
            positions = tf.minimum(start[:, None] + offsets, self.max_seq_length - 1)
            in_span = offsets <= (end - start)[:, None]
            dense = tf.gather(pick(features["input_ids"]), positions, batch_dims=1)
            span_ids = _kept(dense, in_span)
            text = tf.strings.strip(self.preprocessor.sentencepiece.detokenize(span_ids))
        result = {"answer": tf.where(found, text, ""), "score": score}
        if self.version_2:
            result["null_score"] = tf.math.unsorted_segment_min(outputs["cls_logits"], row,
                                                                batch)
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
                          run.max_answer_length, run.do_lower_case, run.vocab_file,
                          run.doc_stride)
    root, signatures = module.module()
    return write_saved_model(root, export_dir, signatures, version, extras=extras)


def export_head(cls, inputs) -> HeadExport:
    """export_saved_model.py's export of a span head (`AlbertSquadV1/V2.SERVING`): run_squad's
    (`serving_default` on ids → the model's outputs, `answer_text` on raw question/context)."""
    if not (inputs.spm_model_file or inputs.vocab_file):
        raise UsageError(f"{inputs.source.path} holds a span (SQuAD) head: its raw-text export "
                         "needs --spm_model_file or --vocab_file (the source holds neither)")
    model = inputs.load(cls(inputs.config))
    length = inputs.max_seq_length
    serving = SquadServing(model, inputs.spm_model_file, length,
                           max_query_length=min(64, length // 2), max_answer_length=30,
                           do_lower_case=inputs.do_lower_case, vocab_file=inputs.vocab_file)
    root, signatures = serving.module()

    def check():  # serving_default takes [batch, max_seq_length] ids, as run_squad's export
        ids, mask, types_, _ = reference.sample_inputs(inputs.config, length=length)
        calls = {"input_ids": ids, "input_mask": mask, "segment_ids": types_}
        if serving.version_2:
            calls["p_mask"] = 1 - types_
        expected = numpy_outputs(serving.serve_ids({k: tf.constant(v) for k, v in calls.items()}))
        return {"serving_default": calls}, {"serving_default": expected}

    # SQuAD v2's answerability beam search has no TFLite form (no TFLITE_OUTPUTS).
    return HeadExport("squad", root, signatures, check, model if cls.TFLITE_OUTPUTS else None)
