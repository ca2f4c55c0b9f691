"""Every task's reader on the real GLUE files, the MNLI/QQP samples, and malformed input."""

import pytest

from albert_tf.tasks.classification import processors as P

# Rows per split in the real files under ../shared/data/glue (header lines excluded).
REAL_COUNTS = {
    ("cola", "train"): 8551, ("cola", "dev"): 1043, ("cola", "test"): 1063,
    ("sst-2", "train"): 67349, ("sst-2", "dev"): 872, ("sst-2", "test"): 1821,
    ("mrpc", "train"): 3668, ("mrpc", "dev"): 408, ("mrpc", "test"): 1725,
    ("sts-b", "train"): 5749, ("sts-b", "dev"): 1500, ("sts-b", "test"): 1379,
    ("rte", "train"): 2490, ("rte", "dev"): 277, ("rte", "test"): 3000,
    ("qnli", "dev"): 5463, ("qnli", "test"): 5463,
    ("wnli", "train"): 635, ("wnli", "dev"): 71, ("wnli", "test"): 146,
    ("ax", "test"): 1104,
}


@pytest.fixture(scope="module")
def glue_dir(data_dir):
    return str(data_dir / "glue")


@pytest.mark.parametrize("task,split", sorted(REAL_COUNTS))
def test_real_files_row_counts(glue_dir, task, split):
    processor = P.get_processor(task)
    examples = processor.get_examples(glue_dir, split)
    assert len(examples) == REAL_COUNTS[(task, split)]
    labels = processor.get_labels()
    for e in examples:
        assert e.text_a
        if processor.task.is_regression:
            assert isinstance(e.label, float) and 0.0 <= e.label <= 5.0
        else:
            assert e.label in labels
        assert (e.text_b is not None) == processor.task.is_pair
    if split == "test":
        assert len({e.guid for e in examples}) == len(examples)


def test_real_file_details(glue_dir):
    cola = P.get_processor("cola").get_dev_examples(glue_dir)
    assert cola[0].guid == "dev-0" and cola[0].label == "1"  # no header in CoLA train/dev
    mrpc = P.get_processor("mrpc").get_train_examples(glue_dir)
    assert mrpc[0].guid == "train-1"  # the index counts the (BOM-prefixed) header line
    assert mrpc[0].text_a.startswith("amrozi accused his brother")
    assert P.get_processor("mrpc").get_test_examples(glue_dir)[0].guid == "0"
    stsb = P.get_processor("sts-b").get_dev_examples(glue_dir)
    assert stsb[0].label == 5.0 and stsb[0].text_b == "a man wearing a hard hat is dancing."
    upper = P.get_processor("rte", do_lower_case=False).get_dev_examples(glue_dir)
    assert upper[0].text_a.startswith("Dana Reeve")


def test_mnli_samples(data_dir):
    root = str(data_dir / "glue" / "samples_from_hf_dummy")
    mnli = P.get_processor("mnli")
    train = mnli.get_train_examples(root)
    assert len(train) == 3
    assert train[0].guid == "0"
    assert train[0].text_a == "conceptually cream skimming has two basic dimensions - product and geography."
    assert train[0].text_b == "product and geography are what make cream skimming work."
    assert train[0].label == "neutral"  # last column (gold_label), train has 12 columns
    dev = mnli.get_dev_examples(root)
    assert len(dev) == 2 and all(e.label in mnli.get_labels() for e in dev)
    test = mnli.get_test_examples(root)
    assert len(test) == 1 and test[0].label == "contradiction"
    mis = P.get_processor("mismnli")
    assert len(mis.get_dev_examples(root)) == 2 and len(mis.get_test_examples(root)) == 1
    assert mis.get_dev_examples(root)[0].guid == "0"
    assert mis.get_dev_examples(root)[0].text_a != dev[0].text_a


def test_qqp_samples(data_dir):
    root = str(data_dir / "glue" / "samples_from_hf_dummy")
    qqp = P.get_processor("qqp")
    train = qqp.get_train_examples(root)
    assert [e.label for e in train] == ["0", "1", "0"]
    assert train[1].guid == "402555" and train[1].text_a == "how do i control my horny emotions?"
    assert len(qqp.get_dev_examples(root)) == 2
    test = qqp.get_test_examples(root)
    assert len(test) == 1 and test[0].guid == "0" and test[0].label == "0"
    assert test[0].text_a.startswith("would the idea of trump and putin")


def _write(tmp_path, task_dir, name, text):
    d = tmp_path / task_dir
    d.mkdir(exist_ok=True)
    (d / name).write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(P.GlueDataError, match=r"SST-2[/\\]dev.tsv"):
        P.get_processor("sst-2").get_dev_examples(str(tmp_path))


def test_qqp_rows_with_missing_columns_are_skipped_and_counted(tmp_path):
    text = ("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
            "1\t1\t2\twhy?\thow?\t0\n"
            "2\t3\t4\tbroken row\n"
            "3\t5\t6\twhat?\twho?\t1\n")
    root = _write(tmp_path, "QQP", "train.tsv", text)
    processor = P.get_processor("qqp")
    examples = processor.get_train_examples(root)
    assert [e.guid for e in examples] == ["1", "3"] and processor.skipped_rows == 1


def test_quotes_are_literal(tmp_path):
    root = _write(tmp_path, "SST-2", "dev.tsv", 'sentence\tlabel\n"quoted\ttext\n')
    # A quote does not join the two fields: "quoted is the text, text the (unknown) label.
    with pytest.raises(P.GlueDataError, match=r"dev\.tsv:2: unknown label 'text'"):
        P.get_processor("sst-2").get_dev_examples(root)
    root = _write(tmp_path, "SST-2", "dev.tsv", 'sentence\tlabel\n"a" b\t0\n')
    assert P.get_processor("sst-2").get_dev_examples(root)[0].text_a == '"a" b'


def test_unknown_task_lists_known_ones():
    with pytest.raises(P.GlueDataError, match="sst-2"):
        P.get_processor("sst2")
    assert P.get_processor("SST-2").name == "sst-2"
    assert set(P.task_names()) == {"cola", "mnli", "mismnli", "mrpc", "rte", "sst-2", "sts-b",
                                   "qqp", "qnli", "wnli", "ax"}


_STSB_HEADER = "\t".join(f"c{i}" for i in range(10))
_RTE_HEADER = "index\tsentence1\tsentence2\tlabel\n"

# (task, folder, file, text, the error naming the file and line)
BAD_FILES = {
    "wrong column count": ("sst-2", "SST-2", "dev.tsv", "sentence\tlabel\ngood\t1\nbad row\n",
                           r"dev.tsv:3: expected 2 .* got 1"),
    "unknown label": ("rte", "RTE", "train.tsv",
                      _RTE_HEADER + "0\ta\tb\tentailment\n1\ta\tb\tmaybe\n",
                      r"train.tsv:3: unknown label 'maybe'"),
    "non-numeric STS-B score": ("sts-b", "STS-B", "dev.tsv",
                                _STSB_HEADER + "\n" + "\t".join(["0"] * 7 + ["a", "b", "high"]) + "\n",
                                r"dev.tsv:2: score 'high' is not a number"),
    "header only": ("sst-2", "SST-2", "dev.tsv", "sentence\tlabel\n", r"dev.tsv:1: only a header line"),
    "empty file": ("sst-2", "SST-2", "dev.tsv", "", r"dev.tsv: empty file"),
    # an SST-2 file where MNLI (text in columns 8 and 9) is expected
    "another task's header": ("mnli", "MNLI", "dev_matched.tsv", "sentence\tlabel\ngood\t1\n",
                              r"dev_matched.tsv:1: header has 2 columns "
                              r"\(sentence \| label\) but task mnli reads"),
    "too few columns for STS-B": ("sts-b", "STS-B", "train.tsv", _RTE_HEADER + "0\ta\tb\t1\n",
                                  r"train.tsv:1: .*at least 10 columns"),
    "empty text": ("rte", "RTE", "dev.tsv",
                   _RTE_HEADER + "0\ta\tb\tentailment\n1\ta\t \tentailment\n",
                   r"dev.tsv:3: empty text_b \(column 2\)"),
}


@pytest.mark.parametrize("case", list(BAD_FILES.values()), ids=list(BAD_FILES))
def test_a_bad_file_names_file_and_line(tmp_path, case):
    task, folder, name, text, message = case
    root = _write(tmp_path, folder, name, text)
    split = name.split(".")[0].split("_")[0]  # dev_matched.tsv: the dev split
    with pytest.raises(P.GlueDataError, match=message):
        getattr(P.get_processor(task), f"get_{split}_examples")(root)


def test_a_test_split_keeps_an_empty_text(tmp_path):
    # a test split keeps the row (the leaderboard needs every prediction)
    root = _write(tmp_path, "RTE", "test.tsv", "index\tsentence1\tsentence2\n0\t\tb\n")
    assert P.get_processor("rte").get_test_examples(root)[0].text_a == ""


def test_non_utf8_bytes_name_file_and_line(tmp_path):
    d = tmp_path / "SST-2"
    d.mkdir()
    (d / "dev.tsv").write_bytes(b"sentence\tlabel\ngood\t1\ncaf\xe9\t0\n")
    with pytest.raises(P.GlueDataError, match=r"dev.tsv:3: not valid UTF-8"):
        P.get_processor("sst-2").get_dev_examples(str(tmp_path))
