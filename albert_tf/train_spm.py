"""Trains an ALBERT SentencePiece model with the original README's options (the old name:
`python -m albert_tf.train_vocab --model_type=unigram|bpe|wordpiece` also writes the
tokenizer_config.json the other scripts take the casing from).

    python -m albert_tf.train_spm --input=corpus/*.txt --model_prefix=30k-clean --vocab_size=30000

Defaults follow the README's `spm_train` command: unigram, `<pad>`=0, `<unk>`=1, no BOS/EOS,
control symbols `[CLS]`, `[SEP]`, `[MASK]` (ids 2-4), the user-defined symbols
`( ) " - . – £ €`, character coverage 0.99995, 10M shuffled input sentences. Text is read
through `tf.io.gfile` (so gs:// inputs work) one line per sentence; `<model_prefix>.vocab` and
`<model_prefix>.model` appear only once complete (the .model last). A bad input ends the
command with one `error: ...` line naming it.
"""

from __future__ import annotations

if __name__ == "__main__":
    from albert_tf import cli

    cli.quiet_tensorflow()  # before TensorFlow loads

import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import sentencepiece as spm  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import flags, logging  # noqa: E402

from albert_tf import io_utils  # noqa: E402
from albert_tf.errors import InputError, UsageError  # noqa: E402

CONTROL_SYMBOLS = ("[CLS]", "[SEP]", "[MASK]")
USER_DEFINED_SYMBOLS = ("(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac")
SPECIAL_IDS = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}


class NoInputError(InputError, FileNotFoundError):
    """--input names no file (an InputError, and a FileNotFoundError as before)."""


class TrainingInputError(InputError, RuntimeError):
    """SentencePiece could not train on the input (an InputError, and a RuntimeError as before)."""


class VocabularyTooLargeError(TrainingInputError):
    """The text holds fewer distinct pieces than `--vocab_size` asks for; `maximum`: the most
    SentencePiece can make of it."""

    def __init__(self, message: str, maximum: int):
        super().__init__(message)
        self.maximum = maximum


# SentencePiece's words when the text cannot fill the vocabulary.
_TOO_HIGH = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")


def expand_inputs(inputs) -> list[str]:
    """Comma-separated string or list of files/globs → sorted file list (error names the pattern).
    Globs skip folders and our writers' temporaries and side files."""
    return io_utils.glob_inputs(inputs, NoInputError,
                                no_match="--input pattern {pattern!r} matches no file",
                                empty="--input names no file")


def undecodable(path: str, line_number: int, line_offset: int, raw: bytes,
                error: UnicodeDecodeError) -> InputError:
    """The error for a line that is not UTF-8 (a GBK or Latin-1 corpus): file, line and byte."""
    return InputError(
        f"{path}:{line_number}: not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte "
        f"{line_offset + error.start} of the file); the corpus must be UTF-8: convert it "
        "first (e.g. iconv -f GBK -t UTF-8)")


class _SentenceReader:
    """Yields non-blank lines of the input files and prints a progress line now and then.
    `strict`: a line that is not UTF-8 stops the run (`self.error`, named by file, line and
    byte) instead of losing its bytes."""

    def __init__(self, files, progress_every: int, stream=None, transform=None,
                 strict: bool = False):
        self.files = files
        self.transform = transform  # e.g. the casing the model will apply (train_vocab)
        self.progress_every = progress_every
        self.stream = stream
        self.strict = strict
        self.error = None
        self.sentences = 0
        self.bytes = 0

    def _progress(self, note: str) -> None:
        print(f"train_spm: {note}: {self.sentences} sentences, {self.bytes / 1e6:.1f} MB read",
              file=self.stream or sys.stderr, flush=True)

    def __iter__(self):
        for index, path in enumerate(self.files):
            with io_utils.open_binary(path) as reader:  # a pipe too (gfile reads it as empty)
                offset = 0
                for line_number, raw in enumerate(reader, 1):
                    try:
                        line = raw.decode("utf-8")
                    except UnicodeDecodeError as error:
                        if self.strict:
                            # SentencePiece wraps what its iterator raises in a RuntimeError:
                            # the caller raises this one instead.
                            self.error = undecodable(path, line_number, offset, raw, error)
                            raise self.error from None
                        # As the original readers do: undecodable bytes are dropped.
                        logging.log_first_n(logging.WARNING, "%s:%d is not valid UTF-8; invalid "
                                            "bytes dropped", 5, path, line_number)
                        line = raw.decode("utf-8", "ignore")
                    offset += len(raw)
                    line = line.strip()
                    if line and self.transform is not None:
                        line = self.transform(line)
                    if not line:
                        continue
                    self.sentences += 1
                    self.bytes += len(raw)
                    if self.sentences % self.progress_every == 0:
                        self._progress(f"file {index + 1}/{len(self.files)}")
                    yield line
        self._progress("input done")


def _publish(source: str, target: str) -> None:
    temporary = f"{target}.tmp-{os.getpid()}"
    tf.io.gfile.copy(source, temporary, overwrite=True)
    tf.io.gfile.rename(temporary, target, overwrite=True)


def check_special_ids(model_file: str) -> None:
    processor = spm.SentencePieceProcessor(model_file=model_file)
    wrong = {piece: processor.PieceToId(piece) for piece, want in SPECIAL_IDS.items()
             if processor.PieceToId(piece) != want or processor.IdToPiece(want) != piece}
    if wrong:
        raise RuntimeError(f"{model_file}: special pieces have unexpected ids {wrong}; "
                           f"expected {SPECIAL_IDS}")


def train_sentencepiece(input_files, model_prefix: str, vocab_size: int = 30000, *,
                        model_type: str = "unigram", character_coverage: float = 0.99995,
                        input_sentence_size: int = 10_000_000, shuffle_input_sentence: bool = True,
                        control_symbols=CONTROL_SYMBOLS, user_defined_symbols=USER_DEFINED_SYMBOLS,
                        num_threads: int | None = None, progress_every: int = 100_000,
                        quiet: bool = True, transform=None, strict_utf8: bool = False,
                        **extra_options) -> tuple[str, str]:
    """Trains and writes `<model_prefix>.model` and `.vocab` atomically; returns both paths.

    `input_files`: files or globs (list or comma-separated string), one sentence per line.
    `extra_options` go to `SentencePieceTrainer.train` unchanged (e.g. `seed_sentencepiece_size`).
    `transform`: applied to each stripped line before training (train_vocab: the casing).
    `strict_utf8`: a line that is not UTF-8 is an `InputError` (file, line, byte), not dropped.
    """
    files = expand_inputs(input_files)
    reserved = len(SPECIAL_IDS) + len(user_defined_symbols)
    if vocab_size <= reserved:
        raise UsageError(f"--vocab_size={vocab_size} leaves no room beyond the {reserved} "
                         f"special and user-defined symbols: the minimum is {reserved + 1}")
    reader = _SentenceReader(files, progress_every, transform=transform, strict=strict_utf8)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="train_spm_") as workdir:
        local_prefix = os.path.join(workdir, "spm")
        options = dict(
            model_type=model_type, vocab_size=vocab_size, pad_id=0, unk_id=1, bos_id=-1,
            eos_id=-1, control_symbols=list(control_symbols),
            user_defined_symbols=list(user_defined_symbols),
            character_coverage=character_coverage, input_sentence_size=input_sentence_size,
            shuffle_input_sentence=shuffle_input_sentence,
            num_threads=num_threads or os.cpu_count() or 1)
        if quiet:
            options["minloglevel"] = 1
        options.update(extra_options)
        try:
            spm.SentencePieceTrainer.train(sentence_iterator=iter(reader),
                                           model_prefix=local_prefix, **options)
        except RuntimeError as error:
            if reader.error is not None:
                raise reader.error from None
            named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            if reader.sentences == 0:
                raise TrainingInputError(f"no text in --input ({named}): every line is "
                                         "blank") from None
            too_high = _TOO_HIGH.search(str(error))
            if too_high:
                maximum = int(too_high.group(2))
                raise VocabularyTooLargeError(
                    f"--vocab_size={vocab_size} is more pieces than SentencePiece can make of "
                    f"{named} ({reader.sentences} sentences): at most {maximum}; pass "
                    f"--vocab_size={maximum} or less, or more text", maximum) from None
            raise TrainingInputError(f"SentencePiece training on {len(files)} file(s) "
                                     f"({named}) failed: {error}") from None
        check_special_ids(local_prefix + ".model")
        parent = os.path.dirname(model_prefix)
        if parent:
            tf.io.gfile.makedirs(parent)
        _publish(local_prefix + ".vocab", model_prefix + ".vocab")
        _publish(local_prefix + ".model", model_prefix + ".model")
    print(f"train_spm: wrote {model_prefix}.model and .vocab ({vocab_size} pieces, "
          f"{reader.sentences} sentences, {time.time() - start:.1f}s)", file=sys.stderr,
          flush=True)
    return model_prefix + ".model", model_prefix + ".vocab"


FLAGS = flags.FLAGS


def define_flags() -> None:
    flags.DEFINE_string("input", None, "Comma-separated text files or globs, one sentence a line.")
    flags.DEFINE_string("model_prefix", None, "Output prefix: writes <prefix>.model and .vocab.")
    flags.DEFINE_integer("vocab_size", 30000, "Number of pieces.")
    flags.DEFINE_string("model_type", "unigram", "unigram, bpe, char or word.")
    flags.DEFINE_float("character_coverage", 0.99995, "Share of characters the model covers.")
    flags.DEFINE_integer("input_sentence_size", 10_000_000, "At most this many sentences used.")
    flags.DEFINE_bool("shuffle_input_sentence", True, "Sample the sentences at random.")
    flags.DEFINE_list("control_symbols", list(CONTROL_SYMBOLS), "Control symbols (ids from 2).")
    flags.DEFINE_list("user_defined_symbols", list(USER_DEFINED_SYMBOLS),
                      "User-defined symbols, after the control symbols.")
    flags.DEFINE_integer("num_threads", None, "Trainer threads (default: all cores).")
    flags.DEFINE_bool("quiet", True, "Hide SentencePiece's own log (progress lines remain).")


def main(argv) -> None:
    if len(argv) > 1:
        raise UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    train_sentencepiece(
        FLAGS.input, FLAGS.model_prefix, FLAGS.vocab_size, model_type=FLAGS.model_type,
        character_coverage=FLAGS.character_coverage,
        input_sentence_size=FLAGS.input_sentence_size,
        shuffle_input_sentence=FLAGS.shuffle_input_sentence,
        control_symbols=FLAGS.control_symbols, user_defined_symbols=FLAGS.user_defined_symbols,
        num_threads=FLAGS.num_threads, quiet=FLAGS.quiet)


if __name__ == "__main__":
    define_flags()
    cli.run(main, required=["input", "model_prefix"])
