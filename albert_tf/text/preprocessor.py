"""`AlbertPreprocessor`: raw text to ALBERT inputs inside the TensorFlow graph.

It gives the ids of the Python path (`preprocess_text(text, lower=do_lower_case)`, SentencePiece,
digit-comma fix-up, the GLUE packing and truncation), so the same layer can feed `tf.data` and
sit at the front of an exported SavedModel that takes raw strings.
"""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf import tokenization
from albert_tf.text import normalize, sentencepiece_ops, unigram
from albert_tf.text.layer import TextPreprocessorLayer
from albert_tf.text.optional import tensorflow_text
from albert_tf.text.sentencepiece_resource import sentencepiece_tokenizer


def read_model_proto(spm_model_file) -> bytes:
    """Bytes of a SentencePiece model, checked by loading it (clear error if missing or corrupt)."""
    spm_model_file = os.fspath(spm_model_file)
    tokenization.load_sentencepiece(spm_model_file)
    with tf.io.gfile.GFile(spm_model_file, "rb") as reader:
        return reader.read()


def _control_id(processor, piece: str, model_file: str) -> int:
    piece_id = processor.PieceToId(piece)
    if processor.IdToPiece(piece_id) != piece:
        raise tokenization.TokenizerError(
            f"SentencePiece model {model_file} has no {piece} piece (train it with "
            "control symbols [CLS],[SEP],[MASK])")
    return piece_id


class AlbertPreprocessor(TextPreprocessorLayer):
    """Maps [B] UTF-8 strings, or a pair of them, to int32 [B, max_seq_length] model inputs.

    The SentencePiece model is embedded in the graph (it is an attribute of the tokenizer
    resource), so a SavedModel holding this layer needs no file at serving time.

    The SentencePiece op of tensorflow-text breaks exact score ties between segmentations
    differently from the sentencepiece wheel ("www" as "ww"+"w" instead of "w"+"ww" after some
    prefixes); with the original's text rules the op only normalizes and
    `albert_tf.text.unigram` redoes the search as the wheel does, so the ids are the wheel's.
    """

    SOURCE_KEY = "spm_model_file"

    def __init__(self, spm_model_file, max_seq_length: int, do_lower_case: bool = True,
                 albert_text_rules: bool = True, **kwargs):
        super().__init__(os.fspath(spm_model_file), max_seq_length, do_lower_case, **kwargs)
        # False: the text goes to SentencePiece as is, as keras-hub's AlbertTokenizer does (no
        # preprocess_text, no digit-comma split), so a keras-hub model's export serves its ids.
        self.albert_text_rules = bool(albert_text_rules)
        self.spm_model_file = self.source_file
        proto = read_model_proto(self.spm_model_file)
        processor = tokenization.load_sentencepiece(self.spm_model_file)
        self.cls_id = _control_id(processor, "[CLS]", self.spm_model_file)
        self.sep_id = _control_id(processor, "[SEP]", self.spm_model_file)
        self.vocab_size = processor.GetPieceSize()
        self._digit_comma_table = sentencepiece_ops.digit_comma_table(processor)
        self._comma_id = sentencepiece_ops.comma_id(processor)
        text_ops = tensorflow_text("the in-graph SentencePiece tokenizer")
        if self.albert_text_rules:
            self.sentencepiece = unigram.WheelSentencepiece(text_ops, proto, self.spm_model_file)
        else:  # keras-hub tokenizes with the op itself, ties included
            self.sentencepiece = sentencepiece_tokenizer(text_ops, proto, tf.int32)

    @property
    def resources(self) -> dict:
        """What a SavedModel root must hold for functions that call this layer."""
        return {"sentencepiece": self.sentencepiece}

    def preprocess(self, strings) -> tf.Tensor:
        """`preprocess_text(strings, lower=do_lower_case)` on a string tensor."""
        return normalize.preprocess_text(strings, lower=self.do_lower_case)

    def tokenize(self, strings, preprocess: bool = True) -> tf.RaggedTensor:
        """[B] strings → [B, (pieces)] int32 ids, as `encode_ids(sp, preprocess_text(s))`."""
        strings = tf.convert_to_tensor(strings, tf.string)
        if not self.albert_text_rules:
            if self.do_lower_case:
                strings = normalize.lower_case(strings)
            return self.sentencepiece.tokenize(strings)
        if preprocess:
            strings = self.preprocess(strings)
        return sentencepiece_ops.encode_ids(self.sentencepiece, strings, self._digit_comma_table,
                                            self._comma_id)

    def get_config(self):
        config = super().get_config()
        config["albert_text_rules"] = self.albert_text_rules
        return config
