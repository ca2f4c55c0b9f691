"""The demo's stages. Each runs the same library call as the matching command-line script and
records its result in `<stage>/stage.json`; a re-run with the same settings reuses it."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time

from absl import logging

from albert_tf.config import AlbertConfig
from albert_tf.demo import corpus as corpus_lib
from albert_tf.pretraining_data import engines as pretraining_data
from albert_tf.pretraining_data.options import PretrainingDataOptions
from albert_tf.run_config import ScheduleConfig
from albert_tf.serving.lite import LiteClassifier
from albert_tf.tasks.classification.config import GlueRunConfig
from albert_tf.tasks.classification.task import run_glue
from albert_tf.tasks.pretraining.task import PretrainingRunConfig, run_pretraining
from albert_tf.train_spm import train_sentencepiece

# The TFLite files the fine-tuning export writes (the demo compares int8 with float32).
TFLITE_KINDS = "float32,dynamic_int8"


def demo_schedule(steps: int, batch_size: int, learning_rate: float,
                  optimizer: str = "adamw") -> ScheduleConfig:
    """`steps` steps of `batch_size`, a tenth of them warm-up, one checkpoint at the end."""
    return ScheduleConfig(train_batch_size=batch_size, eval_batch_size=64, predict_batch_size=64,
                          learning_rate=learning_rate, optimizer=optimizer, num_train_steps=steps,
                          num_warmup_steps=steps // 10, save_checkpoints_steps=steps,
                          log_every_steps=max(1, steps // 10))


def with_steps(schedule: ScheduleConfig, steps: int) -> ScheduleConfig:
    """`schedule` stretched to `steps` (its warm-up and checkpoint follow)."""
    return demo_schedule(steps, schedule.train_batch_size, schedule.learning_rate,
                         schedule.optimizer)


@dataclasses.dataclass
class DemoOptions:
    output_dir: str = "albert_demo"
    input_file: str | None = None     # the user's text; default: Python's own documentation
    vocab_size: int = 3000
    max_seq_length: int = 64
    max_predictions_per_seq: int = 10
    dupe_factor: int = 4
    heldout_fraction: float = 0.1
    hidden_size: int = 128
    embedding_size: int = 64
    num_hidden_layers: int = 6
    num_attention_heads: int = 4
    intermediate_size: int = 512
    pretrain: ScheduleConfig = dataclasses.field(
        default_factory=lambda: demo_schedule(800, 64, 2e-3, "lamb"))
    finetune: ScheduleConfig = dataclasses.field(
        default_factory=lambda: demo_schedule(300, 32, 1e-4))
    max_task_examples: int = 4000
    num_workers: int = 0
    seed: int = 12345

    def path(self, *parts) -> str:
        return os.path.join(self.output_dir, *parts)


class Stage:
    """Runs `fn()` unless `<dir>/stage.json` holds a result made with the same `settings`."""

    def __init__(self, name: str, directory: str, settings: dict):
        self.name, self.directory, self.settings = name, directory, settings
        self.marker = os.path.join(directory, "stage.json")

    def cached(self):
        if not os.path.exists(self.marker):
            return None
        with open(self.marker) as f:
            record = json.load(f)
        return record["result"] if record.get("settings") == self.settings else None

    def run(self, fn) -> dict:
        result = self.cached()
        if result is not None:
            print(f"[{self.name}] reusing finished stage in {self.directory}", flush=True)
            return result
        if os.path.exists(self.directory):  # unfinished, or made with other settings
            shutil.rmtree(self.directory)
        os.makedirs(self.directory)
        print(f"[{self.name}] running ...", flush=True)
        start = time.time()
        result = fn()
        result["seconds"] = round(time.time() - start, 1)
        tmp = self.marker + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"settings": self.settings, "result": result}, f, indent=2)
        os.replace(tmp, self.marker)
        print(f"[{self.name}] done in {result['seconds']} s", flush=True)
        return result


def _settings(options: DemoOptions, *names) -> dict:
    return {n: getattr(options, n) for n in names}


def build_corpus(options: DemoOptions) -> dict:
    """corpus.txt (pretraining text), heldout.txt, and the SST-2-style task files."""
    directory = options.path("corpus")

    def fn():
        if options.input_file:
            reference, library = corpus_lib.two_sources_from(options.input_file)
            source = options.input_file
        else:
            reference, library = corpus_lib.reference_documents(), corpus_lib.library_documents()
            source = "Python's shipped documentation (pydoc_data.topics + standard-library docstrings)"
        documents = reference + library
        # Interleave, then hold every k-th document out of pretraining for the held-out check.
        every = max(2, round(1 / options.heldout_fraction))
        heldout = [d for i, d in enumerate(documents) if i % every == every - 1]
        train = [d for i, d in enumerate(documents) if i % every != every - 1]
        stats = corpus_lib.write_corpus(os.path.join(directory, "corpus.txt"), train)
        corpus_lib.write_corpus(os.path.join(directory, "heldout.txt"), heldout)
        task = corpus_lib.source_task(reference, library, options.seed,
                                      max_per_class=options.max_task_examples // 2)
        write_sst2_layout(os.path.join(directory, "task", "SST-2"), task)
        size = os.path.getsize(os.path.join(directory, "corpus.txt"))
        return {"source": source, "bytes": size, **stats, "heldout_documents": len(heldout),
                "task_sizes": {k: len(v) for k, v in task.items()},
                "majority_baseline": majority_baseline(task["dev"])}

    return Stage("corpus", directory, _settings(options, "input_file", "heldout_fraction",
                                                 "max_task_examples", "seed")).run(fn)


def majority_baseline(rows) -> float:
    ones = sum(label for _, label in rows)
    return max(ones, len(rows) - ones) / max(1, len(rows))


def write_sst2_layout(directory: str, task: dict) -> None:
    """The GLUE SST-2 file format, so `run_classifier.py --task_name=sst-2` trains on it."""
    os.makedirs(directory, exist_ok=True)
    for split in ("train", "dev"):
        with open(os.path.join(directory, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("sentence\tlabel\n")
            for sentence, label in task[split]:
                f.write(f"{_clean(sentence)}\t{label}\n")
    with open(os.path.join(directory, "test.tsv"), "w", encoding="utf-8") as f:
        f.write("index\tsentence\n")
        for i, (sentence, _) in enumerate(task["test"]):
            f.write(f"{i}\t{_clean(sentence)}\n")


def _clean(sentence: str) -> str:
    return " ".join(sentence.replace("\t", " ").split())


def train_vocabulary(options: DemoOptions, corpus: dict) -> dict:
    directory = options.path("spm")

    def fn():
        prefix = os.path.join(directory, "spm")
        train_sentencepiece([options.path("corpus", "corpus.txt")], prefix, options.vocab_size)
        return {"model": prefix + ".model", "vocab": prefix + ".vocab"}

    return Stage("sentencepiece", directory,
                 {**_settings(options, "vocab_size"), "corpus_bytes": corpus["bytes"]}).run(fn)


def make_records(options: DemoOptions, spm: dict) -> dict:
    directory = options.path("records")

    def fn():
        summaries = {}
        for name, source in (("train", "corpus.txt"), ("heldout", "heldout.txt")):
            run = PretrainingDataOptions(
                input_file=options.path("corpus", source),
                output_file=os.path.join(directory, f"{name}.tfrecord"),
                vocab_file=spm["vocab"], spm_model_file=spm["model"],
                max_seq_length=options.max_seq_length,
                max_predictions_per_seq=options.max_predictions_per_seq,
                dupe_factor=options.dupe_factor if name == "train" else 3,
                random_seed=options.seed, num_workers=options.num_workers)
            run.validate()
            summaries[name] = pretraining_data.run(run)
        return {"train": os.path.join(directory, "train.tfrecord"),
                "heldout": os.path.join(directory, "heldout.tfrecord"),
                "train_instances": summaries["train"]["instances"],
                "heldout_instances": summaries["heldout"]["instances"]}

    return Stage("create_pretraining_data", directory,
                 {**_settings(options, "max_seq_length", "max_predictions_per_seq", "dupe_factor",
                              "seed"), "spm": spm["model"]}).run(fn)


def model_config(options: DemoOptions, vocab_size: int):
    return AlbertConfig(vocab_size=vocab_size, embedding_size=options.embedding_size,
                        hidden_size=options.hidden_size, num_hidden_layers=options.num_hidden_layers,
                        num_attention_heads=options.num_attention_heads,
                        intermediate_size=options.intermediate_size,
                        max_position_embeddings=max(128, options.max_seq_length),
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def pretrain(options: DemoOptions, records: dict) -> dict:
    directory = options.path("pretrain")

    def fn():
        config_file = os.path.join(directory, "albert_config.json")
        model_config(options, options.vocab_size).to_json_file(config_file)
        common = dict(albert_config_file=config_file, max_seq_length=options.max_seq_length,
                      max_predictions_per_seq=options.max_predictions_per_seq)
        config = PretrainingRunConfig.from_flat(dict(
            input_file=records["train"], output_dir=os.path.join(directory, "model"),
            shuffle_seed=options.seed, **common))
        run_pretraining(dataclasses.replace(config, schedule=options.pretrain))
        batches = max(1, records["heldout_instances"] // 64)
        results = run_pretraining(PretrainingRunConfig.from_flat(dict(
            input_file=records["heldout"], output_dir=os.path.join(directory, "heldout_eval"),
            init_checkpoint=os.path.join(directory, "model"), do_train=False, do_eval=True,
            eval_batch_size=64, max_eval_steps=batches, **common)))
        logging.info("held-out results: %s", results)
        return {"config": config_file, "checkpoint_dir": os.path.join(directory, "model"),
                **{k: float(results[k]) for k in ("masked_lm_accuracy", "sentence_order_accuracy",
                                                  "masked_lm_loss", "sentence_order_loss")},
                "heldout_examples": batches * 64}

    return Stage("pretraining", directory, {**_settings(
        options, "hidden_size", "embedding_size", "num_hidden_layers", "num_attention_heads",
        "intermediate_size"), "schedule": dataclasses.asdict(options.pretrain),
        "records": records["train_instances"]}).run(fn)


def finetune(options: DemoOptions, spm: dict, pretrained: dict, corpus: dict) -> dict:
    directory = options.path("finetune")

    def fn():
        config = GlueRunConfig.from_flat(dict(
            data_dir=options.path("corpus", "task"), task_name="sst-2",
            output_dir=os.path.join(directory, "model"), albert_config_file=pretrained["config"],
            spm_model_file=spm["model"], vocab_file=spm["vocab"],
            init_checkpoint=pretrained["checkpoint_dir"], max_seq_length=options.max_seq_length,
            do_train=True, do_eval=True, do_predict=True, seed=options.seed,
            export_dir=os.path.join(directory, "export"), tflite=TFLITE_KINDS))
        result = run_glue(dataclasses.replace(config, schedule=options.finetune))
        return {"eval_accuracy": float(result["eval"]["eval_accuracy"]),
                "majority_baseline": corpus["majority_baseline"],
                "export_dir": result["export"], "output_dir": os.path.join(directory, "model")}

    return Stage("fine-tuning", directory, {**_settings(
        options, "max_seq_length"), "schedule": dataclasses.asdict(options.finetune),
        "pretrained": pretrained["checkpoint_dir"], "pretrain_seconds": pretrained["seconds"],
        "tflite": TFLITE_KINDS}).run(fn)


def lite(options: DemoOptions, finetuned: dict) -> dict:
    """The fine-tuned classifier's TFLite files (written by the fine-tuning export) on the dev
    set through `albert_tf.serving.lite.LiteClassifier`: accuracy, size and one-sentence latency."""
    import numpy as np

    directory = options.path("lite")
    # The TFLite files of the SavedModel <export>/<n> are <export>/tflite/<n>.
    export, version = os.path.split(finetuned["export_dir"])
    folder = os.path.join(export, "tflite", version)

    def fn():
        with open(options.path("corpus", "task", "SST-2", "dev.tsv"), encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        sentences, labels = [r[0] for r in rows], np.array([int(r[1]) for r in rows])
        result = {"folder": folder}
        for kind in TFLITE_KINDS.split(","):
            classifier = LiteClassifier.from_folder(folder, kind=kind)
            probabilities = np.concatenate([classifier.predict(sentences[i:i + 64])
                                            for i in range(0, len(sentences), 64)])
            times = []
            for _ in range(21):
                start = time.perf_counter()
                classifier.predict(sentences[:1])
                times.append(time.perf_counter() - start)
            result[kind] = {"dev_accuracy": float(np.mean(probabilities.argmax(-1) == labels)),
                            "megabytes": os.path.getsize(classifier.path) / 1e6,
                            "b1_ms": float(np.median(times[1:]) * 1e3), "file": classifier.path}
        return result

    return Stage("tflite", directory, {"export_dir": finetuned["export_dir"],
                                       "fine_tuning_seconds": finetuned["seconds"]}).run(fn)
