"""The command-line programs: one module per top-level script, holding its flags and `main`.

After `pip install albert-tf` they are commands (`[project.scripts]` in pyproject.toml):

    albert-create-pretraining-data  albert-run-pretraining  albert-run-classifier
    albert-run-squad  albert-run-race  albert-run-ner  albert-export-saved-model
    albert-export-checkpoints  albert-convert  albert-run-embeddings

In a clone, the top-level scripts (`run_classifier.py`, ...) call the same `run()`, so a
command and its script take the same flags. A module defines its flags when `run()` is called
(importing one registers nothing); `import albert_tf` quiets TensorFlow's start-up lines first
when the program is one of these (`cli.is_entry_point`).
"""

from __future__ import annotations

import json
import os
import sys

from albert_tf import cli

# Flags belong to the program being run (`--helpshort` lists them under sys.argv[0]).
MAIN = "__main__"


def start(doc: str, main, required=(), argv=None) -> None:
    """`cli.run(main)` with the program's help text: absl's `--help` prints the `__main__`
    module's docstring, which for an installed command is pip's generated wrapper's (none)."""
    program = sys.modules.get("__main__")
    if program is not None:
        program.__doc__ = doc
    cli.run(main, required=required, argv=argv)


# ------------------------------------------------------------------- how a program ends
# A run's results, as every task writes them (docs/errors-and-outputs.md: "One results format").
EVAL_RESULTS_JSON = "eval_results.json"


def finish(result: dict, gist: list, as_json: bool) -> None:
    """A program's last words on stdout: with --json its whole `result` as JSON (nothing else on
    stdout), otherwise the short `gist` lines: what was written, where, the key metric."""
    if as_json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print("\n".join(gist))


def export_gist(result: dict, export_dir: str) -> list:
    """export_saved_model.py's closing lines: each SavedModel written, the TFLite / ONNX /
    OpenVINO files beside them, and the fresh-process check's largest difference."""
    source = result.get("source", "the model")
    served = result.get("checkpoint")  # a folder's: the one it serves (weights.model_folder)
    served = served if served and served not in source else None  # a prefix given: named
    lines = [f"exported {source}"
             f"{f', checkpoint {os.path.basename(served)},' if served else ''} to {export_dir}:"]
    rows = [(k, v) for k, v in result.items() if isinstance(v, str) and os.path.basename(
        os.path.dirname(v.rstrip("/"))) == k]  # <export_dir>/<name>/<version>
    for kind in ("tflite", "onnx", "openvino"):
        for name, files in (result.get(kind) or {}).items():
            paths = [v for v in files.values() if isinstance(v, str)]
            folder = os.path.dirname(paths[0]) if paths else ""
            # What the folder holds (an OpenVINO kind is two files, the tokenizer one more).
            count = len(os.listdir(folder)) if os.path.isdir(folder) else len(paths)
            rows.append((f"{name} {kind}", f"{folder} ({count} files)"))
    width = max(len(k) for k, _ in rows) if rows else 0
    lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    checks = [v for k, v in result.items() if k.endswith("_check") and isinstance(v, dict)]
    if checks:
        worst = max((float(x) for check in checks for x in check.values()), default=0.0)
        lines.append(f"each checked in a fresh process against the Keras model (largest "
                     f"difference {worst:.1e}); --json prints every detail")
    return lines


def run_gist(output_dir: str, summary: dict) -> list:
    """A fine-tuning script's closing lines: the model folder it wrote, its best evaluation
    (eval_results.json), the predictions and the export."""
    lines = [f"model folder: {output_dir} (--init_checkpoint={output_dir} alone serves it)"]
    path = os.path.join(output_dir, EVAL_RESULTS_JSON)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        metric = results.get("metric")
        best = results.get(f"best_{metric}")
        if metric and best is not None:
            lines.append(f"best {metric} {float(best):.4f} at step {results.get('best_step')} "
                         f"({path})")
    predicted = summary.get("predict")
    if isinstance(predicted, str):
        lines.append(f"predictions: {predicted}")
    elif isinstance(predicted, dict):
        files = [v for v in predicted.values() if isinstance(v, str) and os.path.isfile(v)]
        if files:
            lines.append(f"predictions: {', '.join(files)}")
    export = summary.get("export")
    if isinstance(export, str):
        lines.append(f"export: {export}")
    return lines
