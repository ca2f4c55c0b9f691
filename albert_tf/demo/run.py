"""Runs the demo's stages in order and prints the closing table."""

from __future__ import annotations

import json
import os
import time

import numpy as np

from albert_tf.demo import stages
from albert_tf.demo.stages import DemoOptions
from albert_tf.serving.verify import verify_in_fresh_process
from albert_tf.serving.lite import LiteClassifier

SAMPLE_SENTENCES = (
    "The expression is evaluated once and the resulting object is bound to the target name.",
    "Return a new list containing all items from the iterable in ascending order.",
    "If the class defines a method with this name, it is called when the instance is created.",
    "Open the file and return a stream; raise OSError upon failure.",
)


def classify_in_fresh_process(export_dir: str, sentences) -> list[dict]:
    """What a serving client sees: the export loaded anew, raw text in (signature `serve_text`)."""
    out = verify_in_fresh_process(export_dir, {"serve_text": {"text_a": np.array(sentences)}})["serve_text"]
    return [{"sentence": s, "label": int(p), "probability": float(max(q))}
            for s, p, q in zip(sentences, out["predictions"], out["probabilities"])]


def classify_with_tflite(folder: str, sentences) -> list[dict]:
    """What a device app does: the int8 .tflite file, our Python tokenizer, raw text in."""
    classifier = LiteClassifier.from_folder(folder, kind="dynamic_int8")
    probabilities = classifier.predict(list(sentences))
    return [{"sentence": s, "label": int(np.argmax(q)), "probability": float(max(q))}
            for s, q in zip(sentences, probabilities)]


def run_demo(options: DemoOptions) -> dict:
    start = time.time()
    os.makedirs(options.output_dir, exist_ok=True)
    print(f"albert-tf demo: writing everything under {options.output_dir}", flush=True)
    corpus = stages.build_corpus(options)
    spm = stages.train_vocabulary(options, corpus)
    records = stages.make_records(options, spm)
    pretrained = stages.pretrain(options, records)
    finetuned = stages.finetune(options, spm, pretrained, corpus)
    lite = stages.lite(options, finetuned)
    predictions = classify_in_fresh_process(finetuned["export_dir"], SAMPLE_SENTENCES)
    lite_predictions = classify_with_tflite(lite["folder"], SAMPLE_SENTENCES)
    summary = {"corpus": corpus, "records": records, "pretraining": pretrained,
               "fine_tuning": finetuned, "predictions": predictions, "tflite": lite,
               "tflite_predictions": lite_predictions,
               "wall_seconds": round(time.time() - start, 1),
               "stage_seconds": round(sum(stage["seconds"] for stage in (
                   corpus, spm, records, pretrained, finetuned, lite)), 1)}
    with open(os.path.join(options.output_dir, "demo_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(format_table(summary, options))
    return summary


def format_table(summary: dict, options: DemoOptions) -> str:
    corpus, pre, fine = summary["corpus"], summary["pretraining"], summary["fine_tuning"]
    lite = summary["tflite"]
    names = {0: "language reference", 1: "library docstring"}
    export_base = os.path.dirname(fine["export_dir"])
    rows = [
        ("corpus", f"{corpus['bytes'] / 1e6:.2f} MB, {corpus['documents']} documents, "
                   f"{corpus['sentences']} sentences"),
        ("pretraining instances", f"{summary['records']['train_instances']} "
                                  f"(+{summary['records']['heldout_instances']} held out)"),
        ("held-out MLM accuracy", f"{pre['masked_lm_accuracy']:.3f} (chance {1 / options.vocab_size:.4f})"),
        ("held-out SOP accuracy", f"{pre['sentence_order_accuracy']:.3f} (chance 0.5)"),
        ("fine-tuned dev accuracy", f"{fine['eval_accuracy']:.3f} (majority class "
                                    f"{fine['majority_baseline']:.3f})"),
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
    lines = ["", "=" * 78] + [f"{k:<{width}}  {v}" for k, v in rows] + ["-" * 78]
    if corpus["source"].startswith("Python"):
        lines.append("task: which part of Python's documentation a sentence comes from")
    python = corpus["source"].startswith("Python")
    lines.append(f"  {'SavedModel':<18} {'':4}  {'int8 TFLite':<18} {'':4}  sentence")
    for p, q in zip(summary["predictions"], summary["tflite_predictions"]):
        label = names.get(p["label"], p["label"]) if python else p["label"]
        small = names.get(q["label"], q["label"]) if python else q["label"]
        lines.append(f"  {label:<18} {p['probability']:.2f}  {small:<18} {q['probability']:.2f}  "
                     f"{p['sentence'][:24]}")
    lines.append("=" * 78)
    return "\n".join(lines)
