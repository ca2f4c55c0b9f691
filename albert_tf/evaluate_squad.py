"""SQuAD scoring with the official scripts' command line and output keys.

    python -m albert_tf.evaluate_squad DATA_FILE PRED_FILE [--na-prob-file NA_PROB_FILE]

The version follows the data file (v1.1 → `exact_match`/`f1`, v2.0 → `exact`, `f1`, `total`,
`HasAns_*`, `NoAns_*` and, with a no-answer file, `best_*`). v2.0's plotting option
(`--out-image-dir`) is not supported.
"""

from __future__ import annotations

import argparse
import json
import sys

from albert_tf.tasks.squad import metrics


def _load(path, what):
    try:
        with open(path, encoding="utf-8") as reader:
            return json.load(reader)
    except OSError as error:
        raise SystemExit(f"cannot read {what} {path}: {error.strerror}")
    except json.JSONDecodeError as error:
        raise SystemExit(f"{what} {path}: not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno})")


def evaluate_files(data_file, pred_file, na_prob_file=None, na_prob_thresh: float = 1.0) -> dict:
    data = _load(data_file, "data file")
    predictions = _load(pred_file, "prediction file")
    if metrics.is_version_2(data):
        na_probs = _load(na_prob_file, "no-answer file") if na_prob_file else None
        return metrics.evaluate_v2(data["data"], predictions, na_probs, na_prob_thresh)
    if data.get("version") != "1.1":
        print(f"Evaluation expects v-1.1, but got dataset with v-{data.get('version')}",
              file=sys.stderr)
    return metrics.evaluate_v1(data["data"], predictions)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Official SQuAD v1.1/v2.0 evaluation.")
    parser.add_argument("data_file", metavar="data.json")
    parser.add_argument("pred_file", metavar="pred.json")
    parser.add_argument("--out-file", "-o", metavar="eval.json",
                        help="write the scores to this file instead of stdout")
    parser.add_argument("--na-prob-file", "-n", metavar="na_prob.json",
                        help="v2.0: model estimates of the probability of no answer")
    parser.add_argument("--na-prob-thresh", "-t", type=float, default=1.0,
                        help="v2.0: predict no answer when the probability exceeds this")
    args = parser.parse_args(argv)
    result = evaluate_files(args.data_file, args.pred_file, args.na_prob_file, args.na_prob_thresh)
    version_2 = "exact" in result
    if args.out_file:
        with open(args.out_file, "w", encoding="utf-8") as writer:
            json.dump(result, writer)
    elif version_2:
        print(json.dumps(result, indent=2))
    else:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
