"""run_ner.py's files, each written through `io_utils.atomic_output`:

* `labels.json`: the tags in id order, written before training; a later run on the same
  output_dir (evaluation, prediction, export) must have the same tags (the classifiers' file:
  `albert_tf.labels.LabelFile`).
* `eval_results.txt`: per evaluated checkpoint its `key = value` lines (with `global_step`),
  the files copied to `model.ckpt-best`, `best <metric> = <value>` and a line of 50 `=`; at the
  end the best checkpoint's lines and `best perf happened at step: <step>` (the SQuAD and RACE
  runners' format, `tasks.eval_log.RunnerEvalLog`).
* `test_predictions.conll`: the test file's tokens, one per line as `token<TAB>tag`, a blank
  line between sentences (the input's sentence breaks; `-DOCSTART-` lines are not repeated).
  Tabs and line breaks inside a token (possible in JSONL) are written as spaces.
* `test_predictions.jsonl` (JSONL test files): `{"tokens": [...], "tags": [...]}` per sentence.
* `test_results.txt`: the test file's metrics, `key = value`, when it has tags.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf

from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks.eval_log import RunnerEvalLog

class NerEvalLog(RunnerEvalLog):
    """eval_results.txt: the runners' format, each block with its `global_step`."""

    def start(self, evaluator):
        if evaluator.state.last_step < 0 and tf.io.gfile.exists(self.path):
            tf.io.gfile.remove(self.path)  # a fresh evaluation starts a fresh file
        elif tf.io.gfile.exists(self.path):  # a re-run goes on with the blocks already there
            with tf.io.gfile.GFile(self.path, "r") as reader:
                self.lines = reader.read().splitlines()

    def record(self, step, result, best_before, copied):
        super().record(step, {**result, "global_step": int(step)}, best_before, copied)

    def record_other(self, step, result, best_before):
        # --do_eval on an --init_checkpoint alone: written, but never a best checkpoint.
        RunnerEvalLog.record(self, step, {**result, "global_step": int(step)}, best_before, [])


def _clean(token: str) -> str:
    return token.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def format_conll(sentences, tags) -> str:
    """`token<TAB>tag` lines, a blank line after each sentence."""
    blocks = []
    for sentence, predicted in zip(sentences, tags):
        blocks.append("".join(f"{_clean(token)}\t{tag}\n"
                              for token, tag in zip(sentence.tokens, predicted)))
    return "\n".join(blocks)


def format_jsonl(sentences, tags) -> str:
    return "".join(json.dumps({"tokens": s.tokens, "tags": list(t)}, ensure_ascii=False) + "\n"
                   for s, t in zip(sentences, tags))


def format_results(result: dict) -> str:
    return "".join(f"{key} = {result[key]}\n" for key in sorted(result))


def write_predictions(output_dir: str, sentences, tags, jsonl: bool = False) -> dict:
    """test_predictions.conll (and .jsonl for a JSONL test file); returns the paths."""
    for sentence, predicted in zip(sentences, tags):
        if len(predicted) != len(sentence.tokens):  # every token gets a tag, or nothing is written
            raise AssertionError(f"{sentence.where()}: {len(sentence.tokens)} tokens but "
                                 f"{len(predicted)} tags")
    paths = {"test_predictions": os.path.join(output_dir, "test_predictions.conll")}
    write_text_atomically(paths["test_predictions"], format_conll(sentences, tags))
    if jsonl:
        paths["test_predictions_jsonl"] = os.path.join(output_dir, "test_predictions.jsonl")
        write_text_atomically(paths["test_predictions_jsonl"], format_jsonl(sentences, tags))
    return paths


def read_conll_tags(path: str) -> list[list[str]]:
    """The tags (last column) of a CoNLL file, per sentence: how test_predictions.conll is read
    back (tokens may be empty, so only the column after the last tab counts)."""
    with tf.io.gfile.GFile(path, "r") as reader:
        text = reader.read()
    sentences, current = [], []
    for line in text.split("\n"):
        if not line.strip():
            if current:
                sentences.append(current)
            current = []
            continue
        current.append(line.rsplit("\t", 1)[-1] if "\t" in line else line.split()[-1])
    if current:
        sentences.append(current)
    return sentences
