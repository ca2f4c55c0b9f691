"""Your own files: CSV, TSV and JSON-lines files read into `InputExample`s.

* CSV per RFC 4180 (Python's `csv` module: quoted fields, embedded commas, quotes and newlines),
  with a header row naming the columns. TSV as it is: one row a line, fields split on tabs, a
  `"` is text like any other (as the GLUE reader and the original read TSV); `--quotechar`
  turns CSV-style quoting on for a TSV file written with it. JSONL one JSON object per line
  (blank lines skipped), its keys being the columns.
* Columns are chosen by name (`--text_a_column`, `--text_b_column`, `--label_column`,
  `--id_column`); a test file may lack the label column, and training and dev files the id
  column. Ids default to the row number (from 1).
* Labels are strings (class names) or, for `--task_type=regression`, numbers; for
  `--task_type=multi_label` a set of names joined by `--label_separator` (empty: no label),
  or in JSONL a list of names (`albert_tf.labels` checks them against the label list).

Nothing is coerced silently: a JSONL text must be a JSON string, a class label a string or a whole
number (1 is the class "1"; true, 0.0 and null are refused), an id a string or a whole number; a
regression target must be a finite number (nan and inf are refused here, not found as a NaN loss
later); a header must name each column once (a JSON object each key once); a test file's ids must
be unique and not empty. A label's surrounding spaces are dropped, and two training labels that
differ only in case (`Pos`, `pos`) are refused unless `--label_list` names both.

Every bad row is one `CustomDataError` naming the file, the line (the JSON line for JSONL; the
first line of a CSV record that spans several), and the column: a missing column, an empty text,
a label not in `--label_list` or never seen in training, a non-numeric regression target, bytes
that are not UTF-8. A training file with fewer than two classes is an error too.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math

import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import InputError
from albert_tf.io_utils import read_utf8
from albert_tf.tasks.classification.config import CUSTOM_FORMATS as FORMATS
from albert_tf.tasks.classification.examples import InputExample


class CustomDataError(InputError):
    """A row of a --train_file/--dev_file/--test_file that cannot be read."""


@dataclasses.dataclass(frozen=True)
class Columns:
    """Which column holds what (`--text_a_column`, ...); None: not read."""

    text_a: str = "text"
    text_b: str | None = None
    label: str | None = "label"
    id: str | None = None

    def flags(self) -> dict:
        """Field → (flag name, column name) for the columns read."""
        return {field: (f"--{field}_column", getattr(self, field))
                for field in ("text_a", "text_b", "label", "id") if getattr(self, field)}


@dataclasses.dataclass
class Row:
    line: int          # 1-based line of the file where the row starts
    values: dict       # column name → value (str for CSV/TSV; any JSON value for JSONL)


def _check_exists(path: str) -> None:
    if not tf.io.gfile.exists(path):
        raise CustomDataError(f"{path}: no such file")


def read_rows(path: str, file_format: str, quotechar: str | None = None) -> list[Row]:
    """The rows of a CSV/TSV (header required) or JSONL file, with their line numbers.
    `quotechar`: CSV-style quoting with this character (CSV: `"` when None; TSV: none)."""
    if file_format not in FORMATS:
        raise ValueError(f"unknown format {file_format!r}; expected one of {FORMATS}")
    _check_exists(path)
    try:
        text = read_utf8(path)
    except CustomDataError:
        raise
    except InputError as error:  # not UTF-8: file, line and column
        raise CustomDataError(str(error)) from None
    if file_format == "jsonl":
        return _jsonl_rows(path, text)
    if file_format == "tsv" and not quotechar:
        records = _tsv_records(text)
    else:
        records = _quoted_records(path, text, file_format, quotechar)
    rows, header = [], None
    for line, record in records:
        if not record or record == [""]:
            continue  # a blank line
        if header is None:
            header = [name.strip() for name in record]
            _check_header(path, line, header)
            continue
        if len(record) != len(header):
            raise CustomDataError(_field_count(path, line, file_format, record, header))
        rows.append(Row(line, dict(zip(header, record))))
    if header is None:
        raise CustomDataError(f"{path}: empty file (expected a header row naming the columns)")
    if not rows:
        raise CustomDataError(f"{path}:1: only a header row; no examples follow")
    return rows


def _tsv_records(text: str):
    """(line, fields) of a TSV file read as it is: no quote processing at all."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r").split("\t")


def _quoted_records(path: str, text: str, file_format: str, quotechar: str | None):
    """(first line, fields) of a CSV-quoted file (a record may span several lines)."""
    delimiter = "," if file_format == "csv" else "\t"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                        quotechar=quotechar or '"', strict=True)
    start = 1
    try:
        for record in reader:
            line, start = start, reader.line_num + 1
            yield line, record
    except csv.Error as error:
        line = reader.line_num
        bad = text.split("\n")[line - 1] if 0 < line <= text.count("\n") + 1 else ""
        column = bad.count(delimiter) + 1 if bad else 1
        quoting = f" with --quotechar={quotechar}" if quotechar else ""
        raise CustomDataError(f"{path}:{line}: column {column}: not valid "
                              f"{file_format.upper()}{quoting} ({error})") from None


def _field_count(path, line, file_format, record, header) -> str:
    """One line naming the first column where a row and its header part."""
    if len(record) > len(header):
        where = f"column {len(header) + 1} is beyond the header's last"
        if file_format == "tsv":
            where += " (a tab inside a text splits it)"
    else:
        where = f"column {len(record) + 1} ({header[len(record)]!r}) is missing"
    return (f"{path}:{line}: {len(record)} {file_format.upper()} fields but the header has "
            f"{len(header)} ({', '.join(header)}); {where}")


def _jsonl_rows(path: str, text: str) -> list[Row]:
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=_object_once)
        except json.JSONDecodeError as error:
            raise CustomDataError(f"{path}:{number}: column {error.colno}: not valid JSON "
                                  f"({error.msg})") from None
        except _RepeatedKey as repeated:
            raise CustomDataError(f"{path}:{number}: key {repeated.args[0]!r} appears twice in "
                                  "the object (the last one would win)") from None
        if not isinstance(value, dict):
            raise CustomDataError(f"{path}:{number}: expected a JSON object per line, got "
                                  f"{type(value).__name__}")
        rows.append(Row(number, value))
    if not rows:
        raise CustomDataError(f"{path}: empty file (expected one JSON object per line)")
    return rows


def _cell(value) -> str:
    """A JSON value as text (strings as they are, numbers and booleans as JSON writes them)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


@dataclasses.dataclass
class CustomReader:
    """Reads one file into `InputExample`s; `process_text` is the tokenizer's preprocessing
    (None: the text as it is, decoded)."""

    file_format: str
    columns: Columns
    regression: bool = False
    process_text: object = None
    multi_label: bool = False
    separator: str = ","
    quotechar: str | None = None

    def __post_init__(self):
        self.process_text = self.process_text or tokenization.convert_to_unicode

    def _missing(self, path, row, name, flag, header) -> CustomDataError:
        what = "key" if self.file_format == "jsonl" else "column"
        line = row.line if self.file_format == "jsonl" else 1  # CSV/TSV: the header's
        return CustomDataError(f"{path}:{line}: no {what} {name!r} ({flag}); the "
                               f"{'object' if self.file_format == 'jsonl' else 'header'} has "
                               f"{', '.join(map(str, header)) or 'nothing'}")

    def read(self, path: str, split: str, with_labels: bool = True) -> list[InputExample]:
        """Examples of `path`; `with_labels=False` (a test file) reads labels only when the
        label column is there, else leaves them None."""
        rows = read_rows(path, self.file_format, self.quotechar)
        flags = self.columns.flags()
        first = rows[0].values
        if not with_labels and "label" in flags and flags["label"][1] not in first:
            flags.pop("label")
        if split != "test" and "id" in flags and flags["id"][1] not in first:
            flags.pop("id")  # ids matter for test_predictions.tsv only
        examples, ids = [], {}
        for index, row in enumerate(rows, start=1):
            values = {}
            for field, (flag, name) in flags.items():
                if name not in row.values:
                    raise self._missing(path, row, name, flag, list(row.values))
                what = "key" if self.file_format == "jsonl" else "column"
                value, where = row.values[name], f"{path}:{row.line}: {what} {name!r} ({flag})"
                if field == "label" and self.multi_label:  # a list, or names joined
                    values[field] = self._label_set(value, where)
                    continue
                if self.file_format == "jsonl":
                    _check_json_value(value, field, self.regression, where)
                values[field] = _cell(value)
            where = f"{path}:{row.line}"
            for field in ("text_a", "text_b"):
                if field in values and not values[field].strip():
                    raise CustomDataError(f"{where}: column {flags[field][1]!r} ({flags[field][0]})"
                                          f": empty text")
            label, source = None, where
            if "label" in values and self.multi_label:
                label = values["label"]
                source = f"{where}: column {flags['label'][1]!r} ({flags['label'][0]})"
            elif "label" in values:
                label = values["label"].strip()
                column = f"column {flags['label'][1]!r} ({flags['label'][0]})"
                source = f"{where}: {column}"
                if self.regression:
                    try:
                        label = float(label)
                    except ValueError:
                        raise CustomDataError(f"{where}: {column}: regression target {label!r} "
                                              f"is not a number") from None
                    if not math.isfinite(label):
                        raise CustomDataError(f"{where}: {column}: regression target "
                                              f"{values['label'].strip()!r} is not a finite "
                                              "number")
                elif not label:
                    raise CustomDataError(f"{where}: {column}: empty label")
            guid = values.get("id", str(index))
            if split == "test" and "id" in values:
                _check_test_id(guid, row.line, ids, f"{where}: column {flags['id'][1]!r} "
                                                    f"({flags['id'][0]})")
            examples.append(InputExample(
                guid, self.process_text(values["text_a"]),
                self.process_text(values["text_b"]) if "text_b" in values else None, label,
                source))
        return examples

    def _label_set(self, value, where: str) -> tuple:
        """A multi-label cell as its names (duplicates once, in their order)."""
        if self.file_format == "jsonl" and isinstance(value, list):
            for item in value:
                _check_json_value(item, "label", False, where)
            names = [_cell(item).strip() for item in value]
        else:
            if self.file_format == "jsonl":
                _check_json_value(value, "label", False, where)
            names = [part.strip() for part in _cell(value).split(self.separator)]
        return tuple(dict.fromkeys(name for name in names if name))


# ----------------------------------------------------------------------------- no silent coercion
def _check_header(path: str, line: int, header: list) -> None:
    columns = {}
    for number, name in enumerate(header, start=1):
        if name and name in columns:  # unnamed columns cannot be chosen by a flag anyway
            raise CustomDataError(f"{path}:{line}: column {name!r} appears twice in the header "
                                  f"(columns {columns[name]} and {number}); the last one would "
                                  "win")
        columns.setdefault(name, number)


class _RepeatedKey(Exception):
    """A JSON object naming a key twice (json.loads would keep the last)."""


def _object_once(pairs) -> dict:
    keys = set()
    for key, _ in pairs:
        if key in keys:
            raise _RepeatedKey(key)
        keys.add(key)
    return dict(pairs)


def _json_kind(value) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"number {json.dumps(value)}"
    return {list: "list", dict: "object", str: "string"}.get(type(value), type(value).__name__)


def _check_json_value(value, field: str, regression: bool, where: str) -> None:
    """A JSONL value is used as written, or refused: never trained on as its JSON text."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if field in ("text_a", "text_b") and not isinstance(value, str):
        raise CustomDataError(f"{where}: expected a string, got {_json_kind(value)}")
    if field == "id" and not (isinstance(value, str) or whole):
        raise CustomDataError(f"{where}: expected a string or a whole number, got "
                              f"{_json_kind(value)}")
    if field == "label" and regression and not (
            isinstance(value, (str, float)) or whole):
        raise CustomDataError(f"{where}: {_json_kind(value)} is not a regression target (a "
                              "number)")
    if field == "label" and not regression and not (isinstance(value, str) or whole):
        hint = "; a list of labels needs --task_type=multi_label" if isinstance(value, list) \
            else ""
        raise CustomDataError(f"{where}: {_json_kind(value)} is not a class label (a string, or "
                              f"a whole number such as 1){hint}")


def _check_test_id(guid: str, line: int, ids: dict, where: str) -> None:
    """An id names its test row (and the row's predictions): each must be there, once."""
    if not guid.strip():
        raise CustomDataError(f"{where}: empty id")
    if guid in ids:
        raise CustomDataError(f"{where}: id {guid!r} repeats line {ids[guid]}")
    ids[guid] = line
