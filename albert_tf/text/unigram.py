"""Unigram SentencePiece segmentation in TensorFlow ops, with the sentencepiece wheel's tie-break.

tensorflow-text's SentencePiece op keeps a different one of two exactly equal-scoring
segmentations than the sentencepiece wheel that the Python tokenizer (and the original) use:
"www" after some prefixes is "ww","w" from the op and "w","ww" from the wheel. Whether scores tie
exactly depends on the float32 sum of every piece before, so no local rewrite of the op's output
is exact. Instead the op only normalizes (its pieces, unknown ones as their surface, concatenate
to the normalized text) and the search is done again here, as the wheel does it: the best float32
path score at each end position, a tie going to the piece that starts first, and a run of
unknown characters becoming one unknown piece.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
import tensorflow as tf

from albert_tf.text.sentencepiece_resource import sentencepiece_tokenizer
from albert_tf.tokenization import TokenizerError

# sentencepiece_model.proto: ModelProto.pieces = 1, .trainer_spec = 2; SentencePiece.piece = 1,
# .score = 2, .type = 3; TrainerSpec.model_type = 3, .byte_fallback = 35.
_NORMAL, _UNKNOWN, _USER_DEFINED = 1, 2, 4
_UNIGRAM = 1
_UNKNOWN_PENALTY = 10.0  # the wheel scores an unknown character at the lowest piece score minus this
_FLT_MIN = np.finfo(np.float32).tiny  # the wheel's starting value for the highest score


@dataclasses.dataclass(frozen=True)
class UnigramVocab:
    """What the search needs from a model: the pieces it may match (normal and user-defined)."""

    pieces: tuple[str, ...]
    ids: tuple[int, ...]
    scores: tuple[float, ...]    # user-defined pieces already at the wheel's bonus score
    unknown_id: int
    unknown_score: float
    max_piece_chars: int


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes):
    """(field number, value) of a serialized protobuf message: ints, or bytes for the rest."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, pos = data[pos:pos + size], pos + size
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, value


def read_unigram_vocab(model_proto: bytes, model_file: str) -> UnigramVocab | None:
    """The search's vocabulary, or None for a model this search does not cover (BPE, word,
    char, or byte fallback): those keep the op's own segmentation."""
    try:
        entries, byte_fallback, model_type = [], False, _UNIGRAM
        for number, value in _fields(model_proto):
            if number == 1:
                piece, score, kind = "", 0.0, _NORMAL
                for field, item in _fields(value):
                    if field == 1:
                        piece = item.decode("utf-8")
                    elif field == 2:
                        score = struct.unpack("<f", item)[0]
                    elif field == 3:
                        kind = item
                entries.append((piece, np.float32(score), kind))
            elif number == 2:
                for field, item in _fields(value):
                    if field == 3:
                        model_type = item
                    elif field == 35:
                        byte_fallback = bool(item)
    except (ValueError, UnicodeDecodeError, struct.error) as error:
        raise TokenizerError(f"SentencePiece model {model_file} could not be read: {error}") from None
    if model_type != _UNIGRAM or byte_fallback:
        return None
    normal_scores = [score for _, score, kind in entries if kind == _NORMAL]
    unknown = [index for index, (_, _, kind) in enumerate(entries) if kind == _UNKNOWN]
    if not normal_scores or not unknown:
        raise TokenizerError(f"SentencePiece model {model_file} has no normal or no unknown piece")
    max_score = max(np.float32(_FLT_MIN), max(normal_scores))
    pieces, ids, scores = [], [], []
    for index, (piece, score, kind) in enumerate(entries):
        if kind == _NORMAL:
            pieces.append(piece), ids.append(index), scores.append(float(score))
        elif kind == _USER_DEFINED:  # the wheel's bonus: always preferred to normal pieces
            length = len(piece.encode("utf-8"))
            pieces.append(piece), ids.append(index)
            scores.append(float(np.float32(length) * max_score - np.float32(0.1)))
    return UnigramVocab(pieces=tuple(pieces), ids=tuple(ids), scores=tuple(scores),
                        unknown_id=unknown[0],
                        unknown_score=float(np.float32(min(normal_scores)) - np.float32(_UNKNOWN_PENALTY)),
                        max_piece_chars=max(len(piece) for piece in pieces))


class UnigramSearch(tf.Module):
    """[B] normalized strings → [B, (pieces)] int32 ids, the wheel's segmentation.

    Its hash table is a resource: a SavedModel that calls it must track this module.
    """

    def __init__(self, vocab: UnigramVocab, name: str = "unigram_search"):
        super().__init__(name=name)
        self.vocab = vocab
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(vocab.pieces, tf.string),
                                                tf.constant(vocab.ids, tf.int32)), -1)
        scores = np.full(max(vocab.ids) + 1, -np.inf, np.float32)
        scores[list(vocab.ids)] = vocab.scores
        self._scores = scores

    def __call__(self, normalized: tf.Tensor) -> tf.RaggedTensor:
        return self._search(normalized)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def _search(self, normalized):
        # One traced function per model: every signature that tokenizes calls it (tracing the
        # loops again in each of them made an export several times slower).
        codes, starts = tf.strings.unicode_decode_with_offsets(normalized, "UTF-8")
        lengths = tf.cast(codes.row_lengths(), tf.int32)
        # [B, N + 1]: the byte where character i starts, then each string's byte length.
        byte_offsets = tf.concat([tf.cast(starts, tf.int32), tf.RaggedTensor.from_tensor(
            tf.strings.length(normalized)[:, None])], 1).to_tensor()
        ids, scores = self._candidates(normalized, byte_offsets, lengths)   # [B, N + 1, L]
        lengths_at_end, ids_at_end = self._forward(ids, scores)
        return self._backtrack(lengths_at_end, ids_at_end, lengths)

    def _candidates(self, normalized, byte_offsets, lengths):
        """Per end position e = 1..N + 1 and length l + 1: the piece text[e - l - 1:e] (id,
        score); end N + 1 fits no string, it only makes the loops run at least once (an empty
        batch or empty strings: a TensorArray cannot stack zero elements of unknown shape)."""
        width = self.vocab.max_piece_chars
        batch = tf.shape(byte_offsets)[0]
        n = tf.maximum(tf.shape(byte_offsets)[1] - 1, 0)  # an empty batch has no columns at all
        end = tf.range(1, n + 2)[None, :, None]
        size = tf.range(1, width + 1)[None, None, :]
        start = end - size
        fits = (start >= 0) & (end <= lengths[:, None, None])          # [B, N + 1, L]
        flat = lambda x: tf.reshape(tf.broadcast_to(x, tf.shape(fits)), [batch, -1])
        first = tf.gather(byte_offsets, flat(tf.where(fits, start, 0)), batch_dims=1)
        stop = tf.gather(byte_offsets, flat(tf.where(fits, end, 0)), batch_dims=1)
        text = tf.reshape(tf.strings.substr(normalized[:, None], first, stop - first), tf.shape(fits))
        found = tf.where(fits, self.table.lookup(text), -1)
        score = tf.where(found >= 0, tf.gather(self._scores, tf.maximum(found, 0)), -np.inf)
        # No one-character piece at a position: that character is unknown.
        unknown = fits & (found < 0) & (size == 1)
        found = tf.where(unknown, self.vocab.unknown_id, found)
        score = tf.where(unknown, tf.constant(self.vocab.unknown_score, tf.float32), score)
        return found, score

    def _forward(self, ids, scores):
        """The best path into each end position: [N + 1, B] piece lengths and ids (end 1..)."""
        width = self.vocab.max_piece_chars
        batch = tf.shape(ids)[0]
        index = tf.range(width)
        # recent[:, k] = best score at end e - 1 - k; only end 0 (score 0) is known at the start.
        recent = tf.concat([tf.zeros([batch, 1]), tf.fill([batch, width - 1], -np.inf)], 1)

        def step(state, end_scores):
            recent, _ = state
            candidates = recent + end_scores
            best = tf.reduce_max(candidates, 1)
            # A tie goes to the piece that starts first, i.e. the longest.
            chosen = tf.reduce_max(tf.where(candidates == best[:, None], index, -1), 1)
            return tf.concat([best[:, None], recent[:, :-1]], 1), chosen

        ids = tf.transpose(ids, [1, 0, 2])
        _, chosen = tf.scan(step, tf.transpose(scores, [1, 0, 2]),
                            initializer=(recent, tf.zeros([batch], tf.int32)))
        return chosen + 1, tf.gather(ids, chosen, batch_dims=2)

    def _backtrack(self, piece_lengths, piece_ids, lengths) -> tf.RaggedTensor:
        batch = tf.shape(lengths)[0]
        rows = tf.range(batch)
        # Prepend end 0 so that row e holds end e.
        piece_lengths = tf.concat([tf.zeros([1, batch], tf.int32), piece_lengths], 0)
        piece_ids = tf.concat([tf.zeros([1, batch], tf.int32), piece_ids], 0)

        def not_done(end, *_):
            return tf.reduce_any(end > 0)

        def walk(end, found, is_piece):
            here = tf.stack([end, rows], 1)
            alive = end > 0
            found = found.write(found.size(), tf.gather_nd(piece_ids, here))
            is_piece = is_piece.write(is_piece.size(), alive)
            end = tf.where(alive, end - tf.gather_nd(piece_lengths, here), 0)
            return end, found, is_piece

        # A first, never-kept row: the stacks below are not empty when no row has a piece.
        found = tf.TensorArray(tf.int32, 0, dynamic_size=True).write(0, tf.zeros([batch], tf.int32))
        is_piece = tf.TensorArray(tf.bool, 0, dynamic_size=True).write(0, tf.zeros([batch], tf.bool))
        _, found, is_piece = tf.while_loop(not_done, walk, (lengths, found, is_piece))
        # Steps run last piece first: reverse them, then keep each row's real pieces.
        backwards = tf.reshape(found.stack(), [-1, batch])
        keep = tf.reshape(is_piece.stack(), [-1, batch])
        forwards = tf.transpose(tf.reverse(backwards, [0]))
        kept = tf.transpose(tf.reverse(keep, [0]))
        # Real pieces are at the end of each reversed row: boolean_mask keeps their order.
        ragged = tf.ragged.boolean_mask(forwards, kept)
        return _merge_unknown_runs(ragged, self.vocab.unknown_id)


def _merge_unknown_runs(ids: tf.RaggedTensor, unknown_id: int) -> tf.RaggedTensor:
    """One unknown piece for each run of unknown characters, as the wheel returns them."""
    values = tf.reshape(ids.flat_values, [-1])
    rows = ids.value_rowids()
    position = tf.range(tf.shape(values, out_type=tf.int64)[0])
    first_in_row = position == tf.gather(ids.row_starts(), rows)
    previous = tf.concat([[-1], values[:-1]], 0)
    keep = ~((values == unknown_id) & (previous == unknown_id) & ~first_in_row)
    keep = tf.reshape(keep, [-1])
    kept_per_row = tf.math.unsorted_segment_sum(tf.cast(keep, tf.int64), rows, ids.nrows())
    return tf.RaggedTensor.from_row_lengths(tf.boolean_mask(values, keep), kept_per_row,
                                            validate=False)


class WheelSentencepiece(tf.Module):
    """The in-graph SentencePiece tokenizer with the wheel's ids: `tokenize` ([B] strings →
    [B, (pieces)] int32), `id_to_string` and `detokenize`, as tensorflow-text's
    `SentencepieceTokenizer` has them. The op normalizes; for a unigram model `UnigramSearch` picks the pieces (any other
    model keeps the op's own segmentation).
    """

    def __init__(self, text_ops, model_proto: bytes, model_file: str):
        super().__init__(name="wheel_sentencepiece")
        self.ids_op = sentencepiece_tokenizer(text_ops, model_proto, tf.int32)
        vocab = read_unigram_vocab(model_proto, model_file)
        self.search = None if vocab is None else UnigramSearch(vocab)
        self.pieces_op = (None if vocab is None else
                          sentencepiece_tokenizer(text_ops, model_proto, tf.string))

    def tokenize(self, strings) -> tf.RaggedTensor:
        if self.search is None:
            return self.ids_op.tokenize(strings)
        # The op's pieces, unknown ones as their text, concatenate to the normalized string.
        return self.search(tf.strings.reduce_join(self.pieces_op.tokenize(strings), axis=-1))

    def id_to_string(self, ids):
        return self.ids_op.id_to_string(ids)

    def detokenize(self, ids):
        return self.ids_op.detokenize(ids)
