"""Approximate search (albert_tf/tasks/embeddings/vector_search.py, faiss' HNSW graph, the
[search] extra): its top-10 against brute force on a small corpus, the graph written and read
back, an hnsw index file through `python -m albert_tf.search`, and the refusals: without the
extra, hnsw asked of an exact index, bad parameters."""

import json
import sys

import numpy as np
import pytest

from albert_tf.errors import InputError, MissingDependencyError
from albert_tf.tasks.embeddings import HnswIndex, TextEncoder, vector_search
from albert_tf.tasks.embeddings import index as search_index
from support.entry_points import run_entry_point
from support.released_model import passages

needs_faiss = pytest.mark.skipif(not vector_search.available(),
                                 reason="needs the [search] extra: pip install -e .[search]")
QUERIES = ["She was very happy.", "a letter from her father", "the weather", "a long walk"]


@pytest.fixture(scope="module")
def encoder(pretrained_folder):
    return TextEncoder.from_pretrained(pretrained_folder, max_seq_length=32)


@pytest.fixture(scope="module")
def corpus(data_dir):
    return passages(data_dir / "pretrain" / "nltk_gutenberg" / "austen-emma.txt", 150)


def _brute(query, vectors, k):
    cosines = vectors.astype(np.float64) @ query.astype(np.float64)
    return sorted(range(len(vectors)), key=lambda i: (-cosines[i], i))[:k], cosines


@needs_faiss
def test_hnsw_top_10_equals_brute_force_on_a_small_corpus(encoder, corpus):
    vectors = encoder.encode(corpus)
    graph = HnswIndex.build(vectors)
    assert graph.config == {"kind": "hnsw", "library": f"faiss {vector_search.faiss().__version__}",
                            "metric": "inner_product", "m": 32, "ef_construction": 200,
                            "ef_search": 128}
    assert (graph.size, graph.dim) == (150, 32)
    asked = np.concatenate([encoder.encode(QUERIES), vectors[::15]])  # 4 texts, 10 corpus rows
    found = encoder.search(asked, graph, top_k=10)
    for query, results in zip(asked, found):
        brute, cosines = _brute(query, vectors, 10)
        assert [r["corpus_id"] for r in results] == brute
        assert [r["score"] for r in results] == pytest.approx([cosines[i] for i in brute],
                                                              abs=1e-5)
    assert [r[0]["corpus_id"] for r in found[4:]] == list(range(0, 150, 15))  # each finds itself
    again = HnswIndex.from_bytes(graph.to_bytes(), graph.config)
    assert encoder.search(asked, again, top_k=10) == found
    assert encoder.search(QUERIES, graph, top_k=3) == [r[:3] for r in found[:4]]
    with pytest.raises(InputError, match="hnsw m must be an integer of at least 1, got 0"):
        HnswIndex.build(vectors, m=0)
    with pytest.raises(ValueError, match="queries have 8 dimensions but the corpus 32"):
        encoder.search(np.ones((1, 8), np.float32), graph)


def test_exact_search_keeps_ties_in_row_order(encoder):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(500, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[[40, 90, 300]] = vectors[250]  # four rows tie with the first query's best
    asked = np.concatenate([vectors[250:251], rng.normal(size=(5, 8)).astype(np.float32)])
    for k in (1, 3, 10, 500, 600):
        want = np.argsort(-(asked @ vectors.T), axis=1, kind="stable")[:, :k].tolist()
        assert [[r["corpus_id"] for r in row] for row in encoder.search(asked, vectors, k)] == want
    assert [r["corpus_id"] for r in encoder.search(asked, vectors, 4)[0]] == [40, 90, 250, 300]


@needs_faiss
def test_search_command_with_an_hnsw_index(encoder, pretrained_folder, corpus, tmp_path):
    texts = corpus[:40]
    (tmp_path / "corpus.txt").write_text("\n".join(texts) + "\n")
    base = ["albert_tf.search", f"--init_checkpoint={pretrained_folder}", "--max_seq_length=32"]
    asked = [f"--query={q}" for q in QUERIES[:2]]
    built = run_entry_point("-m", base + [f"--index_file={tmp_path / 'corpus.txt'}",
                                          "--index_kind=hnsw", "--top_k=5", *asked])
    assert built.returncode == 0, built.stderr[-2000:]
    want = encoder.search(QUERIES[:2], encoder.encode(texts), top_k=5)  # exact
    got = [json.loads(line) for line in built.stdout.splitlines()]
    assert [[r["corpus_id"] for r in line["results"]] for line in got] == \
        [[r["corpus_id"] for r in w] for w in want]
    assert got[0]["results"][0]["text"] == texts[want[0][0]["corpus_id"]]
    index = tmp_path / "corpus.txt.index.npz"
    with np.load(index) as data:
        assert json.loads(str(data["index_config"]))["kind"] == "hnsw"
        assert data["hnsw_graph"].dtype == np.uint8 and data["embeddings"].shape == (40, 32)
    again = run_entry_point("-m", base + [f"--index_file={index}", "--top_k=5", *asked])
    assert again.stdout == built.stdout  # the .npz is searched as it was built: hnsw
    other = run_entry_point("-m", base[:2] + [f"--index_file={index}", "--query=x"])  # 64 long
    assert other.returncode == 1 and len(other.stderr.splitlines()) == 1
    assert other.stderr.startswith(f"error: {index} was built by another model (digest ")
    exact = run_entry_point("-m", base + [f"--index_file={tmp_path / 'corpus.txt'}"])
    assert json.loads(exact.stdout)["index"] == {"kind": "exact"}  # rebuilt: another kind
    refused = run_entry_point("-m", base + [f"--index_file={index}", "--index_kind=hnsw",
                                            "--query=x"])
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == f"error: {index} is an exact index, not hnsw; build an hnsw index " \
        "from its text file (--index_kind=hnsw)\n"


def test_without_the_extra_hnsw_is_one_error_line(encoder, pretrained_folder, tmp_path,
                                                  monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` fails as when absent
    vector_search._load.cache_clear()
    try:
        (tmp_path / "corpus.txt").write_text("one text\nanother text\n")
        done = run_entry_point("-m", ["albert_tf.search", f"--init_checkpoint={pretrained_folder}",
                                      f"--index_file={tmp_path / 'corpus.txt'}",
                                      "--index_kind=hnsw", "--query=x"])
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith("error: --index_kind=hnsw needs faiss (the [search] "
                                      "extra), which cannot be imported (")
        assert done.stderr.endswith("): pip install albert-tf[search]\n")
        assert len(done.stderr.splitlines()) == 1
        with pytest.raises(MissingDependencyError, match=r"pip install albert-tf\[search\]"):
            search_index.open_index(tmp_path / "corpus.txt", encoder, "hnsw")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]  # nothing written
        with pytest.raises(MissingDependencyError, match=r"needs faiss \(the \[search\] extra\)"):
            HnswIndex.build(np.eye(3, dtype=np.float32))
        with pytest.raises(InputError, match="index kind must be one of exact, hnsw, got 'ivf'"):
            search_index.open_index(tmp_path / "corpus.txt", encoder, "ivf")
    finally:
        vector_search._load.cache_clear()
