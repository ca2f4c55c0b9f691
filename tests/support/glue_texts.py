"""Real sentences for tokenizer comparisons: the MRPC dev pairs' texts, then SST-2's dev sentences."""

import csv

from support.paths import DATA


def glue_dev_texts() -> list[str]:
    """MRPC dev's two texts per row (its TSV read as GLUE writes it, quotes and all), then the
    SST-2 dev sentences: 1,688 texts in that order."""
    texts = []
    with open(DATA / "glue" / "MRPC" / "dev.tsv", encoding="utf-8", newline="") as reader:
        for row in list(csv.reader(reader, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            texts += row[3:5]
    with open(DATA / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as reader:
        texts += [line.split("\t")[0] for line in reader.read().splitlines()[1:]]
    return texts
