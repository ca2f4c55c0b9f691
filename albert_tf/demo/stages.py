"""The demo's stages. Each runs the same library call as the matching command-line script and
records its result in `<stage>/stage.json`; a re-run with the same settings reuses it. Each
prints a header, its progress and a closing line through the demo's `Console`."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time

import numpy as np
from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.demo import corpus as corpus_lib
from albert_tf.demo.console import Console
from albert_tf.demo.options import DemoOptions
from albert_tf.errors import InputError
from albert_tf.pretraining_data import engines as pretraining_data
from albert_tf.pretraining_data import heldout
from albert_tf.pretraining_data.options import PretrainingDataOptions
from albert_tf.run_config import RuntimeConfig
from albert_tf.serving.lite import LiteClassifier
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.tasks.classification.task import run_classifier
from albert_tf.tasks.pretraining.task import PretrainingRunConfig, run_pretraining
from albert_tf.train_spm import VocabularyTooLargeError, train_sentencepiece
from albert_tf.weights.model_folder import write_tokenizer_files

# The TFLite files the fine-tuning export writes (the demo compares int8 with float32).
TFLITE_KINDS = "float32,dynamic_int8"
# The task's label names (corpus.REFERENCE, corpus.LIBRARY), for Python's documentation and for
# a user's text split in two.
PYTHON_LABELS = ("language reference", "library docstring")
OWN_TEXT_LABELS = ("odd document", "even document")
# Rough lengths on 2 CPU cores, for the "time left" of parts that report no progress.
EXPORT_S, FRESH_PROCESS_S = 25.0, 15.0
STAGES = 7
EVAL_BATCH = 64
# At most this many held-out order pairs (half in order), so that scoring them takes seconds
# on any text; the default text gives 6,464 (the bar, 0.5 + 1/sqrt(n), is then 0.512).
HELDOUT_PAIRS = 8192


def label_names(options: DemoOptions) -> tuple:
    return OWN_TEXT_LABELS if options.input_file else PYTHON_LABELS


class Stage:
    """Runs `fn()` unless `<dir>/stage.json` holds a result made with the same `settings`;
    `number`, `what`: its header; `gist(result)`: its closing line."""

    def __init__(self, number: int, name: str, what: str, directory: str, settings: dict,
                 console: Console, gist=None):
        self.number, self.name, self.what = number, name, what
        self.directory, self.settings, self.console = directory, settings, console
        self.gist = gist
        self.marker = os.path.join(directory, "stage.json")

    def cached(self):
        if not os.path.exists(self.marker):
            return None
        with open(self.marker) as f:
            record = json.load(f)
        return record["result"] if record.get("settings") == self.settings else None

    def run(self, fn) -> dict:
        self.console.header(self.number, self.name, self.what)
        result = self.cached()
        if result is not None:
            self.console.note(f"reusing finished stage in {self.directory}")
            return result
        if os.path.exists(self.directory):  # unfinished, or made with other settings
            shutil.rmtree(self.directory)
        os.makedirs(self.directory)
        start = time.time()
        result = fn()
        result["seconds"] = round(time.time() - start, 1)
        # What a later stage's settings name of this one: it is redone when this one changes.
        result["key"] = _sha256(json.dumps(self.settings, sort_keys=True).encode())
        tmp = self.marker + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"settings": self.settings, "result": result}, f, indent=2)
        os.replace(tmp, self.marker)
        gist = f": {self.gist(result)}" if self.gist else ""
        self.console.note(f"done in {result['seconds']:.0f} s{gist}")
        return result


def _settings(options: DemoOptions, *names) -> dict:
    return {n: getattr(options, n) for n in names}


def _sha256(*blobs) -> str:
    digest = hashlib.sha256()
    for blob in blobs:
        digest.update(blob)
    return digest.hexdigest()[:16]


def build_corpus(options: DemoOptions, console: Console) -> dict:
    """corpus.txt (pretraining text), heldout.txt, and the task's files (task/*.tsv)."""
    directory = options.path("corpus")

    def fn():
        if options.input_file:
            reference, library = corpus_lib.two_sources_from(options.input_file)
            unseen, source = [], options.input_file
        else:
            reference, library, unseen = corpus_lib.unique_sentences(
                corpus_lib.reference_documents(), corpus_lib.library_documents(),
                corpus_lib.dependency_documents())
            source = ("Python's shipped documentation (pydoc_data.topics + standard-library "
                      "docstrings); NumPy's, Keras' and TensorFlow's docstrings held out")
        documents = reference + library
        # Interleave, then hold every k-th document out of pretraining for the held-out checks,
        # followed by the libraries' docstrings (none of them pretraining text).
        every = max(2, round(1 / options.heldout_fraction))
        heldout = [d for i, d in enumerate(documents) if i % every == every - 1] + unseen
        train = [d for i, d in enumerate(documents) if i % every != every - 1]
        if not heldout:  # else create_pretraining_data fails on the empty held-out text
            raise InputError(f"{options.input_file}: {len(documents)} document(s); the demo "
                             f"holds every {every}th out of pretraining, so it needs at least "
                             f"{every} (one sentence a line, a blank line between documents)")
        stats = corpus_lib.write_corpus(os.path.join(directory, "corpus.txt"), train)
        corpus_lib.write_corpus(os.path.join(directory, "heldout.txt"), heldout)
        task = corpus_lib.source_task(reference, library, options.seed,
                                      max_per_class=options.max_task_examples // 2)
        write_task_files(os.path.join(directory, "task"), task, label_names(options))
        size = os.path.getsize(os.path.join(directory, "corpus.txt"))
        texts = ["corpus.txt", "heldout.txt", *(f"task/{s}.tsv" for s in ("train", "dev", "test"))]
        blobs = [open(os.path.join(directory, name), "rb").read() for name in texts]
        return {"source": source, "bytes": size, **stats, "heldout_documents": len(heldout),
                "digest": _sha256(*blobs),  # the text itself: another file is another corpus
                "task_sizes": {k: len(v) for k, v in task.items()},
                "majority_baseline": majority_baseline(task["dev"])}

    def gist(result):
        sizes = result["task_sizes"]
        return (f"{result['bytes'] / 1e6:.2f} MB, {result['documents']:,} documents, "
                f"{result['sentences']:,} sentences ({result['heldout_documents']:,} documents held "
                f"out); task {sizes['train']:,}/{sizes['dev']:,}/"
                f"{sizes['test']:,} sentences (train/dev/test)")

    what = "your text, one document per blank-line block" if options.input_file else \
        "Python's documentation (its libraries' docstrings held out)"
    return Stage(1, "corpus", what, directory,
                 # task_files: the task's file layout (a folder of the SST-2 layout is redone)
                 {**_settings(options, "input_file", "heldout_fraction", "max_task_examples",
                              "seed"), "task_files": "tsv with label names",
                  "text": "unique sentences, dependencies' docstrings held out"},
                 console, gist).run(fn)


def majority_baseline(rows) -> float:
    ones = sum(label for _, label in rows)
    return max(ones, len(rows) - ones) / max(1, len(rows))


def write_task_files(directory: str, task: dict, names) -> None:
    """train/dev/test.tsv with a `text` and a `label` column (the label's name), so
    `run_classifier.py --task_name=tsv --train_file=... ` trains on them and the export answers
    with the names. The test file has labels too: the closing table compares with them."""
    os.makedirs(directory, exist_ok=True)
    for split in ("train", "dev", "test"):
        with open(os.path.join(directory, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("text\tlabel\n")
            for sentence, label in task[split]:
                f.write(f"{_clean(sentence)}\t{names[label]}\n")


def _clean(sentence: str) -> str:
    return " ".join(sentence.replace("\t", " ").split())


def train_vocabulary(options: DemoOptions, corpus: dict, console: Console) -> dict:
    directory = options.path("spm")

    def fn():
        prefix = os.path.join(directory, "spm")
        text, size = [options.path("corpus", "corpus.txt")], options.vocab_size
        with console.part("training on corpus/corpus.txt", stderr=True):
            try:
                train_sentencepiece(text, prefix, size)
            except VocabularyTooLargeError as error:  # a small text: sized to it, as the paper kit
                console.note(f"the corpus makes at most {error.maximum:,} pieces, not {size:,}: "
                             f"training {error.maximum:,}")
                size = error.maximum
                train_sentencepiece(text, prefix, size)
        return {"model": prefix + ".model", "vocab": prefix + ".vocab", "vocab_size": size}

    return Stage(2, "sentencepiece", f"a unigram vocabulary of {options.vocab_size:,} pieces",
                 directory, {**_settings(options, "vocab_size"), "corpus": corpus.get("digest")},
                 console).run(fn)


def make_records(options: DemoOptions, spm: dict, console: Console) -> dict:
    directory = options.path("records")

    def fn():
        summaries, runs = {}, {}
        for name, source in (("train", "corpus.txt"), ("heldout", "heldout.txt")):
            runs[name] = run = PretrainingDataOptions(
                input_file=options.path("corpus", source),
                output_file=os.path.join(directory, f"{name}.tfrecord"),
                vocab_file=spm["vocab"], spm_model_file=spm["model"],
                max_seq_length=options.max_seq_length,
                max_predictions_per_seq=options.max_predictions_per_seq,
                # held out: each chunk of text once, so its pairs are independent draws
                dupe_factor=options.dupe_factor if name == "train" else 1,
                random_seed=options.seed, num_workers=options.num_workers)
            run.validate()
            with console.part(f"corpus/{source} -> records/{name}.tfrecord"):
                summaries[name] = pretraining_data.run(run)
        # Sentence order alone, balanced (the paper kit's held-out SOP set): pairs of one
        # held-out document, as many in order as swapped; chance is exactly 50 %.
        order = os.path.join(directory, "heldout_order.tfrecord")
        selection = heldout.heldout_records(
            runs["heldout"].output_file, order, runs["heldout"], max_examples=HELDOUT_PAIRS,
            multiple=EVAL_BATCH, documents=corpus_lib.read_documents(runs["heldout"].input_file))
        # Text whose every held-out sequence is one sentence (sentences as long as a sequence)
        # has no order pairs: its masked LM is still scored, on the generator's records.
        scored = order if selection["kept"] else runs["heldout"].output_file
        return {"train": os.path.join(directory, "train.tfrecord"), "heldout": scored,
                "train_instances": summaries["train"]["instances"],
                "heldout_instances": selection["kept"] or summaries["heldout"]["instances"],
                "order_pairs": selection["kept"], "heldout_selection": selection}

    return Stage(3, "create_pretraining_data",
                 f"instances of {options.max_seq_length} tokens, {options.max_predictions_per_seq} "
                 f"masked, {options.dupe_factor} dupes", directory,
                 {**_settings(options, "max_seq_length", "max_predictions_per_seq", "dupe_factor",
                              "seed"), "spm": spm["model"], "spm_stage": spm.get("key"),
                  "heldout": "sentence order alone, balanced", "heldout_pairs": HELDOUT_PAIRS},
                 console).run(fn)


def model_config(options: DemoOptions, vocab_size: int):
    return AlbertConfig(vocab_size=vocab_size, embedding_size=options.embedding_size,
                        hidden_size=options.hidden_size, num_hidden_layers=options.num_hidden_layers,
                        num_attention_heads=options.num_attention_heads,
                        intermediate_size=options.intermediate_size,
                        max_position_embeddings=max(128, options.max_seq_length),
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def pretrain(options: DemoOptions, spm: dict, records: dict, console: Console) -> dict:
    directory = options.path("pretrain")
    schedule = options.pretrain

    def fn():
        config_file = os.path.join(directory, "albert_config.json")
        model_config(options, spm.get("vocab_size", options.vocab_size)).to_json_file(config_file)
        common = dict(albert_config_file=config_file, max_seq_length=options.max_seq_length,
                      max_predictions_per_seq=options.max_predictions_per_seq)
        model_dir = os.path.join(directory, "model")
        config = PretrainingRunConfig.from_flat(dict(
            input_file=records["train"], output_dir=model_dir, shuffle_seed=options.seed,
            **common))
        precision = " in bf16" if options.pretrain_precision == "bf16" else ""
        with console.part(f"{schedule.num_train_steps} steps of {schedule.train_batch_size}"
                          f"{precision} (masked LM + sentence order)"):
            run_pretraining(dataclasses.replace(
                config, schedule=schedule,
                runtime=RuntimeConfig(mixed_precision=options.pretrain_precision)))
        # The folder is then usable alone: fine-tuning, export and conversion need no flag
        # besides --init_checkpoint=pretrain/model.
        write_tokenizer_files(model_dir, spm_model_file=spm["model"])
        # Whole batches, each pair once (the reader repeats the file to fill the last one).
        batch = min(EVAL_BATCH, records["heldout_instances"])
        batches = records["heldout_instances"] // batch
        with console.part(f"scoring {batches * batch:,} held-out pairs"):
            results = run_pretraining(PretrainingRunConfig.from_flat(dict(
                input_file=records["heldout"], output_dir=os.path.join(directory, "heldout_eval"),
                init_checkpoint=model_dir, do_train=False, do_eval=True,
                eval_batch_size=batch, max_eval_steps=batches, **common)))
        logging.info("held-out results: %s", results)
        return {"config": config_file, "checkpoint_dir": model_dir,
                "vocab_size": spm.get("vocab_size", options.vocab_size),
                **{k: float(results[k]) for k in ("masked_lm_accuracy", "sentence_order_accuracy",
                                                  "masked_lm_loss", "sentence_order_loss")},
                "heldout_examples": batches * batch,
                # sentence order is scored only on order pairs (see make_records)
                "sentence_order_scored": bool(records.get("order_pairs"))}

    def gist(result):
        sop = (f"SOP accuracy {result['sentence_order_accuracy']:.3f}"
               if result["sentence_order_scored"] else "SOP not scored (no order pairs)")
        return f"held-out MLM accuracy {result['masked_lm_accuracy']:.3f}, {sop}"

    return Stage(4, "pretraining",
                 f"a {options.num_hidden_layers}-layer ALBERT (H={options.hidden_size}, "
                 f"E={options.embedding_size}, one shared block)", directory,
                 {**_settings(options, "hidden_size", "embedding_size", "num_hidden_layers",
                              "num_attention_heads", "intermediate_size", "pretrain_precision"),
                  "schedule": dataclasses.asdict(schedule),
                  "records": records["train_instances"], "records_stage": records.get("key")},
                 console, gist).run(fn)


def finetune(options: DemoOptions, pretrained: dict, corpus: dict, console: Console) -> dict:
    directory = options.path("finetune")
    schedule = options.finetune
    names = label_names(options)

    def fn():
        task = options.path("corpus", "task")
        # Config and tokenizer come from the pretrained folder (--init_checkpoint alone).
        config = ClassifierRunConfig.from_flat(dict(
            task_name="tsv", train_file=os.path.join(task, "train.tsv"),
            dev_file=os.path.join(task, "dev.tsv"), test_file=os.path.join(task, "test.tsv"),
            label_list=",".join(names), output_dir=os.path.join(directory, "model"),
            init_checkpoint=pretrained["checkpoint_dir"], max_seq_length=options.max_seq_length,
            do_train=True, do_eval=True, do_predict=True, seed=options.seed,
            export_dir=os.path.join(directory, "export"), tflite=TFLITE_KINDS))
        with console.part(f"{schedule.num_train_steps} steps of {schedule.train_batch_size}",
                          after="evaluation on dev, test predictions, the export (SavedModel "
                                "and two TFLite files, checked in a fresh process)",
                          after_s=EXPORT_S):
            result = run_classifier(dataclasses.replace(config, schedule=schedule))
        return {"eval_accuracy": float(result["eval"]["eval_accuracy"]),
                "majority_baseline": corpus["majority_baseline"],
                "export_dir": result["export"], "output_dir": os.path.join(directory, "model")}

    def gist(result):
        return (f"dev accuracy {result['eval_accuracy']:.3f} (majority class "
                f"{result['majority_baseline']:.3f}); export {result['export_dir']}")

    return Stage(5, "fine-tuning", f"which of {names[0]!r} or {names[1]!r} a sentence is",
                 directory, {**_settings(options, "max_seq_length"),
                             "schedule": dataclasses.asdict(schedule),
                             "pretrained": pretrained["checkpoint_dir"],
                             "pretrain_seconds": pretrained["seconds"], "tflite": TFLITE_KINDS,
                             "pretrain_stage": pretrained.get("key"),
                             "labels": list(names)}, console, gist).run(fn)


def read_task_split(options: DemoOptions, split: str) -> tuple[list, list]:
    """(sentences, label names) of the task's `split`."""
    with open(options.path("corpus", "task", f"{split}.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [r[0] for r in rows], [r[1] for r in rows]


def lite(options: DemoOptions, finetuned: dict, console: Console) -> dict:
    """The fine-tuned classifier's TFLite files (written by the fine-tuning export) on the dev
    set through `albert_tf.lite.LiteClassifier`: accuracy, size and one-sentence latency."""
    directory = options.path("lite")
    # The TFLite files of the SavedModel <export>/<n> are <export>/tflite/<n>.
    export, version = os.path.split(finetuned["export_dir"])
    folder = os.path.join(export, "tflite", version)

    def fn():
        sentences, labels = read_task_split(options, "dev")
        result = {"folder": folder}
        for kind in TFLITE_KINDS.split(","):
            classifier = LiteClassifier.from_folder(folder, kind=kind)
            ids = np.array([classifier.label_names.index(label) for label in labels])
            with console.part(f"{kind}: {len(sentences):,} dev sentences"):
                probabilities = np.concatenate([classifier.predict(sentences[i:i + 64])
                                                for i in range(0, len(sentences), 64)])
            times = []
            for _ in range(21):
                start = time.perf_counter()
                classifier.predict(sentences[:1])
                times.append(time.perf_counter() - start)
            result[kind] = {"dev_accuracy": float(np.mean(probabilities.argmax(-1) == ids)),
                            "megabytes": os.path.getsize(classifier.path) / 1e6,
                            "b1_ms": float(np.median(times[1:]) * 1e3), "file": classifier.path}
        return result

    def gist(result):
        small = result["dynamic_int8"]
        return (f"int8 {small['megabytes']:.2f} MB, dev accuracy {small['dev_accuracy']:.3f}, "
                f"{small['b1_ms']:.1f} ms a sentence")

    return Stage(7, "tflite", "the export's float32 and int8 .tflite files on the dev set",
                 directory, {"export_dir": finetuned["export_dir"],
                             "fine_tuning_seconds": finetuned["seconds"],
                             "fine_tuning_stage": finetuned.get("key")}, console, gist).run(fn)
