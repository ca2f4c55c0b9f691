"""Runs the demo's stages in order and prints the closing summary."""

from __future__ import annotations

import json
import math
import os
import textwrap
import time

import numpy as np

from albert_tf.demo import stages
from albert_tf.demo.console import Console, demo_logging
from albert_tf.demo.stages import DemoOptions
from albert_tf.serving.lite import LiteClassifier
from albert_tf.serving.verify import verify_in_fresh_process

# (sentence, index of its label in stages.PYTHON_LABELS): a language-reference sentence or a
# standard-library docstring, none of them in the corpus.
SAMPLES = (
    ("The expression is evaluated once and the resulting object is bound to the target name.", 0),
    ("Return a new list containing all items from the iterable in ascending order.", 1),
    ("If the class defines a method with this name, it is called when the instance is created.", 0),
    ("Open the file and return a stream; raise OSError upon failure.", 1),
)
SAMPLE_SENTENCES = tuple(sentence for sentence, _ in SAMPLES)
WIDTH = 78


def classify_in_fresh_process(export_dir: str, sentences) -> list[dict]:
    """What a serving client sees: the export loaded anew, raw text in (signature `serve_text`),
    label names out."""
    out = verify_in_fresh_process(export_dir, {"serve_text": {"text_a": np.array(sentences)}})["serve_text"]
    return [{"sentence": s, "label": _text(name), "probability": float(max(q))}
            for s, name, q in zip(sentences, out["labels"], out["probabilities"])]


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def classify_with_tflite(folder: str, sentences) -> list[dict]:
    """What a device app does: the int8 .tflite file, our Python tokenizer, raw text in."""
    classifier = LiteClassifier.from_folder(folder, kind="dynamic_int8")
    probabilities = classifier.predict(list(sentences))
    return [{"sentence": s, "label": classifier.label_names[int(np.argmax(q))],
             "probability": float(max(q))} for s, q in zip(sentences, probabilities)]


def serve(options: DemoOptions, finetuned: dict, console: Console) -> list[dict]:
    """Stage 6: the export answers the sample sentences in a fresh process; reused, as every
    stage is, while the export it served is the same."""

    def fn():
        with console.part("loading it in a fresh process (as TF Serving would)",
                          expected_s=stages.FRESH_PROCESS_S):
            predictions = classify_in_fresh_process(finetuned["export_dir"], SAMPLE_SENTENCES)
        expected = expected_labels(options)
        right = sum(p["label"] == e for p, e in zip(predictions, expected)) if expected else None
        return {"predictions": predictions, "right": right}

    def gist(result):
        right = result["right"]
        return f"{right} of {len(SAMPLES)} as expected" if right is not None else "answered"

    return stages.Stage(6, "serve", f"the export classifies {len(SAMPLES)} new sentences",
                        options.path("serve"),
                        {"export_dir": finetuned["export_dir"],
                         "fine_tuning_seconds": finetuned["seconds"],
                         "sentences": list(SAMPLE_SENTENCES)}, console, gist).run(fn)


def expected_labels(options: DemoOptions) -> list | None:
    """The samples' labels (None for the user's own text, whose labels they are not)."""
    if options.input_file:
        return None
    return [stages.PYTHON_LABELS[label] for _, label in SAMPLES]


def run_demo(options: DemoOptions, console: Console | None = None) -> dict:
    start = time.time()
    console = console or Console(stages.STAGES)
    os.makedirs(options.output_dir, exist_ok=True)
    log_path = options.path("demo.log")
    console.line(f"albert-tf demo: writing everything under {options.output_dir} "
                 f"(full log: {log_path})")
    with demo_logging(console, log_path):
        corpus = stages.build_corpus(options, console)
        spm = stages.train_vocabulary(options, corpus, console)
        records = stages.make_records(options, spm, console)
        pretrained = stages.pretrain(options, spm, records, console)
        finetuned = stages.finetune(options, pretrained, corpus, console)
        served = serve(options, finetuned, console)
        predictions = served["predictions"]
        lite = stages.lite(options, finetuned, console)
        lite_predictions = classify_with_tflite(lite["folder"], SAMPLE_SENTENCES)
    summary = {"corpus": corpus, "records": records, "pretraining": pretrained,
               "fine_tuning": finetuned, "predictions": predictions, "tflite": lite,
               "tflite_predictions": lite_predictions,
               "expected_labels": expected_labels(options),
               "wall_seconds": round(time.time() - start, 1),
               "stage_seconds": round(sum(stage["seconds"] for stage in (
                   corpus, spm, records, pretrained, finetuned, served, lite)), 1)}
    with open(options.path("demo_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    console.line(format_table(summary, options))
    console.line(next_steps(options, "Return the absolute value of a number."))
    return summary


def shown_path(path: str) -> str:
    """`path` as the user would type it here: relative when it is under the current folder."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def next_steps(options: DemoOptions, sentence: str) -> str:
    """The closing lines: the page of next steps, and a Python call on the classifier folder."""
    model = shown_path(options.path("finetune", "model"))
    return "\n".join([
        "next: docs/demo.md (\"Next steps with the demo's models\"); from Python, the classifier "
        "folder alone:",
        f"  python -c \"from albert_tf.tasks import TextClassifier; clf = TextClassifier."
        f"from_pretrained('{model}'); print(clf.predict(['{sentence}'])[0])\""])


def sop_bar(summary: dict) -> tuple[float, float]:
    """(chance, chance plus 2 standard errors) of the held-out SOP accuracy over the pairs
    scored. The held-out set is sentence order alone and balanced (records/heldout_order.tfrecord:
    pairs of one held-out document, as many in order as swapped, each chunk of text once), so
    chance is 0.5 and answering one order always scores exactly that; a model that learned
    sentence order beats the second value. (The generator's own records also pair a
    one-sentence chunk with another document's text, labelled as a swap: 15-30 % of them on the
    default corpus, so there "always swapped" scores 0.57-0.66.)"""
    n = max(1, summary["pretraining"]["heldout_examples"])
    return 0.5, 0.5 + 2 * math.sqrt(0.25 / n)


def sop_row(summary: dict) -> str:
    pre = summary["pretraining"]
    if not pre.get("sentence_order_scored", True):
        return ("not scored: no held-out sequence holds two sentences of one document "
                "(each sentence fills a sequence)")
    return "{:.3f} on {:,} pairs, order alone (chance {:.3f}, +2 SE {:.3f})".format(
        pre["sentence_order_accuracy"], pre["heldout_examples"], *sop_bar(summary))


def not_learnt(summary: dict) -> str | None:
    """What the run did not learn, in words (None when both checks pass): held-out sentence
    order not above its bar, dev accuracy not above the majority class."""
    pre, fine = summary["pretraining"], summary["fine_tuning"]
    missed = []
    scored = pre.get("sentence_order_scored", True)
    if scored and pre["sentence_order_accuracy"] <= sop_bar(summary)[1]:
        missed.append("held-out sentence order (SOP not above its bar)")
    if fine["eval_accuracy"] <= fine["majority_baseline"]:
        missed.append("the task (dev accuracy not above the majority class)")
    if not missed:
        return None
    return " and ".join(missed) + ": more --pretrain_steps or --finetune_steps"


def format_table(summary: dict, options: DemoOptions) -> str:
    corpus, pre, fine = summary["corpus"], summary["pretraining"], summary["fine_tuning"]
    lite = summary["tflite"]
    export_base = os.path.dirname(fine["export_dir"])
    rows = [
        ("corpus", f"{corpus['bytes'] / 1e6:.2f} MB, {corpus['documents']} documents, "
                   f"{corpus['sentences']} sentences"),
        ("pretraining instances", f"{summary['records']['train_instances']} "
                                  f"(+{summary['records']['heldout_instances']} held out)"),
        ("held-out MLM accuracy", f"{pre['masked_lm_accuracy']:.3f} (chance "
                                  f"{1 / pre.get('vocab_size', options.vocab_size):.4f})"),
        ("held-out SOP accuracy", sop_row(summary)),
        ("fine-tuned dev accuracy", f"{fine['eval_accuracy']:.3f} (majority class "
                                    f"{fine['majority_baseline']:.3f})"),
        *([("NOT LEARNT", not_learnt(summary))] if not_learnt(summary) else []),
        ("model folder", f"{fine['output_dir']} (config, tokenizer, labels: "
                         "--init_checkpoint alone is enough)"),
        ("export", fine["export_dir"]),
        ("serve it", f"docker run -p 8501:8501 -v {export_base}:/models/demo "
                     f"-e MODEL_NAME=demo tensorflow/serving"),
        ("TFLite int8 (device)", f"{lite['dynamic_int8']['megabytes']:.2f} MB, "
                                 f"{lite['dynamic_int8']['b1_ms']:.1f} ms a sentence, dev accuracy "
                                 f"{lite['dynamic_int8']['dev_accuracy']:.3f}"),
        ("TFLite float32", f"{lite['float32']['megabytes']:.2f} MB, "
                           f"{lite['float32']['b1_ms']:.1f} ms a sentence, dev accuracy "
                           f"{lite['float32']['dev_accuracy']:.3f}"),
        ("TFLite files", lite["folder"]),
        ("wall time", f"{summary['wall_seconds']:.0f} s this run; stages took "
                      f"{summary['stage_seconds']:.0f} s when they ran"),
    ]
    width = max(len(k) for k, _ in rows)
    lines = ["", "=" * WIDTH] + [f"{k:<{width}}  {v}" for k, v in rows] + ["-" * WIDTH]
    lines += sample_lines(summary)
    lines.append("=" * WIDTH)
    return "\n".join(lines)


def sample_lines(summary: dict) -> list[str]:
    """Each sample sentence in full, then what the export and the int8 file answered (and the
    expected label, when known)."""
    expected = summary.get("expected_labels") or [None] * len(summary["predictions"])
    lines = ["new sentences, classified by the SavedModel and by the int8 TFLite file:"]
    for i, (p, q, e) in enumerate(zip(summary["predictions"], summary["tflite_predictions"],
                                      expected), 1):
        lines += textwrap.wrap(p["sentence"], WIDTH, initial_indent=f"{i}. ",
                               subsequent_indent="   ")
        mark = "" if e is None else ("  ok" if p["label"] == e else "  WRONG")
        answer = f"   SavedModel: {p['label']} ({p['probability']:.2f}); int8: {q['label']} " \
                 f"({q['probability']:.2f})"
        lines.append(answer + ("" if e is None else f"; expected: {e}{mark}"))
    return lines
