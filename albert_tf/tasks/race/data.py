"""RACE multiple choice: reading articles, 4-choice features and their TFRecords.

Data layout: `data_dir/RACE/{train,dev,test}/{middle,high}/`, either one `all.txt` per level (one
article JSON per line, what the original reads) or the per-article `N.txt` files of the official
download (one JSON each), which the original needed concatenated first. Each question becomes
four `[CLS] article [SEP] question+option [SEP]` rows; a TFRecord cache of a split is keyed by
its files' bytes and the settings (`cached_tfrecord`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

import tensorflow as tf

from albert_tf.data import feature_cache
from albert_tf.data.schema import decode, int_feature
from albert_tf.errors import InputError
from albert_tf.io_utils import atomic_output, read_utf8
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
    text = read_utf8(path)
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


def selected_levels(high_only: bool = False, middle_only: bool = False) -> list:
    return [level for level in LEVELS
            if not ((level == "middle" and high_only) or (level == "high" and middle_only))]


def split_files(data_dir, split: str, high_only: bool = False, middle_only: bool = False) -> list:
    """The files read for `split`, middle level then high."""
    return [path for level in selected_levels(high_only, middle_only)
            for path in level_files(data_dir, split, level)]


def read_race_examples(data_dir, split: str, do_lower_case: bool = True,
                       high_only: bool = False, middle_only: bool = False) -> list:
    """Examples (one per question) of the middle then high levels of `split`."""
    process = lambda text: preprocess_text(text, lower=do_lower_case)  # noqa: E731
    examples = []
    for level in selected_levels(high_only, middle_only):
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
                        output_file, atomic: bool = True) -> int:
    """Original record layout ([4·S] flattened ids/mask/segments, `label_ids`,
    `is_real_example`), written through `io_utils.atomic_output` (`atomic=False`: straight to
    `output_file`, already a temporary name)."""
    if atomic:
        with atomic_output(output_file) as tmp:
            return write_race_tfrecord(examples, tokenizer, max_seq_length, max_qa_length, tmp,
                                       atomic=False)
    with tf.io.TFRecordWriter(os.fspath(output_file)) as writer:
        for example in examples:
            feature = convert_example(example, tokenizer, max_seq_length, max_qa_length)
            values = {name: int_feature(sum(getattr(feature, name), []))
                      for name in ("input_ids", "input_mask", "segment_ids")}
            values["label_ids"] = int_feature([feature.label_id])
            values["is_real_example"] = int_feature([int(feature.is_real_example)])
            writer.write(tf.train.Example(
                features=tf.train.Features(feature=values)).SerializeToString())
    return len(examples)


def cache_key(data_dir, split: str, tokenizer, max_seq_length: int, max_qa_length: int,
              do_lower_case: bool = True, high_only: bool = False, middle_only: bool = False,
              levels=None) -> dict:
    """What a split's TFRecord depends on: its files' bytes and every setting."""
    return {
        "format_version": feature_cache.FORMAT_VERSION,
        "task": "race",
        "split": split,
        "source_sha256": feature_cache.files_digest(split_files(data_dir, split, high_only,
                                                                middle_only)),
        **feature_cache.tokenizer_identity(getattr(tokenizer, "spm_model_file", None),
                                           getattr(tokenizer, "vocab_file", None)),
        "max_seq_length": int(max_seq_length),
        "max_qa_length": int(max_qa_length),
        "do_lower_case": bool(do_lower_case),
        "high_only": bool(high_only),
        "middle_only": bool(middle_only),
        "levels": sorted(levels) if levels is not None else None,
    }


def cached_tfrecord(path, data_dir, split: str, tokenizer, max_seq_length: int,
                    max_qa_length: int, do_lower_case: bool = True, high_only: bool = False,
                    middle_only: bool = False, levels=None) -> tuple:
    """(path, examples) of `split` (restricted to `levels`, if given): the TFRecord at `path` is
    reused only when it was built from the same files with the same settings, else rewritten."""
    examples = read_race_examples(data_dir, split, do_lower_case, high_only, middle_only)
    if levels is not None:
        examples = [e for e in examples if e.level in levels]
    if not examples:
        wanted = levels or selected_levels(high_only, middle_only)
        raise RaceFormatError(f"{os.path.join(data_dir, 'RACE', split)}: no questions "
                              f"(levels {', '.join(wanted)})")
    key = cache_key(data_dir, split, tokenizer, max_seq_length, max_qa_length, do_lower_case,
                    high_only, middle_only, levels)
    feature_cache.cached(path, key, lambda tmp: write_race_tfrecord(
        examples, tokenizer, max_seq_length, max_qa_length, tmp, atomic=False))
    return os.fspath(path), examples


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
