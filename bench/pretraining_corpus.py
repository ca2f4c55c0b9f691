"""Builds the benchmark corpus for create_pretraining_data: ~10 MB of real English text from
../shared/data/pretrain, one sentence per line and a blank line between documents — the same
shape as the original's timing corpus (fixtures create_pretraining_data/timing.json: 10.19 MB,
619 documents, 111,218 sentences).

Brown is already one sentence per line with 500 documents; the other texts are split into
sentences with a regex and into documents of about 16 KB (the timing corpus's mean).
"""

from __future__ import annotations

import pathlib
import re

TARGET_BYTES = 10_190_983  # the original's timing corpus
_LATIN1 = {"chesterton-ball.txt", "shakespeare-caesar.txt", "2005-Bush.txt", "1954-Eisenhower.txt",
           "1970-Nixon.txt", "1971-Nixon.txt", "1972-Nixon.txt", "1973-Nixon.txt", "1974-Nixon.txt"}
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])")
_DOC_BYTES = 16_000


def _read(path: pathlib.Path) -> str:
    return path.read_bytes().decode("latin-1" if path.name in _LATIN1 else "utf-8").replace("\r\n", "\n")


def _documents_from_prose(text: str):
    """Paragraphs (blank-line separated) → sentences → documents of about _DOC_BYTES."""
    document, size = [], 0
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for sentence in _SENTENCE_END.split(flat):
            if sentence.strip():
                document.append(sentence.strip())
                size += len(sentence) + 1
        if size >= _DOC_BYTES:
            yield document
            document, size = [], 0
    if document:
        yield document


def _brown_documents(path: pathlib.Path):
    for block in _read(path).split("\n\n"):
        lines = [line.strip() for line in block.split("\n") if line.strip()]
        if lines:
            yield lines


def corpus_documents(pretrain_dir: pathlib.Path):
    yield from _brown_documents(pretrain_dir / "misc" / "brown_untagged.txt")
    for folder in ("nltk_state_union", "nltk_inaugural", "nltk_gutenberg"):
        for path in sorted((pretrain_dir / folder).glob("*.txt")):
            yield from _documents_from_prose(_read(path))


def build(pretrain_dir: pathlib.Path, out: pathlib.Path, copies: int = 1,
          target_bytes: int = TARGET_BYTES) -> dict:
    """Writes the corpus (repeated `copies` times) and returns its counts."""
    docs = []
    size = 0
    for document in corpus_documents(pretrain_dir):
        docs.append(document)
        size += sum(len(s.encode()) + 1 for s in document) + 1
        if size >= target_bytes:
            break
    text = "\n\n".join("\n".join(d) for d in docs) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text * copies, encoding="utf-8")
    return {"path": str(out), "bytes": len(text.encode()) * copies, "documents": len(docs) * copies,
            "sentences": sum(len(d) for d in docs) * copies}
