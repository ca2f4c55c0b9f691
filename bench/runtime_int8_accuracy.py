"""Does int8 keep a classifier's accuracy? (issue 48, "Accuracy that survives")

    python bench/runtime_int8_accuracy.py --export_dir=x --dev=dev.tsv [--text_b_column=N]

`--export_dir`: an export with `classifier/onnx/<v>` and/or `classifier/openvino/<v>` holding
float32 and dynamic_int8 files, and OpenVINO's static_int8 where written
(export_saved_model.py --onnx=float32,dynamic_int8
--openvino=float32,dynamic_int8,static_int8). `--dev`: a TSV with a header, the text in
column 0 (or `--text_column`) and the label name in the last column (or `--label_column`). Prints, per
format and kind, the accuracy on the dev set, and for int8 the share of texts whose label
equals float32's, as one JSON object; the SavedModel's accuracy is the reference (each float32
file's largest probability difference from it is printed too).
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tensorflow_text  # noqa: E402,F401  (the SavedModel's SentencepieceOp)

from albert_tf.serving.predictor import Predictor  # noqa: E402


def read_dev(path, text_column, text_b_column, label_column):
    with open(path, encoding="utf-8", newline="") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    texts = [row[text_column] for row in rows]
    pairs = None if text_b_column is None else [row[text_b_column] for row in rows]
    return texts, pairs, [row[label_column] for row in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export_dir", required=True)
    parser.add_argument("--dev", required=True)
    parser.add_argument("--text_column", type=int, default=0)
    parser.add_argument("--text_b_column", type=int, default=None)
    parser.add_argument("--label_column", type=int, default=-1)
    parser.add_argument("--batch", type=int, default=1)  # int8 answers depend on the batch
    args = parser.parse_args()
    texts, pairs, labels = read_dev(args.dev, args.text_column, args.text_b_column,
                                    args.label_column)
    base = os.path.join(args.export_dir, "classifier")
    result = {"dev": args.dev, "texts": len(texts)}
    predicted, probabilities = {}, {}
    for fmt, kinds in (("saved_model", ("float32",)), ("onnx", ("float32", "dynamic_int8")),
                       ("openvino", ("float32", "dynamic_int8", "static_int8"))):
        if fmt != "saved_model" and not os.path.isdir(os.path.join(base, fmt)):
            continue
        for kind in kinds:
            if fmt != "saved_model" and not any(  # the kinds the export was asked for
                    f".{kind}." in name for _, _, names in os.walk(os.path.join(base, fmt))
                    for name in names):
                continue
            start = time.time()
            predictor = Predictor.open(base, format=fmt, kind=kind)
            got, scores = [], []
            for i in range(0, len(texts), args.batch):
                chunk = texts[i:i + args.batch], None if pairs is None else pairs[i:i + args.batch]
                got += predictor.predict_labels(*chunk)
                scores.append(predictor.predict(*chunk))
            predicted[fmt, kind], probabilities[fmt, kind] = got, np.concatenate(scores)
            entry = {"accuracy": round(sum(g == w for g, w in zip(got, labels)) / len(labels), 4),
                     "seconds": round(time.time() - start, 1)}
            if fmt != "saved_model" and kind == "float32":
                entry["max_probability_diff_saved_model"] = float(np.max(np.abs(
                    probabilities[fmt, kind] - probabilities["saved_model", "float32"])))
            if kind != "float32":
                reference = predicted[fmt, "float32"]
                entry["agreement_with_float32"] = round(
                    sum(g == r for g, r in zip(got, reference)) / len(got), 4)
            if fmt != "saved_model":
                entry["labels_equal_saved_model"] = round(sum(
                    g == r for g, r in zip(got, predicted["saved_model", "float32"])) / len(got), 4)
            result[f"{fmt}.{kind}"] = entry
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
