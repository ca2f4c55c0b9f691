"""Semantic search over the lines of a text file:

  python -m albert_tf.search --init_checkpoint=<embedding folder | any model folder>
      --index_file=corpus.txt --query "a man plays the guitar" [--query ...] [--top_k=10]

embeds every line once into corpus.txt.index.npz (reused while the model and the file are
unchanged; rebuilt otherwise) and prints one JSON line per query: {"query": ...,
"results": [{"corpus_id": row, "score": cosine, "text": ...}, ...]}, best first (exact search,
numpy; row: the text's place among the file's non-blank lines). `--index_file=<x.npz>`
searches an index built before; one built by another model is refused. Without --query the
index is built and its path printed. The pooling is the folder's (embedding_config.json,
written by run_embeddings.py), else --pooling (default mean).

`--index_kind=hnsw` builds (and searches) an approximate index instead, faiss' HNSW graph
(`tasks/embeddings/vector_search.py`, the [search] extra), for corpora past about 100k texts;
an .npz index is searched as it was built unless --index_kind says otherwise (exact searches
an hnsw index's vectors exactly; hnsw on an exact index is refused).
"""

import json

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN
from albert_tf.errors import UsageError
from albert_tf.tasks import embeddings  # TextEncoder loads on first use
from albert_tf.tasks.embeddings import index as search_index
from albert_tf.tasks.embeddings import vector_search

FLAGS = "init_checkpoint albert_config_file spm_model_file vocab_file do_lower_case " \
        "max_seq_length pooling index_file index_kind query top_k"


def main(argv):
    if len(argv) > 1:
        raise UsageError(f"unexpected arguments {argv[1:]}: give each query with --query")
    values = flags.FLAGS
    if not values["verbosity"].present:  # the inputs' INFO lines: silence is for success
        logging.set_verbosity(logging.WARNING)
    for name in ("init_checkpoint", "index_file"):
        if not (values[name].value or "").strip():
            raise UsageError(f"--{name} must not be empty")
    if values.top_k < 1:
        raise UsageError(f"--top_k must be at least 1, got {values.top_k}")
    if values.index_kind == "hnsw":  # refused before the model loads
        vector_search.faiss("--index_kind=hnsw")
    encoder = embeddings.TextEncoder.from_pretrained(
        values.init_checkpoint, values.pooling, values.max_seq_length,
        values.spm_model_file or None, values.vocab_file or None,
        values.albert_config_file or None, values.do_lower_case)
    arrays, path = search_index.open_index(values.index_file, encoder, values.index_kind)
    queries = values.query or []
    if not queries:
        print(json.dumps({"index_file": path, "texts": len(arrays["texts"]),
                          "index": search_index.config_of(arrays)}))
        return
    found = encoder.search(encoder.encode(queries),
                           search_index.corpus(arrays, values.index_kind),
                           min(values.top_k, len(arrays["texts"])))
    for query, results in zip(queries, found):
        for result in results:
            result["text"] = str(arrays["texts"][result["corpus_id"]])
        print(json.dumps({"query": query, "results": results}))


def run(argv=None):
    """`python -m albert_tf.search`."""
    cli.define_flags(MAIN, FLAGS, defaults={"top_k": 10, "do_lower_case": None,
                                            "max_seq_length": None, "pooling": None,
                                            "index_kind": None})
    cli.run(main, required=["init_checkpoint", "index_file"], argv=argv)


if __name__ == "__main__":
    run()
