"""Python tokenizers that give exactly the ids of the original ALBERT `tokenization.py`.

SentencePiece mode (`sentencepiece`) is what the English models use; the WordPiece path
(`wordpiece`, vocab file only) serves the released Chinese models. `FullTokenizer`
(`full_tokenizer`) picks one, as the original does. `text_rules` holds `preprocess_text` and the
shared error; `truncation` the sequence-pair truncation of the classifier features. The
package does not import TensorFlow (the pretraining-data workers import it); the in-graph
twins live in `albert_tf.text`.
"""

from albert_tf.tokenization.full_tokenizer import FullTokenizer
from albert_tf.tokenization.sentencepiece import (
    SPIECE_UNDERLINE, encode_ids, encode_pieces, is_digit_comma_piece, load_sentencepiece,
    split_digit_comma_python3, tokenize_sentencepiece_as_is)
from albert_tf.tokenization.text_rules import TokenizerError, convert_to_unicode, preprocess_text
from albert_tf.tokenization.truncation import pack_pair, truncate_seq_pair
from albert_tf.tokenization.wordpiece import (
    MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN, BasicTokenizer, BertTokenizer, WordpiecePieces,
    WordpieceTokenizer, load_vocab)

__all__ = [
    "MAX_INPUT_CHARS_PER_WORD", "SPIECE_UNDERLINE", "UNK_TOKEN", "BasicTokenizer",
    "BertTokenizer", "FullTokenizer", "TokenizerError", "WordpiecePieces", "WordpieceTokenizer",
    "convert_to_unicode", "encode_ids", "encode_pieces", "is_digit_comma_piece",
    "load_sentencepiece", "load_vocab", "preprocess_text", "split_digit_comma_python3",
    "tokenize_sentencepiece_as_is", "truncate_seq_pair", "pack_pair",
]
