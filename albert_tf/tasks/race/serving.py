"""The serving functions of a multiple-choice (RACE) model: raw passage, question and options in,
the choice and its probabilities out, with the features `run_race.py` builds, in the graph.

* `serving_default`: `input_ids`, `input_mask`, `segment_ids` int32 [B, options, S] (the
  TFRecord features of `tasks.race.data`) → `logits` and `probabilities` [B, options] (the
  softmax over a question's options), `choice` int32 [B] (the option's index) and `letter`
  ("A", "B", ...).
* `serve_text`: UTF-8 `passage` [B], `question` [B] and `options` [B, N] → the same outputs.
  A question with fewer options than N pads its row with empty strings: an empty option is no
  option (its probability is 0 and it is never chosen; RACE's questions have 4). The features
  are `data.convert_example`'s: each text through `preprocess_text(lower=do_lower_case)`, the
  option put in place of a cloze question's "_" (every one) or appended after a space, the
  question+option keeping its last `max_qa_length` pieces and the passage cut from its end to
  fit, `[CLS] passage [SEP] question+option [SEP]`. A question+option is kept to at most
  `max_seq_length - 3` pieces (run_race.py refuses a longer `--max_qa_length`).
"""

from __future__ import annotations

import string

import tensorflow as tf

from albert_tf.serving.saved_model import inference_call, serving_root
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text import normalize, packing
from albert_tf.text import optional as text_optional
from albert_tf.text.wordpiece import text_preprocessor

LETTERS = tuple(string.ascii_uppercase)
_IDS = ("input_ids", "input_mask", "segment_ids")


def _gather_ranges(ids: tf.RaggedTensor, rows, starts, lengths) -> tf.RaggedTensor:
    """[N, (lengths)]: pieces `starts[i]` .. `starts[i] + lengths[i]` of row `rows[i]` of `ids`."""
    first = tf.gather(ids.row_starts(), rows) + starts
    return tf.gather(ids.flat_values, tf.ragged.range(first, first + lengths))


def choice_texts(question: tf.Tensor, option: tf.Tensor) -> tf.Tensor:
    """`data._choice_texts` on [N] preprocessed questions and options: each "_" of a cloze
    question replaced by the option, else "question option"."""
    parts = tf.strings.split(question, sep="_")  # [N, (k)]: the text between the gaps
    rows = parts.value_rowids()
    index = tf.range(tf.size(rows, out_type=tf.int64)) - tf.gather(parts.row_starts(), rows)
    last = index == tf.gather(parts.row_lengths(), rows) - 1
    filled = tf.where(last, parts.flat_values,
                      tf.strings.join([parts.flat_values, tf.gather(option, rows)]))
    cloze = tf.strings.reduce_join(parts.with_flat_values(filled), axis=1)
    appended = tf.strings.join([question, option], separator=" ")
    return tf.where(tf.strings.regex_full_match(question, "(?s).*_.*"), cloze, appended)


class RaceServing:
    """The functions of one multiple-choice export (see the module). `scorer`: a model mapping
    {input_ids, input_mask, segment_ids} [N, S] to `logits` [N] (or [N, 1]), one score per
    (passage, option) row (the head's weights; `tasks.race.export`)."""

    def __init__(self, scorer, max_seq_length: int, max_qa_length: int, spm_model_file=None,
                 do_lower_case: bool = True, vocab_file=None, albert_text_rules: bool = True):
        self.scorer = scorer
        self._call = inference_call(scorer)
        self.max_seq_length = int(max_seq_length)
        if self.max_seq_length < 4:
            raise ValueError(f"max_seq_length must be at least 4, got {max_seq_length}")
        self.max_qa_length = min(int(max_qa_length), self.max_seq_length - 3)
        self.do_lower_case = bool(do_lower_case)
        self.preprocessor = None
        if (spm_model_file or vocab_file) and text_optional.available():
            self.preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file,
                                                  vocab_file, albert_text_rules)

    def row_scores(self, features) -> tf.Tensor:
        """[N] scores of [N, S] (passage, option) rows."""
        return tf.reshape(self._call(features)["logits"], [-1])

    def _outputs(self, logits, present):
        """Outputs of [B, N] logits of which `present` are options."""
        masked = tf.where(present, logits, float("-inf"))
        shifted = masked - tf.reduce_max(masked, -1, keepdims=True)
        exp = tf.where(present, tf.exp(shifted), 0.0)
        total = tf.reduce_sum(exp, -1, keepdims=True)
        probabilities = tf.math.divide_no_nan(exp, total)
        any_option = tf.reduce_any(present, -1)
        choice = tf.where(any_option, tf.argmax(masked, -1, output_type=tf.int32), -1)
        letters = tf.constant(LETTERS)
        named = (choice >= 0) & (choice < len(LETTERS))
        letter = tf.where(named, tf.gather(letters, tf.clip_by_value(choice, 0, len(LETTERS) - 1)),
                          tf.where(any_option, tf.strings.as_string(choice), ""))
        return {"logits": tf.where(present, logits, 0.0), "probabilities": probabilities,
                "choice": choice, "letter": letter}

    def serve_ids(self, inputs):
        shape = tf.shape(inputs["input_ids"])
        flat = {name: tf.reshape(inputs[name], [-1, self.max_seq_length]) for name in _IDS}
        logits = tf.reshape(self.row_scores(flat), shape[:2])
        return self._outputs(logits, tf.ones(shape[:2], tf.bool))

    def features(self, passage, question, options) -> tuple[dict, tf.Tensor]:
        """([N, S] features of the present options in row order, [B, N] which are present)."""
        lower = self.do_lower_case
        present = tf.strings.length(options) > 0
        option = tf.ragged.boolean_mask(options, present)
        rows = option.value_rowids()
        option_text = normalize.preprocess_text(option.flat_values, lower=lower)
        question_text = tf.gather(normalize.preprocess_text(question, lower=lower), rows)
        tokenize = self.preprocessor.tokenize  # on preprocessed text, as FullTokenizer.tokenize
        passage_ids = tokenize(normalize.preprocess_text(passage, lower=lower), preprocess=False)
        ending_ids = tokenize(choice_texts(question_text, option_text), preprocess=False)
        ending_length = ending_ids.row_lengths()
        keep_ending = tf.minimum(ending_length, self.max_qa_length)  # its last pieces
        ending = _gather_ranges(ending_ids, tf.range(tf.size(rows, out_type=tf.int64)),
                                ending_length - keep_ending, keep_ending)
        room = tf.maximum(self.max_seq_length - 3 - keep_ending, 0)
        keep_passage = tf.minimum(tf.gather(passage_ids.row_lengths(), rows), room)
        context = _gather_ranges(passage_ids, rows, tf.zeros_like(rows), keep_passage)
        packed = packing.pack(context, ending, self.max_seq_length, self.preprocessor.cls_id,
                              self.preprocessor.sep_id, empty_b_is_pair=True)
        return packed, present

    def serve_text(self, passage, question, options):
        texts = checked_text(passage=passage, question=question)
        flat = checked_text(options=tf.reshape(options, [-1]))["options"]
        rows = tf.debugging.assert_equal(
            tf.shape(options, out_type=tf.int64)[0], tf.size(passage, out_type=tf.int64),
            message="serving inputs must have the same batch size: options has another "
                    "number of rows than passage")
        with tf.control_dependencies([rows]):
            options = tf.reshape(flat, tf.shape(options))
        features, present = self.features(texts["passage"], texts["question"], options)
        scores = self.row_scores(features)
        logits = tf.scatter_nd(tf.where(present), scores, tf.shape(present, out_type=tf.int64))
        return self._outputs(logits, present)

    def module(self):
        """(root module, signatures) for `write_saved_model`."""
        ids = {name: tf.TensorSpec([None, None, self.max_seq_length], tf.int32, name)
               for name in _IDS}
        functions = {"serve_ids": tf.function(self.serve_ids, autograph=False,
                                              input_signature=[ids])}
        resources = {}
        if self.preprocessor is None:
            text_optional.note_no_tokenizer_file()
        else:
            functions["serve_text"] = tf.function(self.serve_text, autograph=False,
                                                  input_signature=[
                tf.TensorSpec([None], tf.string, "passage"),
                tf.TensorSpec([None], tf.string, "question"),
                tf.TensorSpec([None, None], tf.string, "options")])
            resources.update(self.preprocessor.resources)
        root = serving_root(functions, resources)
        signatures = {"serving_default": root.serve_ids}
        if "serve_text" in functions:
            signatures["serve_text"] = root.serve_text
        return root, signatures
