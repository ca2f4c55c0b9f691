"""Tagged sentences from CoNLL or JSONL files, and the tag set.

CoNLL (any file not named *.jsonl / *.json): one token per line, its tag in the LAST column, a
blank line between sentences; `-DOCSTART-` lines are skipped (they end a sentence). A line with
a tab is split on tabs only, so a token may be empty or hold spaces (real tweet corpora have
both); a line without one is split on whitespace (CoNLL-2003's 4 columns work). A test file may
have the token column alone.
JSONL: one object per line, `{"tokens": [...], "tags": [...]}` (`tags` optional in a test file).

Every bad row is one `TaggedDataError` naming the file and line: a missing tag column, a tag
column in some rows of a test file only, an empty tag, a tag with spaces, a JSON line that is
not an object with a list of strings under "tokens" (and "tags", as many), an empty sentence.
"""

from __future__ import annotations

import dataclasses
import json
import os

from albert_tf.errors import InputError
from albert_tf.io_utils import read_utf8

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
DOCSTART = "-DOCSTART-"


class TaggedDataError(InputError):
    """A row of a --train_file/--dev_file/--test_file that cannot be read."""


@dataclasses.dataclass
class Sentence:
    tokens: list
    tags: list | None      # None: the file has no tags (a test file)
    lines: list            # the 1-based line of each token (JSONL: the sentence's line)
    path: str

    def where(self, index: int = 0) -> str:
        return f"{self.path}:{self.lines[index]}"


def is_jsonl(path: str) -> bool:
    return os.fspath(path).lower().endswith(JSONL_SUFFIXES)


def read_sentences(path: str, need_tags: bool = True) -> list[Sentence]:
    """The sentences of a CoNLL or JSONL file (by its name); `need_tags=False` (a test file)
    accepts a file without tags (then every `Sentence.tags` is None)."""
    path = os.fspath(path)
    try:
        text = read_utf8(path)
    except InputError as error:  # not UTF-8: file, line and column
        raise TaggedDataError(str(error)) from None
    sentences = (_jsonl(path, text, need_tags) if is_jsonl(path)
                 else _conll(path, text, need_tags))
    if not sentences:
        raise TaggedDataError(f"{path}: no sentences (expected "
                              f"{'one JSON object per line' if is_jsonl(path) else 'token<TAB>tag lines'})")
    return sentences


def _columns(line: str) -> list[str]:
    return line.split("\t") if "\t" in line else line.split()


def _check_tag(tag: str, where: str) -> str:
    tag = tag.strip()
    if not tag:
        raise TaggedDataError(f"{where}: empty tag (the tag is the last column)")
    if len(tag.split()) > 1:
        raise TaggedDataError(f"{where}: tag {tag!r} has spaces (the tag is the last column)")
    return tag


def _conll(path: str, text: str, need_tags: bool) -> list[Sentence]:
    sentences, tokens, tags, lines = [], [], [], []
    has_tags = None  # fixed by the first token line

    def close():
        if tokens:
            sentences.append(Sentence(list(tokens), list(tags) if has_tags else None,
                                      list(lines), path))
        tokens.clear(), tags.clear(), lines.clear()

    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            close()
            continue
        columns = _columns(line)
        if columns[0].strip() == DOCSTART:
            close()
            continue
        where = f"{path}:{number}"
        if has_tags is None:
            has_tags = len(columns) > 1
            if need_tags and not has_tags:
                raise TaggedDataError(f"{where}: expected a token and a tag (columns separated "
                                      f"by tabs or spaces), got one column {line!r:.60}")
        if has_tags and len(columns) < 2:
            raise TaggedDataError(f"{where}: no tag column (earlier lines have one): "
                                  f"{line!r:.60}")
        if not has_tags and len(columns) > 1:
            raise TaggedDataError(f"{where}: {len(columns)} columns, but the first token line "
                                  f"of this file has no tag column")
        tokens.append(columns[0])
        lines.append(number)
        if has_tags:
            tags.append(_check_tag(columns[-1], where))
    close()
    return sentences


def _string_list(value, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaggedDataError(f"{where}: {key!r} must be a list of strings, got "
                              f"{json.dumps(value, ensure_ascii=False)[:60]}")
    return value


def _jsonl(path: str, text: str, need_tags: bool) -> list[Sentence]:
    sentences, has_tags = [], None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaggedDataError(f"{where}: column {error.colno}: not valid JSON "
                                  f"({error.msg})") from None
        if not isinstance(row, dict) or "tokens" not in row:
            raise TaggedDataError(f"{where}: expected an object with \"tokens\" (and \"tags\")")
        tokens = _string_list(row["tokens"], "tokens", where)
        if not tokens:
            raise TaggedDataError(f"{where}: \"tokens\" is empty")
        if has_tags is None:
            has_tags = "tags" in row
        if need_tags and "tags" not in row:
            raise TaggedDataError(f"{where}: no \"tags\"")
        if has_tags != ("tags" in row):
            raise TaggedDataError(f"{where}: {'no' if has_tags else 'a'} \"tags\" key, unlike "
                                  "the first line of the file")
        tags = None
        if has_tags:
            tags = [_check_tag(t, where) for t in _string_list(row["tags"], "tags", where)]
            if len(tags) != len(tokens):
                raise TaggedDataError(f"{where}: {len(tokens)} tokens but {len(tags)} tags")
        sentences.append(Sentence(tokens, tags, [number] * len(tokens), path))
    return sentences


# ---------------------------------------------------------------------------------- the tags
def tag_pairs(sentences) -> list[tuple[str, str]]:
    """(tag, where) of every tag of `sentences` (what `albert_tf.labels` derives and checks)."""
    return [(tag, sentence.where(index)) for sentence in sentences
            for index, tag in enumerate(sentence.tags or ())]


def has_chunk_tags(labels) -> bool:
    """Whether the tag set names entities (B-/I-/E-/S- prefixes: IOB1, IOB2, IOBES): then the
    entity F1 picks the best checkpoint; else (POS tags) the token accuracy does."""
    return any(len(t) > 2 and t[1] == "-" and t[0] in "BIES" for t in labels)
