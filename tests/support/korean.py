"""Korean text for tests, made here (no download): short movie-review sentences built from a few
hand-written Korean words, each with a sentiment label (1 positive, 0 negative), in the layout
of NSMC (id, document, label) with the bare quotes real reviews have."""

from __future__ import annotations

import random

SUBJECTS = ["이 영화", "그 배우", "감독의 연출", "이야기", "음악", "결말", "주인공", "배우들 연기"]
POSITIVE = ["정말 재미있어요", "너무 좋았다", "최고였습니다", "감동적이네요", "또 보고 싶다",
            "훌륭했어요", "완벽했다"]
NEGATIVE = ["너무 지루했다", "별로였어요", "최악이네요", "시간이 아까웠다", "실망했습니다",
            "재미없다", "짜증나네요"]
ENDINGS = ["", "!", "..", " ㅋㅋ", " ㅠㅠ", ".", "?"]


def review(rng: random.Random, label: int) -> str:
    words = POSITIVE if label else NEGATIVE
    text = f"{rng.choice(SUBJECTS)} {rng.choice(words)}{rng.choice(ENDINGS)}"
    if rng.random() < 0.1:  # a bare quote, as reviewers type them
        text = f'"{text}' if rng.random() < 0.5 else text.replace(" ", ' "', 1) + '"'
    return text


def reviews(count: int, seed: int = 0) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(review(rng, label), label) for label in (rng.randrange(2) for _ in range(count))]


def write_nsmc(path, rows, with_labels: bool = True, first_id: int = 1000) -> str:
    """An NSMC-format TSV file (header id, document[, label]) written as it is."""
    lines = ["id\tdocument" + ("\tlabel" if with_labels else "")]
    for i, (text, label) in enumerate(rows):
        lines.append(f"{first_id + i}\t{text}" + (f"\t{label}" if with_labels else ""))
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def write_corpus(path, count: int = 400, seed: int = 1) -> str:
    """Pretraining text: one review a line, a blank line after every five."""
    lines = []
    for i, (text, _) in enumerate(reviews(count, seed), start=1):
        lines.append(text)
        if i % 5 == 0:
            lines.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)
