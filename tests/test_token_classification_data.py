"""Tagged sentences from CoNLL and JSONL files: the layouts real corpora have (tabs, spaces,
CoNLL-2003's 4 columns, -DOCSTART-, empty tokens and tokens with spaces in tweets), test files
without tags, one error naming file and line for every bad row, and the tag set."""

import json

import pytest

from albert_tf import labels
from albert_tf.tasks.token_classification import data as D
from support.paths import DATA


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_conll_tabs_spaces_and_docstart(tmp_path):
    path = _write(tmp_path, "a.conll", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ "
                  "B-VP O\n\n\nPeter NNP B-NP B-PER\r\nBlackburn NNP I-NP I-PER\n")
    sentences = D.read_sentences(path)
    assert [s.tokens for s in sentences] == [["EU", "rejects"], ["Peter", "Blackburn"]]
    assert [s.tags for s in sentences] == [["B-ORG", "O"], ["B-PER", "I-PER"]]
    assert sentences[1].lines == [7, 8] and sentences[1].where(1) == f"{path}:8"


def test_conll_tab_separated_keeps_empty_tokens_and_tokens_with_spaces(tmp_path):
    # As the Broad Twitter Corpus has them: "\tO" (an empty token), "ke s\tO", " \tO".
    path = _write(tmp_path, "t.conll", "\tO\n\nke s\tO\n \tO\nBob\tB-PER\n")
    sentences = D.read_sentences(path)
    assert [s.tokens for s in sentences] == [[""], ["ke s", " ", "Bob"]]
    assert sentences[1].tags == ["O", "O", "B-PER"]


def test_test_file_without_tags(tmp_path):
    path = _write(tmp_path, "test.conll", "Peter\nBlackburn\n\nBrussels\n")
    sentences = D.read_sentences(path, need_tags=False)
    assert [s.tokens for s in sentences] == [["Peter", "Blackburn"], ["Brussels"]]
    assert all(s.tags is None for s in sentences)


def test_jsonl(tmp_path):
    rows = [{"tokens": ["Ada", "Lovelace"], "tags": ["B-PER", "I-PER"]},
            {"tokens": ["in", "London"], "tags": ["O", "B-LOC"], "id": 7}]
    path = _write(tmp_path, "d.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    sentences = D.read_sentences(path)
    assert [s.tokens for s in sentences] == [r["tokens"] for r in rows]
    assert sentences[1].where() == f"{path}:2"
    test = _write(tmp_path, "t.jsonl", json.dumps({"tokens": ["x"]}) + "\n")
    assert D.read_sentences(test, need_tags=False)[0].tags is None


@pytest.mark.parametrize("name, text, need_tags, where, words", [
    ("a.conll", "Peter\tB-PER\nBlackburn\n", True, 2, "no tag column"),
    ("a.conll", "Peter\nBlackburn\n", True, 1, "expected a token and a tag"),
    ("a.conll", "Peter\nBlackburn B-PER\n", False, 2, "first token line of this file has no tag"),
    ("a.conll", "Peter\tB-PER\nBlackburn\t \n", True, 2, "empty tag"),
    ("a.conll", "Peter\tB PER\n", True, 1, "has spaces"),
    ("a.conll", "ok\tO\n\xff\tO\n", True, 2, "not valid UTF-8"),
    ("a.jsonl", '{"tokens": ["a"], "tags": ["O"]}\n{"tokens": ["a"]\n', True, 2, "not valid JSON"),
    ("a.jsonl", '{"tokens": ["a", "b"], "tags": ["O"]}\n', True, 1, "2 tokens but 1 tags"),
    ("a.jsonl", '{"tokens": [], "tags": []}\n', True, 1, '"tokens" is empty'),
    ("a.jsonl", '{"tokens": ["a", 3], "tags": ["O", "O"]}\n', True, 1, "list of strings"),
    ("a.jsonl", '["a"]\n', True, 1, 'expected an object with "tokens"'),
    ("a.jsonl", '{"tokens": ["a"]}\n', True, 1, 'no "tags"'),
    ("a.jsonl", '{"tokens": ["a"]}\n{"tokens": ["b"], "tags": ["O"]}\n', False, 2,
     "unlike the first line"),
])
def test_bad_rows_name_file_and_line(tmp_path, name, text, need_tags, where, words):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if "\xff" in text else text.encode("utf-8"))
    with pytest.raises(D.TaggedDataError, match=rf":{where}: ") as error:
        D.read_sentences(str(path), need_tags)
    message = str(error.value)
    assert message.startswith(f"{path}:{where}: ") and words in message, message
    assert "\n" not in message


def test_empty_file(tmp_path):
    with pytest.raises(D.TaggedDataError, match="no sentences"):
        D.read_sentences(_write(tmp_path, "e.conll", "\n\n-DOCSTART- O\n"))


def _tags(sentences, path, given=None):
    return labels.derive(D.tag_pairs(sentences), path, given, error=D.TaggedDataError,
                         words=labels.TAGS)


def test_labels(tmp_path):
    train = D.read_sentences(_write(tmp_path, "t.conll", "a\tO\nb\tB-X\n\nc\tI-X\n"))
    assert _tags(train, "t.conll") == ["B-X", "I-X", "O"]
    assert _tags(train, "t.conll", ["O", "B-X", "I-X", "B-Y"]) == \
        ["O", "B-X", "I-X", "B-Y"]
    with pytest.raises(D.TaggedDataError, match=r"t.conll:2: tag 'B-X' is not in --label_list"):
        _tags(train, "t.conll", ["O", "I-X"])
    with pytest.raises(D.TaggedDataError, match="needs at least 2"):
        _tags(D.read_sentences(_write(tmp_path, "o.conll", "a\tO\n")), "o.conll")
    dev = D.read_sentences(_write(tmp_path, "d.conll", "a\tO\n\nb\tB-Z\n"))
    with pytest.raises(D.TaggedDataError, match=r"d.conll:3: tag 'B-Z' was never seen"):
        labels.check_known(D.tag_pairs(dev), ["B-X", "I-X", "O"], False,
                           error=D.TaggedDataError, words=labels.TAGS)
    assert D.has_chunk_tags(["B-PER", "O"]) and D.has_chunk_tags(["S-LOC", "O"])
    assert not D.has_chunk_tags(["NN", "VB", "DT"])


def test_broad_twitter_corpus_reads_whole():
    path = DATA / "ner" / "btc" / "dev.conll"
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    sentences = D.read_sentences(str(path))
    assert len(sentences) == 2001  # section H (MANIFEST)
    assert sum(len(s.tokens) for s in sentences) == 29480
    assert _tags(sentences, str(path)) == \
        ["B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER", "O"]
