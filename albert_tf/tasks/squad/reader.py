"""SQuAD JSON → `SquadExample`s (one per question), as the original `read_squad_examples`."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Optional

from absl import logging

from albert_tf.errors import InputError
from albert_tf.io_utils import read_utf8


class SquadFormatError(InputError):
    """A SQuAD file that is not valid JSON or lacks a field the task needs."""


@dataclasses.dataclass
class SquadExample:
    """One question on one paragraph. `start_position` is a character offset into the raw
    `paragraph_text` (−1 for impossible questions, None at prediction time)."""

    qas_id: str
    question_text: str
    paragraph_text: str
    orig_answer_text: Optional[str] = None
    start_position: Optional[int] = None
    end_position: Optional[int] = None
    is_impossible: bool = False


def load_squad_json(input_file) -> dict:
    """The whole SQuAD file as a dict; malformed JSON or bytes that are not UTF-8 name the
    file, line and column."""
    text = read_utf8(input_file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SquadFormatError(f"{input_file}: not valid JSON ({error.msg} at line {error.lineno}, "
                               f"column {error.colno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise SquadFormatError(f"{input_file}: expected an object with a 'data' list of articles")
    return data


def _field(obj, key, where, kind=None):
    if not isinstance(obj, dict) or key not in obj:
        raise SquadFormatError(f"{where}: missing field '{key}'")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        raise SquadFormatError(f"{where}: field '{key}' should be {kind.__name__}, "
                               f"got {type(value).__name__}")
    return value


def examples_from_json(data: dict, is_training: bool, source="<json>",
                       version_2_with_negative: Optional[bool] = None) -> list[SquadExample]:
    """Examples of every question, in file order.

    Training: a possible question needs exactly one answer (as the original); its text is kept
    and `start_position` is the answer's `answer_start`. The original does not check that the
    text is really at that offset; we keep its behaviour (the span [start, start + len(text))
    is the target) but log a warning, and reject offsets outside the paragraph.

    `version_2_with_negative=False` (SQuAD v1.1 training) refuses questions without an answer
    (`is_impossible`, or no answers), which only v2.0 can train on, naming the first one and the
    flag to pass; None accepts both kinds.
    """
    examples = []
    for a, article in enumerate(_field(data, "data", source, list)):
        for p, paragraph in enumerate(_field(article, "paragraphs", f"{source}: data[{a}]", list)):
            where = f"{source}: data[{a}].paragraphs[{p}]"
            context = _field(paragraph, "context", where, str)
            for q, qa in enumerate(_field(paragraph, "qas", where, list)):
                qwhere = f"{where}.qas[{q}]"
                qas_id = str(_field(qa, "id", qwhere))
                question = _field(qa, "question", qwhere, str)
                example = SquadExample(qas_id, question, context)
                if is_training:
                    if version_2_with_negative is False:
                        _refuse_unanswerable(qa, source, qas_id)
                    _set_training_target(example, qa, f"{qwhere} (id {qas_id})")
                examples.append(example)
    return examples


def _refuse_unanswerable(qa: dict, source, qas_id: str) -> None:
    answers = qa.get("answers") if isinstance(qa, dict) else None
    if qa.get("is_impossible") or (isinstance(answers, list) and not answers):
        raise SquadFormatError(
            f"{source}: question {qas_id} has no answer (is_impossible): this is SQuAD v2.0 "
            f"data; pass --version_2_with_negative to train on it")


def _set_training_target(example: SquadExample, qa: dict, where: str) -> None:
    example.is_impossible = bool(qa.get("is_impossible", False))
    if example.is_impossible:
        example.start_position, example.orig_answer_text = -1, ""
        return
    answers = _field(qa, "answers", where, list)
    if len(answers) != 1:
        raise SquadFormatError(f"{where}: for training, each question should have exactly 1 "
                               f"answer, found {len(answers)}")
    text = _field(answers[0], "text", where, str)
    start = _field(answers[0], "answer_start", where, int)
    if start < 0 or start + len(text) > len(example.paragraph_text):
        raise SquadFormatError(f"{where}: answer_start {start} with answer length {len(text)} lies "
                               f"outside the context ({len(example.paragraph_text)} characters)")
    if example.paragraph_text[start:start + len(text)] != text:
        logging.warning("%s: answer %r is not at answer_start %d (context has %r there); "
                        "training on the span at answer_start, as the original does", where, text,
                        start, example.paragraph_text[start:start + len(text)])
    example.orig_answer_text, example.start_position = text, start


def read_squad_examples(input_file, is_training: bool,
                        version_2_with_negative: Optional[bool] = None) -> list[SquadExample]:
    return examples_from_json(load_squad_json(input_file), is_training, source=str(input_file),
                              version_2_with_negative=version_2_with_negative)


def shuffle_training_examples(examples: list) -> list:
    """The original pre-shuffles training examples with a fixed seed before writing features."""
    examples = list(examples)
    random.Random(12345).shuffle(examples)
    return examples


def split_by_article(data: dict, first_answer_only: bool = True) -> tuple[dict, dict]:
    """Two SQuAD dicts holding the even- and odd-numbered articles (for fine-tuning on one half of
    a dev set and predicting the other). Training needs one answer per question, so with
    `first_answer_only` the first half keeps only each question's first answer."""
    train = {"version": data.get("version"), "data": []}
    held_out = {"version": data.get("version"), "data": []}
    for index, article in enumerate(data["data"]):
        if index % 2:
            held_out["data"].append(article)
            continue
        if first_answer_only:
            article = json.loads(json.dumps(article))
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    qa["answers"] = qa["answers"][:1]
        train["data"].append(article)
    return train, held_out
