"""Issue 51's search figure: the recall@10 of the approximate index (`--index_kind=hnsw`, faiss'
HNSW graph, the [search] extra) against exact search on >= 100k real texts, and the query
speed of both.

    python bench/vector_search_recall.py --model=albert_demo/pretrain/model \
        --data=../shared/data --cache=/tmp/search_vectors.npz

The corpus: the distinct sentences of ../shared/data (GLUE's SST-2, QNLI, MRPC, RTE, CoLA and
STS-B train texts, SQuAD's questions and context sentences, the pretraining books and
articles split into sentences of 4 to 60 words), --texts of them drawn with a fixed seed; the queries:
--queries distinct STS-B dev sentences, none of them in the corpus. Both are embedded with
--model (`TextEncoder.encode`, its folder's pooling, --max_seq_length pieces) once and cached
in --cache. recall@10: the share of exact search's top 10 that the index returns, averaged
over the queries. Speed: `TextEncoder.search` over the vectors (exact: numpy dot products
and a sort) and over the graph, all queries at once and one query at a time. Prints one JSON
object.
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import re
import sys
import time

for _name, _value in (("TF_CPP_MIN_LOG_LEVEL", "3"), ("KERAS_BACKEND", "tensorflow")):
    os.environ.setdefault(_name, _value)
REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402

from albert_tf.tasks.embeddings import HnswIndex, TextEncoder, vector_search  # noqa: E402
from timing import best_of  # noqa: E402  (bench/, beside this file)

flags.DEFINE_string("model", None, "A model folder (the demo's pretrain/model).")
flags.DEFINE_string("data", "../shared/data", "The shared data folder.")
flags.DEFINE_string("cache", "/tmp/search_vectors.npz", "Where the embedded texts are kept.")
flags.DEFINE_integer("texts", 120_000, "Corpus texts: this many of the distinct sentences, "
                     "drawn with a fixed seed (at least 100k for the figure).")
flags.DEFINE_integer("queries", 1000, "STS-B dev sentences searched for.")
flags.DEFINE_integer("max_seq_length", 64, "Pieces per text.")
flags.DEFINE_integer("top_k", 10, "recall@top_k.")
flags.DEFINE_list("ef_search", ["16", "32", "64", "128", "256"], "ef_search values measured.")
flags.DEFINE_integer("m", vector_search.DEFAULTS["m"], "The graph's links per vector.")
flags.DEFINE_integer("ef_construction", vector_search.DEFAULTS["ef_construction"],
                     "Candidates kept while the graph is built.")
FLAGS = flags.FLAGS
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def _tsv(path, *columns):
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quotechar=None))
    header = rows[0]
    found = [header.index(c) for c in columns if c in header]
    return [row[i] for row in rows[1:] for i in found if i < len(row)]


def corpus_texts(data: pathlib.Path) -> list[str]:
    glue = data / "glue"
    texts = []
    for split in ("train", "dev", "test"):
        texts += _tsv(glue / "SST-2" / f"{split}.tsv", "sentence")
    for split in ("dev", "test"):
        texts += _tsv(glue / "QNLI" / f"{split}.tsv", "question", "sentence")
    for split in ("train", "dev", "test"):
        texts += _tsv(glue / "RTE" / f"{split}.tsv", "sentence1", "sentence2")
    texts += _tsv(glue / "MRPC" / "train.tsv", "#1 String", "#2 String")
    texts += _tsv(glue / "MRPC" / "test.tsv", "#1 String", "#2 String")
    texts += _tsv(glue / "STS-B" / "train.tsv", "sentence1", "sentence2")
    with open(glue / "CoLA" / "train.tsv", encoding="utf-8") as handle:
        texts += [line.split("\t")[3] for line in handle if line.count("\t") >= 3]
    squad = json.loads((data / "squad" / "v1.1" / "dev-v1.1.json").read_text("utf-8"))
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            texts += SENTENCE.split(paragraph["context"])
            texts += [qa["question"] for qa in paragraph["qas"]]
    for path in sorted((data / "pretrain").rglob("*.txt")):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")  # MANIFEST.md: a few books are Latin-1
        for paragraph in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
            texts += SENTENCE.split(" ".join(paragraph.split()))
    return [t for t in texts if 4 <= len(t.split()) <= 60]


def embedded(encoder):
    if os.path.isfile(FLAGS.cache):
        with np.load(FLAGS.cache) as cached:
            return {key: cached[key] for key in cached.files}
    data = pathlib.Path(FLAGS.data)
    queries = list(dict.fromkeys(_tsv(data / "glue" / "STS-B" / "dev.tsv", "sentence1")))
    queries = [q.strip() for q in queries][:FLAGS.queries]
    asked = set(queries)
    corpus = [t for t in dict.fromkeys(t.strip() for t in corpus_texts(data)) if t not in asked]
    if len(corpus) < FLAGS.texts:
        sys.exit(f"error: only {len(corpus)} distinct texts, fewer than --texts={FLAGS.texts}")
    drawn = np.random.default_rng(0).permutation(len(corpus))[:FLAGS.texts]
    corpus = [corpus[i] for i in sorted(drawn)]
    start = time.perf_counter()
    vectors = encoder.encode(corpus, batch_size=256)
    seconds = time.perf_counter() - start
    arrays = {"corpus": vectors, "queries": encoder.encode(queries, batch_size=256),
              "embed_seconds": np.array(seconds)}
    np.savez(FLAGS.cache, **arrays)
    return arrays


def main(argv):
    del argv
    encoder = TextEncoder.from_pretrained(FLAGS.model, max_seq_length=FLAGS.max_seq_length)
    arrays = embedded(encoder)
    corpus, queries, k = arrays["corpus"], arrays["queries"], FLAGS.top_k
    out = {"texts": len(corpus), "queries": len(queries), "dim": int(corpus.shape[1]),
           "embed_seconds": round(float(arrays["embed_seconds"]), 1),
           "load": open("/proc/loadavg").read().split()[:3]}
    exact = encoder.search(queries, corpus, k)
    truth = [{r["corpus_id"] for r in row} for row in exact]
    start = time.perf_counter()
    graph = HnswIndex.build(corpus, m=FLAGS.m, ef_construction=FLAGS.ef_construction)
    out["build_seconds"] = round(time.perf_counter() - start, 1)
    out["graph_bytes"] = int(graph.to_bytes().size)
    out["exact_ms_per_query"] = {
        "batch": round(1e3 * best_of(lambda: encoder.search(queries, corpus, k)) / len(queries), 3),
        "single": round(1e3 * best_of(lambda: [encoder.search(q, corpus, k) for q in queries[:100]],
                                      1) / 100, 3)}
    out["hnsw"] = []
    for ef in (int(v) for v in FLAGS.ef_search):
        graph.config["ef_search"] = ef
        found = encoder.search(queries, graph, k)
        recall = np.mean([len(t & {r["corpus_id"] for r in row}) / k
                          for t, row in zip(truth, found)])
        batch = best_of(lambda: encoder.search(queries, graph, k)) / len(queries)
        single = best_of(lambda: [encoder.search(q, graph, k) for q in queries[:200]], 1) / 200
        out["hnsw"].append({"ef_search": ef, f"recall@{k}": round(float(recall), 4),
                            "batch_ms_per_query": round(1e3 * batch, 3),
                            "single_ms_per_query": round(1e3 * single, 3)})
    out["config"] = {**graph.config, "ef_search": [int(v) for v in FLAGS.ef_search]}
    print(json.dumps(out))


if __name__ == "__main__":
    flags.mark_flag_as_required("model")
    app.run(main)
