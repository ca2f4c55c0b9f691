"""Row gathers over [B,S,H] sequences."""

from keras import ops


def gather_rows(sequence, positions):
    """[B,S,H] and int [B,P] → [B,P,H], row p of example b = sequence[b, positions[b, p]].

    One gather over the flattened [B·S,H] rows: its gradient touches B·P rows, where
    `ops.take_along_axis` broadcasts the indices to [B,P,H] and transposes the whole sequence.
    """
    batch, length = ops.shape(sequence)[0], ops.shape(sequence)[1]
    width = sequence.shape[-1]
    positions = ops.cast(positions, "int32")
    offsets = ops.arange(batch, dtype="int32")[:, None] * ops.cast(length, "int32")
    flat_rows = ops.reshape(positions + offsets, (-1,))
    rows = ops.take(ops.reshape(sequence, (-1, width)), flat_rows, axis=0)
    return ops.reshape(rows, (batch, ops.shape(positions)[1], width))
