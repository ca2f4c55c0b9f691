"""The paper run's data, built once: the user's documents split into training and held-out ones,
a tokenizer, and four record sets made by the normal pretraining-data engine:

    train_sop   train_nsp (--random_next_sentence)   heldout_sop   heldout_nsp

Held-out records come from documents no model trains on (every k-th document); both held-out
sets are balanced, and the SOP one leaves out the generator's random-document pairs, so it is
order alone (`heldout`). `data.json`, written last, records the settings; a re-run with the same
settings reuses everything, one with other settings is refused (the models in the folder were
trained on this data). The output_dir is a local folder; inputs may be anywhere tf.io.gfile reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os

from absl import logging

from albert_tf import io_utils
from albert_tf.errors import InputError, UsageError
from albert_tf.io_utils import atomic_output, write_text_atomically
from albert_tf.pretraining_data.heldout import heldout_records
from albert_tf.paper.plan import PaperOptions
from albert_tf.pretraining_data import documents, engines
from albert_tf.pretraining_data.options import PretrainingDataOptions
from albert_tf.tokenization import FullTokenizer
from albert_tf.train_spm import VocabularyTooLargeError, train_sentencepiece

KINDS = ("train_sop", "train_nsp", "heldout_sop", "heldout_nsp")
MIN_DOCUMENTS = 4
MIN_HELDOUT_PAIRS = 2  # one of each label: a held-out set the models can be scored on


def iter_documents(files):
    """Documents (lists of non-blank lines) of the files, read as the generator reads them (a
    blank line ends a document; undecodable lines skipped and logged)."""
    counters = documents.InputCounters()
    return documents.iter_documents(documents.iter_lines(files, counters), str.strip, counters)


def split_documents(files, train_path: str, heldout_path: str, heldout_fraction: float) -> dict:
    """Writes every k-th document (k = round(1 / heldout_fraction)) to `heldout_path`, the rest to
    `train_path`, one sentence per line with blank lines between documents."""
    every = max(2, round(1 / heldout_fraction))
    counts = {"train_documents": 0, "heldout_documents": 0, "train_lines": 0, "heldout_lines": 0}
    # Both parts under temporary names until the count is known to be enough: a refused input
    # leaves nothing behind.
    with atomic_output(train_path) as train_tmp, atomic_output(heldout_path) as heldout_tmp:
        with open(train_tmp, "w", encoding="utf-8") as train, \
                open(heldout_tmp, "w", encoding="utf-8") as heldout:
            for index, document in enumerate(iter_documents(files)):
                part = "heldout" if index % every == every - 1 else "train"
                (heldout if part == "heldout" else train).write("\n".join(document) + "\n\n")
                counts[f"{part}_documents"] += 1
                counts[f"{part}_lines"] += len(document)
        total = counts["train_documents"] + counts["heldout_documents"]
        if total < max(every, MIN_DOCUMENTS):
            raise InputError(
                f"--input_file={','.join(files)} holds {total} document(s); with "
                f"--heldout_fraction={heldout_fraction} every {every}th is held out, so the paper "
                f"run needs at least {max(every, MIN_DOCUMENTS)} (documents are separated by blank "
                "lines, one sentence a line; NSP draws its negatives from other documents)")
    return counts


def check_heldout(result: dict, directory: str, kind: str | None = None) -> None:
    """Every model is scored on each held-out set: one that holds fewer than a pair of each
    label cannot score them (it failed after all the training, as a KeyError)."""
    for name in [kind] if kind else [k for k in KINDS if k.startswith("heldout")]:
        found = int(result.get(f"{name}_instances", 0))
        if found < MIN_HELDOUT_PAIRS:
            read = result.get(f"{name}_selection", {}).get("read", "?")
            raise InputError(
                f"{directory}: the held-out {name.split('_')[1].upper()} set has {found} "
                f"pair(s) (of {read} made from {result.get('heldout_documents', '?')} held-out "
                f"document(s)); scoring needs at least {MIN_HELDOUT_PAIRS} (one of each label). "
                "Give more text, longer documents (several sentences each) or a larger "
                "--heldout_fraction; nothing was trained")


def _fingerprint(files) -> list:
    """Name, size and (local files) modification time of each input."""
    return [[io_utils.absolute_path(p), io_utils.file_size(p),
             int(os.path.getmtime(p)) if io_utils.is_local(p) else None] for p in files]


def data_settings(options: PaperOptions, files) -> dict:
    return {"input_files": _fingerprint(files), "spm_model_file": options.spm_model_file,
            "vocab_file": options.vocab_file, "do_lower_case": options.do_lower_case,
            "vocab_size": None if (options.spm_model_file or options.vocab_file)
            else options.vocab_size,
            "max_seq_length": options.max_seq_length,
            "max_predictions_per_seq": options.max_predictions_per_seq,
            "dupe_factor": options.dupe_factor, "heldout_fraction": options.heldout_fraction,
            "max_heldout_examples": options.max_heldout_examples,
            "eval_batch_size": options.eval_batch_size,
            "seed": options.seed}


def settings_key(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def read_record(path: str) -> dict:
    """A JSON record the run wrote (data.json, a model's marker, its scores): one `InputError`
    naming the file and line when it is damaged (truncated, edited), not a JSONDecodeError."""
    try:
        with open(path, "rb") as reader:
            record = json.loads(reader.read().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text (byte {error.start}); {_DAMAGED}") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); "
                         f"{_DAMAGED}") from None
    if not isinstance(record, dict) or not isinstance(record.get("settings", {}), dict):
        raise InputError(f"{path}: not the JSON object the paper run writes; {_DAMAGED}")
    return record


_DAMAGED = ("a damaged record of an earlier run: remove it (and what it describes, to be made "
            "again) or use a new --output_dir")


def check_same_settings(path: str, mine: dict, what: str) -> dict | None:
    """The record at `path` when its settings equal `mine`; None when there is none; a
    `UsageError` naming the first setting that differs otherwise."""
    if not os.path.exists(path):
        return None
    record = read_record(path)
    theirs = record.get("settings", {})
    differ = [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    if differ:
        key = differ[0]
        raise UsageError(
            f"{path}: this {what} was made with other settings ({key}: {theirs.get(key)!r} there, "
            f"{mine.get(key)!r} now); use a new --output_dir, or the same settings to reuse it")
    return record


def _record_options(options: PaperOptions, tokenizer: dict, text: str, output: str,
                    nsp: bool, dupe_factor: int) -> PretrainingDataOptions:
    return PretrainingDataOptions(
        input_file=text, output_file=output, vocab_file=tokenizer["vocab_file"],
        spm_model_file=tokenizer["spm_model_file"], do_lower_case=options.do_lower_case,
        random_next_sentence=nsp, max_seq_length=options.max_seq_length,
        max_predictions_per_seq=options.max_predictions_per_seq, dupe_factor=dupe_factor,
        random_seed=options.seed, num_workers=options.num_workers, progress_interval_s=60.0)


def _tokenizer(options: PaperOptions, directory: str, train_text: str, progress=print) -> dict:
    if options.spm_model_file or options.vocab_file:
        return {"spm_model_file": options.spm_model_file, "vocab_file": options.vocab_file,
                "trained": False}
    prefix = os.path.join(directory, "spm")
    try:
        model, vocab = train_sentencepiece([train_text], prefix, options.vocab_size,
                                           input_sentence_size=2_000_000)
    except VocabularyTooLargeError as error:
        # A small text (the demo's corpus) cannot fill the preset's vocabulary: size it to the
        # text, and say so.
        progress(f"[paper] data: the text makes at most {error.maximum} pieces, not "
                 f"{options.vocab_size}: training {error.maximum} (--vocab_size sets it)")
        model, vocab = train_sentencepiece([train_text], prefix, error.maximum,
                                           input_sentence_size=2_000_000)
    return {"spm_model_file": model, "vocab_file": vocab, "trained": True}


def tokenizer_vocab_size(tokenizer: dict, do_lower_case: bool) -> int:
    return len(FullTokenizer(vocab_file=tokenizer["vocab_file"], do_lower_case=do_lower_case,
                             spm_model_file=tokenizer["spm_model_file"]).vocab)


def build_data(options: PaperOptions, progress=print) -> dict:
    """Makes (or reuses) `<output_dir>/data`; returns data.json's `result`."""
    files = documents.expand_input_patterns(options.input_file)
    directory = os.path.join(options.output_dir, "data")
    marker = os.path.join(directory, "data.json")
    settings = data_settings(options, files)
    record = check_same_settings(marker, settings, "data")
    if record is not None:
        progress(f"[paper] data: reusing {directory}")
        check_heldout(record["result"], directory)
        return record["result"]
    os.makedirs(directory, exist_ok=True)
    progress(f"[paper] data: splitting {len(files)} file(s) into training and held-out documents")
    train_text = os.path.join(directory, "train.txt")
    heldout_text = os.path.join(directory, "heldout.txt")
    counts = split_documents(files, train_text, heldout_text, options.heldout_fraction)
    if not (options.spm_model_file or options.vocab_file):
        progress(f"[paper] data: training a {options.vocab_size}-piece SentencePiece model on "
                 "the training documents")
    tokenizer = _tokenizer(options, directory, train_text, progress)
    result = {"key": settings_key(settings), **counts, **tokenizer,
              "vocab_size": tokenizer_vocab_size(tokenizer, options.do_lower_case)}
    for kind in KINDS:
        split, task = kind.split("_")
        progress(f"[paper] data: {kind} records ({task.upper()} pairs from the {split} text)")
        output = os.path.join(directory, f"{kind}.tfrecord")
        heldout = split == "heldout"
        run = _record_options(options, tokenizer, heldout_text if heldout else train_text,
                              output.replace(".tfrecord", "_all.tfrecord") if heldout else output,
                              task == "nsp", 1 if heldout else options.dupe_factor)
        with contextlib.redirect_stdout(io.StringIO()):  # the engine prints its whole summary
            summary = engines.run(run)
        result[kind] = output
        result[f"{kind}_instances"] = summary["instances"]
        if heldout:
            counts = heldout_records(
                run.output_file, output, run, options.max_heldout_examples,
                options.eval_batch_size, iter_documents([heldout_text]) if task == "sop" else None)
            result[f"{kind}_instances"] = counts["kept"]
            result[f"{kind}_selection"] = counts
        logging.info("%s: %d instances", output, result[f"{kind}_instances"])
        if heldout:
            check_heldout(result, directory, kind)  # before any model trains on this data
    write_text_atomically(marker, json.dumps({"settings": settings, "result": result}, indent=1))
    return result
