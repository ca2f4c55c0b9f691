"""The demo's embedded corpus: English documentation already on the machine, no download.

Three sources, available offline wherever albert-tf is installed:
- the Language Reference topics behind `help()` (`pydoc_data.topics`),
- the docstrings of the standard library's modules, classes and functions, and
- held out of pretraining, for the held-out checks only, the docstrings of the libraries
  albert-tf requires (NumPy, Keras, TensorFlow): about 2.8 times the first two's text.
Each topic or module is a document (a large module's docstrings several); paragraphs are split
into sentences, and a sentence is kept once in the whole corpus, so no held-out sentence is
also a training one. The derived classification task asks, for one sentence, which of the
first two sources it comes from (0 = language reference, 1 = library docstring): real text, a
real label.
"""

from __future__ import annotations

import importlib
import inspect
import random
import re
import sys
import warnings

REFERENCE, LIBRARY = 0, 1
_SKIP_MODULES = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "lib2to3",
                 "ensurepip", "pydoc_data", "venv", "xxsubtype", "msilib", "winreg", "winsound",
                 "msvcrt", "nt", "_winapi"}
# Public namespaces of the required libraries whose docstrings are the held-out text: thousands
# of sentence-order pairs, where Python's own held-out documents give about 130, too few to
# tell a learnt order from chance. As pretraining text they cost the task about 0.03 of dev
# accuracy (docs/benchmarks.md, "The libraries' docstrings held out").
DEPENDENCY_MODULES = (
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "numpy.ma", "numpy.polynomial",
    "numpy.lib", "keras.ops", "keras.layers", "keras.losses", "keras.metrics", "keras.optimizers",
    "keras.callbacks", "keras.activations", "keras.models", "keras.utils", "keras.random",
    "keras.initializers", "keras.regularizers", "tensorflow", "tensorflow.math", "tensorflow.nn",
    "tensorflow.data", "tensorflow.io", "tensorflow.strings", "tensorflow.linalg",
    "tensorflow.image", "tensorflow.signal", "tensorflow.random", "tensorflow.sparse",
    "tensorflow.ragged", "tensorflow.train", "tensorflow.config", "tensorflow.distribute",
    "tensorflow.saved_model", "tensorflow.summary", "tensorflow.audio", "tensorflow.bitwise",
    "tensorflow.dtypes", "tensorflow.feature_column", "tensorflow.lite", "tensorflow.quantization",
    "tensorflow.autograph", "tensorflow.debugging", "tensorflow.errors", "tensorflow.sets",
    "tensorflow.test")
# A module's docstrings are cut into documents of about this many sentences (at docstring
# boundaries), so that every k-th document held out is about 1/k of the text.
DOCUMENT_SENTENCES = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_CODE_LINE = re.compile(r"^\s*(>>>|\.\.\.|\$ |[-=*~^]{3,}|[|+])|::=|^\s*(def|class|import|from|for|if|return) .*[:(]$")


def sentences_of(text: str) -> list[str]:
    """Prose sentences of a documentation text: code, tables and rules dropped."""
    result = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.splitlines()
        if not lines or any(_CODE_LINE.search(line) for line in lines):
            continue
        flat = " ".join(line.strip() for line in lines)
        for sentence in _SENTENCE_END.split(flat):
            sentence = sentence.strip()
            letters = sum(c.isalpha() for c in sentence)
            if 20 <= len(sentence) <= 500 and len(sentence.split()) >= 4 and letters >= 0.6 * len(sentence):
                result.append(sentence)
    return result


def reference_documents() -> list[list[str]]:
    from pydoc_data.topics import topics

    return [s for s in (sentences_of(topics[name]) for name in sorted(topics)) if s]


def library_documents() -> list[list[str]]:
    documents = []
    for name in sorted(m for m in sys.stdlib_module_names if not m.startswith("_")):
        if name in _SKIP_MODULES:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except Exception:  # platform-specific or optional modules
            continue
        texts = [inspect.getdoc(module) or ""]
        for attr, obj in sorted(vars(module).items()):
            if not attr.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) \
                    and getattr(obj, "__module__", None) == name:
                texts.append(inspect.getdoc(obj) or "")
        sentences = [s for text in texts for s in sentences_of(text)]
        if sentences:
            documents.append(sentences)
    return documents


def _documented(obj) -> bool:
    return inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj) \
        or inspect.ismethoddescriptor(obj) or type(obj).__name__ == "ufunc"


def _api_docstrings(module) -> list[str]:
    """The module's docstring, then its public objects' and their public methods'."""
    texts = [inspect.getdoc(module) or ""]
    for attr, obj in sorted(vars(module).items()):
        if attr.startswith("_") or not _documented(obj):
            continue
        texts.append(inspect.getdoc(obj) or "")
        if inspect.isclass(obj):
            texts += [inspect.getdoc(member) or "" for name, member in sorted(vars(obj).items())
                      if not name.startswith("_") and _documented(member)]
    return texts


def dependency_documents(modules=DEPENDENCY_MODULES) -> list[list[str]]:
    """Documents of the named modules' docstrings (modules that do not import are skipped)."""
    documents = []
    for name in modules:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                texts = _api_docstrings(importlib.import_module(name))
        except Exception:  # a namespace another version of the library lacks
            continue
        current: list[str] = []
        for text in texts:
            current += sentences_of(text)
            if len(current) >= DOCUMENT_SENTENCES:
                documents.append(current)
                current = []
        if current:
            documents.append(current)
    return documents


def unique_sentences(*sources) -> list[list[list[str]]]:
    """Each source's documents with every sentence seen before (in any source) dropped, and the
    documents left empty dropped: the same docstring reached under two names, or a stock
    sentence, would otherwise sit in both the training and the held-out text."""
    seen: set[str] = set()
    result = []
    for documents in sources:
        kept = []
        for document in documents:
            fresh = [s for s in document if not (s in seen or seen.add(s))]
            if fresh:
                kept.append(fresh)
        result.append(kept)
    return result


def write_corpus(path, documents) -> dict:
    """One sentence per line, a blank line between documents (create_pretraining_data's format)."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for document in documents:
            out.write("\n".join(document) + "\n\n")
            count += len(document)
    return {"documents": len(documents), "sentences": count}


def read_documents(path) -> list[list[str]]:
    documents, current = [], []
    with open(path, encoding="utf-8", errors="replace") as reader:
        for line in reader:
            line = line.strip()
            if line:
                current.append(line)
            elif current:
                documents.append(current)
                current = []
    if current:
        documents.append(current)
    return documents


def source_task(reference, library, seed: int = 12345, dev_fraction: float = 0.15,
                max_per_class: int = 4000):
    """Balanced (sentence, label) train/dev/test splits, split by document so that no document
    gives sentences to two splits."""
    rng = random.Random(seed)
    splits = {"train": [], "dev": [], "test": []}
    for label, documents in ((REFERENCE, reference), (LIBRARY, library)):
        documents = list(documents)
        rng.shuffle(documents)
        total = sum(len(d) for d in documents)
        taken = {"train": [], "dev": [], "test": []}
        seen = 0
        for document in documents:
            split = "dev" if seen < dev_fraction * total else "test" if seen < 2 * dev_fraction * total else "train"
            taken[split].extend((s, label) for s in document)
            seen += len(document)
        for split, rows in taken.items():
            rng.shuffle(rows)
            splits[split].append(rows)
    result = {}
    for split, (first, second) in splits.items():
        # Balanced classes, so the majority-class baseline is about 50 %.
        cap = min(len(first), len(second), max_per_class if split == "train" else max_per_class // 4)
        rows = first[:cap] + second[:cap]
        rng.shuffle(rows)
        result[split] = rows
    return result


def two_sources_from(path):
    """Splits a user corpus in two halves by document, for the same task on their own text."""
    documents = read_documents(path)
    return documents[::2], documents[1::2]
