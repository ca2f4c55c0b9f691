"""Preprocessing SavedModel: raw UTF-8 text → `input_word_ids`, `input_mask`, `input_type_ids`."""

from __future__ import annotations

import tensorflow as tf

from albert_tf.serving.hub_interface import attach_preprocessing
from albert_tf.serving.saved_model import tracing_for_save, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text import text_preprocessor

_TEXT = tf.TensorSpec([None], tf.string)


class PreprocessingModule(tf.Module):
    """SentencePiece (or, with only `vocab_file`, WordPiece) runs inside the graph; the .model
    (or vocab) file also travels as an asset so a consumer can rebuild the Python tokenizer from
    the export alone (`tokenization_info`: `spm_model_file` or `vocab_file`). The module is also
    TF Hub's preprocessor (`serving.hub_interface`): callable on [B] strings, with `tokenize`
    and `bert_pack_inputs`."""

    def __init__(self, spm_model_file, max_seq_length: int, do_lower_case: bool = True,
                 vocab_file=None, albert_text_rules: bool = True, hub_seq_length=None):
        super().__init__(name="albert_preprocessing")
        self.preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file,
                                              vocab_file, albert_text_rules)
        if self.preprocessor is None:
            raise ValueError("the preprocessing export needs spm_model_file or vocab_file")
        for name, resource in self.preprocessor.resources.items():
            setattr(self, name, resource)
        self.asset_key = "spm_model_file" if spm_model_file else "vocab_file"
        self.spm_model_asset = tf.saved_model.Asset(spm_model_file or vocab_file)
        self.do_lower_case = tf.Variable(do_lower_case, trainable=False, name="do_lower_case")
        self.max_seq_length = tf.Variable(max_seq_length, trainable=False, name="max_seq_length")
        # TF Hub's calls pack to `hub_seq_length` unless told otherwise (its preprocessors: 128).
        attach_preprocessing(self, self.preprocessor, hub_seq_length or max_seq_length)

    @staticmethod
    def _rename(packed):
        return {"input_word_ids": packed["input_ids"], "input_mask": packed["input_mask"],
                "input_type_ids": packed["segment_ids"]}

    @tf.function(input_signature=[_TEXT], autograph=False)
    def serve(self, text):
        return self._rename(self.preprocessor(checked_text(text=text)["text"]))

    @tf.function(input_signature=[_TEXT, _TEXT], autograph=False)
    def serve_pair(self, text_a, text_b):
        checked = checked_text(text_a=text_a, text_b=text_b)
        return self._rename(self.preprocessor((checked["text_a"], checked["text_b"])))

    @tf.function(input_signature=[], autograph=False)
    def tokenization_info(self):
        return {self.asset_key: self.spm_model_asset.asset_path,
                "do_lower_case": tf.identity(self.do_lower_case),
                "max_seq_length": tf.identity(self.max_seq_length)}


def export_preprocessing(spm_model_file, base_dir, max_seq_length: int = 128,
                         do_lower_case: bool = True, version: int | None = None,
                         verify=None, vocab_file=None) -> str:
    """Writes `<base_dir>/<version>`; see `write_saved_model` for `version` and `verify`.
    `spm_model_file=None` with `vocab_file`: WordPiece (the Chinese models)."""
    module, signatures = build_preprocessing(spm_model_file, max_seq_length, do_lower_case,
                                             vocab_file)
    return write_saved_model(module, base_dir, signatures, version, verify)


def build_preprocessing(spm_model_file, max_seq_length: int = 128, do_lower_case: bool = True,
                        vocab_file=None, albert_text_rules: bool = True, hub_seq_length=None):
    """(root module, signatures) of the preprocessing export (`albert_text_rules=False`:
    SentencePiece on the text as is, as keras-hub's tokenizer; `hub_seq_length`: the default
    length of the TF Hub calls, else `max_seq_length`)."""
    with tracing_for_save():  # TF Hub's bert_pack_inputs is traced as it is built
        module = PreprocessingModule(spm_model_file, max_seq_length, do_lower_case, vocab_file,
                                     albert_text_rules, hub_seq_length)
    return module, {"serving_default": module.serve, "serve_pair": module.serve_pair,
                    "tokenization_info": module.tokenization_info}
