"""SQuAD scoring with the official scripts' command line and output keys.

    python -m albert_tf.evaluate_squad DATA_FILE PRED_FILE [--na-prob-file NA_PROB_FILE]

The version follows the data file (v1.1 → `exact_match`/`f1`, v2.0 → `exact`, `f1`, `total`,
`HasAns_*`, `NoAns_*` and, with a no-answer file, `best_*`). v2.0's plotting option
(`--out-image-dir`) is not supported.

Unlike the official scripts, a file that cannot be scored (not JSON, not UTF-8, predictions that
are not an object of question id → answer string, a no-answer file lacking a question's id or
holding a non-number) ends the run with one `error: ...` line naming the file and the id or
field, exit status 1 (ALBERT_TF_TRACEBACK=1 shows the traceback instead).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from albert_tf import cli
from albert_tf.errors import AlbertError, InputError
from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks.squad import metrics

TRACEBACK_ENV = "ALBERT_TF_TRACEBACK"


def _load(path, what):
    try:
        with open(path, "rb") as reader:
            data = reader.read()
    except OSError as error:
        raise InputError(f"cannot read {what} {path}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{what} {path}:{line}: not valid UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{what} {path}: not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno})") from None


def _check_data(data, path) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise InputError(f"data file {path}: expected an object with a 'data' list of articles")
    for a, article in enumerate(data["data"]):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise InputError(f"data file {path}: data[{a}] has no 'paragraphs' list")
        for p, paragraph in enumerate(paragraphs):
            qas = paragraph.get("qas") if isinstance(paragraph, dict) else None
            if not isinstance(qas, list):
                raise InputError(f"data file {path}: data[{a}].paragraphs[{p}] has no 'qas' list")
            for q, qa in enumerate(qas):
                where = f"data file {path}: data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, dict) or "id" not in qa:
                    raise InputError(f"{where}: missing field 'id'")
                answers = qa.get("answers")
                if not isinstance(answers, list) or not all(
                        isinstance(x, dict) and isinstance(x.get("text"), str) for x in answers):
                    raise InputError(f"{where} (id {qa['id']}): 'answers' should be a list of "
                                     f"objects with a 'text' string")


def _check_predictions(predictions, path) -> None:
    if not isinstance(predictions, dict):
        raise InputError(f"prediction file {path}: expected a JSON object of question id → "
                         f"answer string, got a {type(predictions).__name__}")
    for qid, answer in predictions.items():
        if not isinstance(answer, str):
            raise InputError(f"prediction file {path}: the answer of id {qid!r} should be a "
                             f"string, got {type(answer).__name__} {json.dumps(answer)[:60]}")


def _check_na_probs(na_probs, path, ids) -> None:
    if not isinstance(na_probs, dict):
        raise InputError(f"no-answer file {path}: expected a JSON object of question id → "
                         f"probability, got a {type(na_probs).__name__}")
    missing = [qid for qid in ids if qid not in na_probs]
    if missing:
        raise InputError(f"no-answer file {path}: no probability for id {missing[0]!r} "
                         f"({len(missing)} of {len(ids)} predicted ids missing)")
    for qid in ids:
        value = na_probs[qid]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise InputError(f"no-answer file {path}: the probability of id {qid!r} should be "
                             f"a number, got {json.dumps(value)[:60]}")


def evaluate_files(data_file, pred_file, na_prob_file=None, na_prob_thresh: float = 1.0) -> dict:
    data = _load(data_file, "data file")
    _check_data(data, data_file)
    predictions = _load(pred_file, "prediction file")
    _check_predictions(predictions, pred_file)
    if metrics.is_version_2(data):
        na_probs = None
        if na_prob_file:
            na_probs = _load(na_prob_file, "no-answer file")
            # the scores read the probability of every question that has a prediction
            _check_na_probs(na_probs, na_prob_file, [qa["id"] for a in data["data"]
                                                     for p in a["paragraphs"] for qa in p["qas"]
                                                     if qa["id"] in predictions])
        return metrics.evaluate_v2(data["data"], predictions, na_probs, na_prob_thresh)
    if data.get("version") != "1.1":
        print(f"Evaluation expects v-1.1, but got dataset with v-{data.get('version')}",
              file=sys.stderr)
    return metrics.evaluate_v1(data["data"], predictions)


def _main(argv) -> None:
    parser = argparse.ArgumentParser(description="Official SQuAD v1.1/v2.0 evaluation.")
    parser.add_argument("data_file", metavar="data.json")
    parser.add_argument("pred_file", metavar="pred.json")
    parser.add_argument("--out-file", "-o", metavar="eval.json",
                        help="write the scores to this file instead of stdout")
    parser.add_argument("--na-prob-file", "-n", metavar="na_prob.json",
                        help="v2.0: model estimates of the probability of no answer")
    parser.add_argument("--na-prob-thresh", "-t", type=float, default=1.0,
                        help="v2.0: predict no answer when the probability exceeds this")
    # Every other program here is an absl one, whose --helpshort / --helpfull print the help.
    parser.add_argument("--helpshort", "--helpfull", action="help", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    result = evaluate_files(args.data_file, args.pred_file, args.na_prob_file, args.na_prob_thresh)
    version_2 = "exact" in result
    if args.out_file:
        cli.quiet_tensorflow()  # the atomic writer loads TensorFlow: without its start-up lines
        write_text_atomically(os.path.abspath(args.out_file), json.dumps(result))
    elif version_2:
        print(json.dumps(result, indent=2))
    else:
        print(json.dumps(result))


def main(argv=None) -> None:
    """The command line. This keeps the official scripts' argparse options (`--na-prob-file`,
    `-o`), which absl flags cannot spell, so it maps errors itself as `cli.run` does: our errors
    end the run through SystemExit("error: ...") (one line, exit status 1)."""
    try:
        _main(argv)
    except (AlbertError, OSError) as error:
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        if isinstance(error, OSError) and not isinstance(error, AlbertError):
            message = f"{error.filename}: {error.strerror or error}"
        else:
            message = " ".join(str(error).split())
        raise SystemExit(f"error: {message}") from None


if __name__ == "__main__":
    main()
