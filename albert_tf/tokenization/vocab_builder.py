"""A WordPiece vocabulary learnt from text: the words BERT's basic tokenizer makes (with the
casing the vocabulary will be used with), then pieces chosen by how often the greedy
longest-match WordPiece tokenizer uses them.

1. Words are counted through `BasicTokenizer(do_lower_case)`, exactly as they will be split
   later, so a vocabulary built lower-cased holds what lower-casing makes (Hangul as jamo) and
   one built with case kept holds composed syllables.
2. The alphabet: the characters covering `character_coverage` of all character occurrences,
   each as a word start and as a `##` continuation (rarer characters become `[UNK]`).
3. Candidates: every substring of up to `max_piece_chars` characters of a word seen at least
   `min_count` times (a word start as is, any other as `##...`), scored by the occurrences of
   the words holding it. The best fill the vocabulary; then, `rounds` times, every word is
   tokenized with it, pieces the tokenizer never picks are dropped and the next candidates
   fill their place.
"""

from __future__ import annotations

import collections
import sys
import time

from albert_tf.errors import UsageError
from albert_tf.tokenization.wordpiece import BasicTokenizer

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Progress:
    """A progress line on stderr every `every_s` seconds (and at the end)."""

    def __init__(self, what: str, every_s: float = 10.0, stream=None):
        self.what, self.every_s, self.stream = what, every_s, stream
        self.start = self.last = time.monotonic()

    def __call__(self, note: str, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every_s:
            self.last = now
            print(f"{self.what}: {note} ({now - self.start:.0f}s)", file=self.stream or sys.stderr,
                  flush=True)


def count_words(lines, do_lower_case: bool, progress=None) -> collections.Counter:
    """Word counts of `lines` (str) through BERT's basic tokenizer. Identical lines are split
    once (reviews and web text repeat)."""
    basic = BasicTokenizer(do_lower_case=do_lower_case)
    line_counts = collections.Counter()
    read = 0
    for line in lines:
        line_counts[line] += 1
        read += len(line)
        if progress and not len(line_counts) % 100_000:
            progress(f"{read / 1e6:.1f}M characters read")
    words = collections.Counter()
    for number, (line, count) in enumerate(line_counts.items(), 1):
        for word in basic.tokenize(line):
            words[word] += count
        if progress and not number % 100_000:
            progress(f"{number}/{len(line_counts)} distinct lines split into words")
    return words


def alphabet(words: collections.Counter, coverage: float) -> list[str]:
    chars = collections.Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    total, kept, seen = sum(chars.values()), [], 0
    for char, count in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0])):
        if kept and seen >= coverage * total:
            break
        kept.append(char)
        seen += count
    return kept


def candidates(words: collections.Counter, max_chars: int, min_count: int) -> list[str]:
    scores = collections.Counter()
    for word, count in words.items():
        if count < min_count:
            continue
        for start in range(len(word)):
            for end in range(start + 2, min(len(word), start + max_chars) + 1):
                scores[("##" if start else "") + word[start:end]] += count
    return [piece for piece, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def piece_usage(words: collections.Counter, vocab: set, max_chars: int) -> collections.Counter:
    """How often the greedy longest-match tokenizer uses each piece on `words`."""
    used = collections.Counter()
    for word, count in words.items():
        start, pieces = 0, []
        while start < len(word):
            for end in range(min(len(word), start + max_chars), start, -1):
                piece = ("##" if start else "") + word[start:end]
                if piece in vocab:
                    pieces.append(piece)
                    break
            else:
                pieces = []  # the whole word is [UNK]
                break
            start = end
        for piece in pieces:
            used[piece] += count
    return used


def learn_wordpiece(words: collections.Counter, vocab_size: int, *,
                    character_coverage: float = 0.9995, max_piece_chars: int = 8,
                    min_count: int = 2, rounds: int = 2, progress=None,
                    special_tokens=SPECIAL_TOKENS) -> list[str]:
    """The vocabulary (special tokens first, then the alphabet, then the learnt pieces)."""
    chars = alphabet(words, character_coverage)
    base = list(dict.fromkeys([*special_tokens, *chars, *("##" + c for c in chars)]))
    if vocab_size < len(base):
        # Cutting the alphabet short would leave characters without their ## form: every
        # word holding them would become [UNK].
        raise UsageError(
            f"--vocab_size={vocab_size} cannot hold the {len(special_tokens)} special tokens "
            f"and the {len(chars)} characters of --character_coverage={character_coverage:g} "
            f"with their ## continuations: the minimum for this text is {len(base)}; raise "
            "--vocab_size or lower --character_coverage")
    pool = [p for p in candidates(words, max_piece_chars, min_count)
            if all(c in set(chars) for c in p.removeprefix("##"))]
    budget = vocab_size - len(base)
    chosen, next_candidate = pool[:budget], budget
    for round_number in range(rounds):
        if progress:
            progress(f"round {round_number + 1}/{rounds}: {len(chosen)} pieces beyond the "
                     f"alphabet", force=True)
        used = piece_usage(words, set(base) | set(chosen), max_piece_chars)
        kept = [p for p in chosen if used[p]]
        refill = pool[next_candidate:next_candidate + budget - len(kept)]
        next_candidate += len(refill)
        if not refill:
            chosen = kept
            break
        chosen = kept + refill
    return base + chosen
