"""Builds a vocabulary from a text corpus, with the settings file the other scripts follow.

    python -m albert_tf.train_vocab --input=corpus/*.txt --output_dir=vocab \\
        --model_type=wordpiece --vocab_size=16000 --nodo_lower_case

`--model_type=wordpiece` writes `vocab.txt` (BERT's special tokens `[PAD] [UNK] [CLS] [SEP]
[MASK]` first, `##` continuations; `tokenization.vocab_builder`); `unigram` or `bpe` writes
`spm.model` and `spm.vocab` with the original README's SentencePiece options (`train_spm`).
Beside it, `tokenizer_config.json` records `do_lower_case` and the text rules: every script
given that vocabulary takes its casing from there unless `--do_lower_case` is given, and a
flag that contradicts it is an error. Text is read one sentence a line through `tf.io.gfile`;
a progress line shows now and then. Nothing appears unless the run completes.

Casing: `--do_lower_case` (the original's default) lower-cases and strips accents with Unicode
NFD, which splits Hangul syllables into jamo: for Korean (and any text where accents matter)
pass `--nodo_lower_case`.
"""

from __future__ import annotations

if __name__ == "__main__":
    from albert_tf import cli

    cli.quiet_tensorflow()  # before TensorFlow loads

import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import tensorflow as tf  # noqa: E402
from absl import flags  # noqa: E402

from albert_tf import io_utils, train_spm  # noqa: E402
from albert_tf.errors import OutputError, UsageError  # noqa: E402
from albert_tf.tasks.output_lock import LOCK_NAME, OutputDirLock  # noqa: E402
from albert_tf.tokenization import preprocess_text, settings, unk, vocab_builder  # noqa: E402
from albert_tf.tokenization.full_tokenizer import FullTokenizer  # noqa: E402

MODEL_TYPES = ("wordpiece", "unigram", "bpe")
VOCAB_NAME, SPM_PREFIX = "vocab.txt", "spm"
# What a run writes in --output_dir: never read back as corpus, and never replaced.
OUTPUT_NAMES = (VOCAB_NAME, SPM_PREFIX + ".model", SPM_PREFIX + ".vocab", settings.SETTINGS_FILE)


def _lines(files, progress):
    read = 0
    for path in files:
        with io_utils.open_binary(path) as reader:  # a pipe too (tf.io.gfile reads it as empty)
            offset = 0
            for number, raw in enumerate(reader, 1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as error:
                    raise train_spm.undecodable(path, number, offset, raw, error) from None
                offset += len(raw)
                read += len(raw)
                if line:
                    yield line
                progress(f"{read / 1e6:.1f} MB read from {len(files)} file(s)")


def check_options(model_type: str, vocab_size: int, character_coverage: float | None,
                  max_piece_chars: int, min_count: int, input_sentence_size: int = 0,
                  num_threads: int | None = None) -> None:
    """Flags that cannot build a vocabulary, before any text is read."""
    if model_type not in MODEL_TYPES:
        raise UsageError(f"--model_type must be one of {', '.join(MODEL_TYPES)}, got "
                         f"{model_type!r}")
    # WordPiece: the special tokens, then at least one character and its ## continuation
    # (the real minimum depends on the text's alphabet: vocab_builder names it).
    smallest = len(vocab_builder.SPECIAL_TOKENS) + 2
    if model_type == "wordpiece" and vocab_size < smallest:
        raise UsageError(f"--vocab_size={vocab_size} cannot hold the "
                         f"{len(vocab_builder.SPECIAL_TOKENS)} special tokens and a character "
                         f"with its ## continuation: the minimum is {smallest} (a real text "
                         "needs one entry per character and its continuation)")
    if character_coverage is not None and not 0 < character_coverage <= 1:
        raise UsageError(f"--character_coverage={character_coverage:g} must be above 0 and at "
                         "most 1 (the share of character occurrences the alphabet covers)")
    if max_piece_chars < 1:
        raise UsageError(f"--max_piece_chars={max_piece_chars} must be at least 1 (the longest "
                         "piece, in characters)")
    if min_count < 1:
        raise UsageError(f"--min_count={min_count} must be at least 1 (how often a word must "
                         "be seen to give pieces)")
    if input_sentence_size < 0:
        raise UsageError(f"--input_sentence_size={input_sentence_size} must be at least 0 (0: "
                         "every sentence)")
    if num_threads is not None and num_threads < 1:
        raise UsageError(f"--num_threads={num_threads} must be at least 1 (leave it out for "
                         "every core)")


def _corpus_files(input_files, output_dir: str) -> list[str]:
    """The input files, less what a run writes in output_dir (`--input="dir/*"
    --output_dir=dir` must not read a vocabulary back as text)."""
    own = {os.path.abspath(os.path.join(output_dir, name)) for name in (*OUTPUT_NAMES, LOCK_NAME)}
    files = [f for f in train_spm.expand_inputs(input_files)
             if not io_utils.is_local(f) or os.path.abspath(f) not in own]
    if not files:
        raise UsageError(f"--input {input_files} names only the outputs of train_vocab in "
                         f"--output_dir {output_dir}")
    return files


def _refuse_existing(output_dir: str) -> None:
    held = [name for name in OUTPUT_NAMES if tf.io.gfile.exists(os.path.join(output_dir, name))]
    if held:
        raise OutputError(f"--output_dir {output_dir} already holds a vocabulary "
                          f"({', '.join(held)}); replacing it would change what models trained "
                          "with it read: choose another --output_dir or remove those files")


def build_wordpiece(files, output_dir: str, vocab_size: int, do_lower_case: bool,
                    character_coverage: float, max_piece_chars: int, min_count: int,
                    stream=None) -> dict:
    progress = vocab_builder.Progress("train_vocab", stream=stream)
    words = vocab_builder.count_words(_lines(files, progress), do_lower_case, progress)
    if not words:
        raise train_spm.TrainingInputError(f"no text in --input ({', '.join(files[:3])})")
    progress(f"{len(words)} distinct words, {sum(words.values())} in all; learning pieces",
             force=True)
    vocab = vocab_builder.learn_wordpiece(
        words, vocab_size, character_coverage=character_coverage,
        max_piece_chars=max_piece_chars, min_count=min_count, progress=progress)
    path = os.path.join(output_dir, VOCAB_NAME)
    io_utils.write_text_atomically(path, "\n".join(vocab) + "\n")
    return {"vocab_file": VOCAB_NAME, "vocab_size": len(vocab), "words": len(words)}


def train_vocab(input_files, output_dir: str, model_type: str = "wordpiece",
                vocab_size: int = 30000, do_lower_case: bool = True, *,
                character_coverage: float | None = None, max_piece_chars: int = 8,
                min_count: int = 2, input_sentence_size: int = 10_000_000,
                num_threads: int | None = None, stream=None) -> dict:
    """Builds the vocabulary and its settings file in `output_dir`; returns the settings.

    One run per output_dir (the lock every script takes), and a folder that already holds a
    vocabulary is refused rather than replaced."""
    check_options(model_type, vocab_size, character_coverage, max_piece_chars, min_count,
                  input_sentence_size, num_threads)
    if not output_dir:
        raise UsageError("--output_dir is required")
    files = _corpus_files(input_files, output_dir)
    tf.io.gfile.makedirs(output_dir)
    with OutputDirLock(output_dir):
        _refuse_existing(output_dir)
        return _train(files, output_dir, model_type, vocab_size, do_lower_case,
                      character_coverage, max_piece_chars, min_count, input_sentence_size,
                      num_threads, stream)


def _train(files, output_dir, model_type, vocab_size, do_lower_case, character_coverage,
           max_piece_chars, min_count, input_sentence_size, num_threads, stream) -> dict:
    if character_coverage is None:  # the original README's for SentencePiece
        character_coverage = 0.9995 if model_type == "wordpiece" else 0.99995
    start = time.time()
    if model_type == "wordpiece":
        written = build_wordpiece(files, output_dir, vocab_size, do_lower_case,
                                  character_coverage, max_piece_chars, min_count, stream)
        rules = ("BERT basic tokenizer: clean text, CJK characters split, punctuation split"
                 + ("; lower-cased, accents stripped (NFD)" if do_lower_case else "; case and "
                    "accents kept"))
    else:
        train_spm.train_sentencepiece(
            files, os.path.join(output_dir, SPM_PREFIX), vocab_size, model_type=model_type,
            character_coverage=character_coverage, input_sentence_size=input_sentence_size,
            num_threads=num_threads, strict_utf8=True,
            transform=lambda line: preprocess_text(line, lower=do_lower_case))
        written = {"spm_model_file": SPM_PREFIX + ".model", "vocab_size": vocab_size}
        rules = ("the original's preprocess_text: spaces squeezed, NFKD, accents stripped"
                 + ("; lower-cased" if do_lower_case else "; case kept"))
    values = {"do_lower_case": bool(do_lower_case), "model_type": model_type, **written,
              "text_rules": rules}
    settings.write_settings(output_dir, values)
    print(f"train_vocab: wrote {os.path.join(output_dir, written.get('vocab_file') or written['spm_model_file'])}"
          f" and {settings.SETTINGS_FILE} ({values['vocab_size']} entries, do_lower_case="
          f"{str(bool(do_lower_case)).lower()}, {time.time() - start:.1f}s)",
          file=stream or sys.stderr, flush=True)
    return values


def check_sample(output_dir: str, values: dict, files) -> float:
    """The [UNK] rate of the first lines of the first input through the new vocabulary."""
    tokenizer = FullTokenizer(
        os.path.join(output_dir, values["vocab_file"]) if "vocab_file" in values else None,
        values["do_lower_case"],
        os.path.join(output_dir, values["spm_model_file"]) if "spm_model_file" in values else None)
    with io_utils.open_binary(files[0]) as reader:
        lines = []
        for raw in reader:
            line = raw.decode("utf-8", "ignore").strip()
            if line:
                lines.append(line if tokenizer.sp_model is None
                             else preprocess_text(line, lower=values["do_lower_case"]))
            if len(lines) >= 5000:
                break
    return unk.report_texts(tokenizer, lines, f"the first {len(lines)} lines of {files[0]}",
                            values["do_lower_case"])


FLAGS = flags.FLAGS


def define_flags() -> None:
    flags.DEFINE_string("input", None, "Comma-separated text files or globs, one sentence a line.")
    # The name every other script here uses for its text.
    flags.DEFINE_alias("input_file", "input")
    flags.DEFINE_string("output_dir", None, "Where the vocabulary and tokenizer_config.json go.")
    flags.DEFINE_enum("model_type", "wordpiece", list(MODEL_TYPES),
                      "wordpiece (vocab.txt, BERT-style) or a SentencePiece unigram/bpe model.")
    flags.DEFINE_integer("vocab_size", 30000, "Entries in the vocabulary.")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case (and strip accents) as the model will: "
                      "recorded in tokenizer_config.json. Korean: --nodo_lower_case.")
    flags.DEFINE_float("character_coverage", None, "Share of character occurrences the "
                       "alphabet covers, rarer ones become [UNK] (default: 0.9995 for wordpiece, "
                       "the original's 0.99995 for SentencePiece).")
    flags.DEFINE_integer("max_piece_chars", 8, "WordPiece: longest piece, in characters.")
    flags.DEFINE_integer("min_count", 2, "WordPiece: pieces come from words seen this often.")
    flags.DEFINE_integer("input_sentence_size", 10_000_000, "SentencePiece: at most this many "
                         "sentences used.")
    flags.DEFINE_integer("num_threads", None, "SentencePiece trainer threads (default: all).")


def main(argv) -> None:
    if len(argv) > 1:
        raise UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    values = train_vocab(FLAGS.input, FLAGS.output_dir, FLAGS.model_type, FLAGS.vocab_size,
                         FLAGS.do_lower_case, character_coverage=FLAGS.character_coverage,
                         max_piece_chars=FLAGS.max_piece_chars, min_count=FLAGS.min_count,
                         input_sentence_size=FLAGS.input_sentence_size,
                         num_threads=FLAGS.num_threads)
    check_sample(FLAGS.output_dir, values, _corpus_files(FLAGS.input, FLAGS.output_dir))


if __name__ == "__main__":
    define_flags()
    cli.run(main, required=["input", "output_dir"])
