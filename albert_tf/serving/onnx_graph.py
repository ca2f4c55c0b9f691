"""`Builder`: an ONNX graph written node by node, with the ragged-batch helpers the text graphs
(`serving.onnx_text`, `serving.onnx_unigram`) share: a ragged batch is flat values with the
row of each (int64), as onnxruntime-extensions' ops return them with row offsets."""

from __future__ import annotations

import numpy as np

CONTRIB = "ai.onnx.contrib"
PREFIX = "tokenizer/"


class Builder:
    """Nodes and initializers under construction, with fresh names under `prefix`."""

    def __init__(self, onnx, prefix: str = PREFIX, parent: Builder | None = None):
        self.onnx, self.helper = onnx, onnx.helper
        self.nodes, self.initializers, self.prefix = [], [], prefix
        # A loop body's builder puts its constants into the outer graph (which the body sees).
        self.root = parent.root if parent is not None else self
        self.count = 0

    def name(self, hint="t"):
        self.root.count += 1
        return f"{self.prefix}{hint}_{self.root.count}"

    def const(self, value, dtype=None):
        array = np.asarray(value, dtype)
        name = self.name("c")
        if array.dtype.kind in "OUS":
            tensor = self.helper.make_tensor(name, self.onnx.TensorProto.STRING, array.shape,
                                             [str(v).encode("utf-8") for v in array.flat])
        else:
            tensor = self.onnx.numpy_helper.from_array(array, name)
        self.root.initializers.append(tensor)
        return name

    def op(self, op_type, inputs, outputs=1, domain="", **attrs):
        names = [self.name(op_type) for _ in range(outputs)] if isinstance(outputs, int) \
            else list(outputs)
        self.nodes.append(self.helper.make_node(op_type, list(inputs), names, domain=domain,
                                                **attrs))
        return names[0] if len(names) == 1 else names

    def i64(self, *values):
        return self.const(np.array(values, np.int64))

    def scalar(self, value, dtype=np.int64):
        return self.const(np.array(value, dtype))

    def fill(self, shape, value, dtype=np.int64):
        """A tensor of `shape` (an int64 [rank] value) filled with `value`."""
        return self.op("ConstantOfShape", [shape],
                       value=self.onnx.numpy_helper.from_array(np.array([value], dtype)))

    def arange(self, stop):
        """int64 [n]: 0..n-1, `stop` an int64 [1] value."""
        return self.op("Range", [self.scalar(0), self.op("Squeeze", [stop]), self.scalar(1)])

    def pairs(self, rows, columns):
        """[K, 2] ScatterND / GatherND indices of two int64 [K] values."""
        return self.op("Concat", [self.op("Unsqueeze", [rows, self.i64(1)]),
                                  self.op("Unsqueeze", [columns, self.i64(1)])], axis=1)

    def row_ids(self, offsets, count):
        """int64 [count]: the row of each item of a ragged batch whose row offsets (N+1) are
        `offsets` (a scatter-add of the row starts, then a running sum)."""
        starts = self.op("Slice", [offsets, self.i64(1), self.i64(-1)])
        marks = self.op("ScatterElements", [self.fill(self.op("Add", [count, self.i64(1)]), 0),
                                            starts, self.op("Expand", [self.i64(1), self.op(
                                                "Shape", [starts])])],
                        axis=0, reduction="add")
        return self.op("Slice", [self.op("CumSum", [marks, self.scalar(0)]), self.i64(0), count])

    def counts(self, rows, batch):
        """int64 [batch]: how many items each row holds."""
        ones = self.op("Expand", [self.i64(1), self.op("Shape", [rows])])
        return self.op("ScatterElements", [self.fill(batch, 0), rows, ones], axis=0,
                       reduction="add")

    def positions(self, rows, counts):
        """int64 [K]: each item's place in its row (rows in order)."""
        starts = self.op("Sub", [self.op("CumSum", [counts, self.scalar(0)]), counts])
        return self.op("Sub", [self.arange(self.op("Shape", [rows])),
                               self.op("Gather", [starts, rows])])

    def dense(self, values, rows, counts, batch, fill):
        """[batch, max(1, longest row)]: a ragged batch padded with `fill` (a value's name)."""
        width = self.op("Max", [self.op("ReduceMax", [counts], keepdims=1), self.i64(1)])
        shape = self.op("Concat", [batch, width], axis=0)
        return self.op("ScatterND", [self.op("Expand", [fill, shape]),
                                     self.pairs(rows, self.positions(rows, counts)), values])

    def join_rows(self, values, rows, batch):
        """[batch] strings: each row's strings concatenated."""
        dense = self.dense(values, rows, self.counts(rows, batch), batch, self.const([""]))
        return self.op("StringJoin", [dense, self.const(""), self.scalar(1)], domain=CONTRIB)

    def chars(self, texts):
        """(characters, row of each) of [N] strings."""
        chars, _, _, offsets = self.op("StringRegexSplitWithOffsets",
                                       [texts, self.const("(?s)(.)"), self.const("(?s)(.)")],
                                       4, CONTRIB)
        return chars, self.row_ids(offsets, self.op("Shape", [chars]))

    def body(self, name, inputs, outputs):
        """A loop body graph of this builder's nodes (see `onnx.helper.make_graph`)."""
        return self.helper.make_graph(self.nodes, name, inputs, outputs)
