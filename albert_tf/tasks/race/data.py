"""RACE multiple choice: reading articles, 4-choice features and their TFRecords (spec §10).

Data layout: `data_dir/RACE/{train,dev,test}/{middle,high}/`, either one `all.txt` per level (one
article JSON per line, what the original reads) or the per-article `N.txt` files of the official
download (one JSON each), which the original needed concatenated first.
"""

from __future__ import annotations

from albert_tf.errors import InputError
import dataclasses
import json
import os
import re

import tensorflow as tf

from albert_tf.data.schema import decode, int_feature
from albert_tf.tokenization import preprocess_text

LABELS = ("A", "B", "C", "D")
LEVELS = ("middle", "high")
NUM_CHOICES = 4


class RaceFormatError(InputError):
    """A RACE file that is not JSON or lacks a field."""


@dataclasses.dataclass
class RaceExample:
    example_id: str
    context: str
    endings: list  # four question+option texts
    label: int
    level: str


def level_files(data_dir, split: str, level: str) -> list:
    """`all.txt` if present, else the per-article files sorted by their number."""
    folder = os.path.join(data_dir, "RACE", split, level)
    if not tf.io.gfile.isdir(folder):
        raise RaceFormatError(f"RACE folder not found: {folder}")
    names = tf.io.gfile.listdir(folder)
    if "all.txt" in names:
        return [os.path.join(folder, "all.txt")]
    articles = [n for n in names if n.endswith(".txt")]
    if not articles:
        raise RaceFormatError(f"{folder}: neither all.txt nor per-article .txt files")
    key = lambda n: (int(m.group()) if (m := re.match(r"\d+", n)) else float("inf"), n)  # noqa
    return [os.path.join(folder, n) for n in sorted(articles, key=key)]


def _articles(path):
    """Articles of one file: one JSON object per line (all.txt) or one object (per-article)."""
    with tf.io.gfile.GFile(path, "r") as reader:
        text = reader.read()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        pass
    articles = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            articles.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise RaceFormatError(f"{path}:{number}: not valid JSON ({error.msg})") from None
    return articles


def _choice_texts(question: str, options: list) -> list:
    # cloze questions mark the gap with "_"; others get the option appended
    return [question.replace("_", option) if "_" in question else " ".join([question, option])
            for option in options]


def read_race_examples(data_dir, split: str, do_lower_case: bool = True,
                       high_only: bool = False, middle_only: bool = False) -> list:
    """Examples (one per question) of the middle then high levels of `split`."""
    process = lambda text: preprocess_text(text, lower=do_lower_case)  # noqa: E731
    examples = []
    for level in LEVELS:
        if (level == "middle" and high_only) or (level == "high" and middle_only):
            continue
        for path in level_files(data_dir, split, level):
            for article in _articles(path):
                try:
                    context = process(article["article"])
                    rows = zip(article["questions"], article["options"], article["answers"])
                    for question, options, answer in rows:
                        if len(options) != NUM_CHOICES or answer not in LABELS:
                            raise RaceFormatError(f"{path}: article {article.get('id')}: need 4 "
                                                  f"options and an answer in A-D, got "
                                                  f"{len(options)} options, answer {answer!r}")
                        endings = _choice_texts(process(question), [process(o) for o in options])
                        examples.append(RaceExample(str(article["id"]), context, endings,
                                                    LABELS.index(answer), level))
                except KeyError as error:
                    raise RaceFormatError(f"{path}: article lacks field {error}") from None
    return examples


@dataclasses.dataclass
class RaceFeature:
    input_ids: list  # NUM_CHOICES rows of max_seq_length
    input_mask: list
    segment_ids: list
    label_id: int
    is_real_example: bool = True


def convert_example(example: RaceExample, tokenizer, max_seq_length: int,
                    max_qa_length: int) -> RaceFeature:
    """`[CLS] context [SEP] ending [SEP]` per choice; the ending keeps its last `max_qa_length`
    pieces and the context is cut from its end to fit."""
    context_tokens = tokenizer.tokenize(example.context)
    rows = {"input_ids": [], "input_mask": [], "segment_ids": []}
    for ending in example.endings:
        ending_tokens = tokenizer.tokenize(ending)[-max_qa_length:]
        context = context_tokens[:max(max_seq_length - 3 - len(ending_tokens), 0)]
        tokens = ["[CLS]"] + context + ["[SEP]"] + ending_tokens + ["[SEP]"]
        ids = tokenizer.convert_tokens_to_ids(tokens)
        padding = max_seq_length - len(ids)
        rows["input_ids"].append(ids + [0] * padding)
        rows["input_mask"].append([1] * len(ids) + [0] * padding)
        rows["segment_ids"].append([0] * (len(context) + 2) + [1] * (len(ending_tokens) + 1) +
                                   [0] * padding)
    return RaceFeature(label_id=example.label, **rows)


def write_race_tfrecord(examples, tokenizer, max_seq_length: int, max_qa_length: int,
                        output_file) -> int:
    """Original record layout ([4·S] flattened ids/mask/segments, `label_ids`,
    `is_real_example`), written to a temporary name and renamed when complete."""
    output_file = os.fspath(output_file)
    tmp = f"{output_file}.tmp-{os.getpid()}"
    with tf.io.TFRecordWriter(tmp) as writer:
        for example in examples:
            feature = convert_example(example, tokenizer, max_seq_length, max_qa_length)
            values = {name: int_feature(sum(getattr(feature, name), []))
                      for name in ("input_ids", "input_mask", "segment_ids")}
            values["label_ids"] = int_feature([feature.label_id])
            values["is_real_example"] = int_feature([int(feature.is_real_example)])
            writer.write(tf.train.Example(
                features=tf.train.Features(feature=values)).SerializeToString())
    tf.io.gfile.rename(tmp, output_file, overwrite=True)
    return len(examples)


def race_dataset(input_file, max_seq_length: int, is_training: bool, batch_size: int,
                 drop_remainder: bool = False) -> tf.data.Dataset:
    """Batches of {input_ids/input_mask/segment_ids [B,4,S], label_ids, is_real_example}."""
    flat = tf.io.FixedLenFeature([NUM_CHOICES * max_seq_length], tf.int64)
    spec = {"input_ids": flat, "input_mask": flat, "segment_ids": flat,
            "label_ids": tf.io.FixedLenFeature([], tf.int64),
            "is_real_example": tf.io.FixedLenFeature([], tf.int64)}

    def parse(record):
        row = decode(record, spec)
        for name in ("input_ids", "input_mask", "segment_ids"):
            row[name] = tf.reshape(row[name], [NUM_CHOICES, max_seq_length])
        return row
    data = tf.data.TFRecordDataset(input_file)
    if is_training:
        data = data.repeat().shuffle(buffer_size=100)
    return data.map(parse).batch(batch_size, drop_remainder=drop_remainder)
