"""One small demo folder per test session: `python -m albert_tf.demo`'s stages at a reduced size
(seconds), made once and shared by the xdist workers (a lock in the session's temporary root).
tests/test_demo_run.py checks the run and its console; tests/test_demo_next_steps.py runs
docs/demo.md's next steps and the demo's closing Python call against the folder."""

from __future__ import annotations

import contextlib
import io

from albert_tf.demo.console import Console
from albert_tf.demo.run import run_demo
from albert_tf.demo.options import DemoOptions, demo_schedule
from albert_tf.demo.stages import STAGES
from support.session_once import once_per_session

# `python -m albert_tf.demo` writes albert_demo/ into the folder it runs in.
FOLDER = "albert_demo"


def tiny_options(output_dir) -> DemoOptions:
    """The demo at a size the suite can afford: every stage runs, on a 2-pass H=32 model."""
    return DemoOptions(output_dir=str(output_dir), vocab_size=800, max_seq_length=32,
                       max_predictions_per_seq=5, dupe_factor=1, hidden_size=32,
                       embedding_size=16, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, pretrain=demo_schedule(4, 16, 2e-3, "lamb"),
                       finetune=demo_schedule(4, 16, 1e-4), pretrain_precision="none",
                       max_task_examples=200, num_workers=1)


def shared_demo(tmp_path_factory) -> dict:
    """{"root": the folder holding albert_demo/, "options", "summary": run_demo's result,
    "console": what it printed}; the first caller of the session runs the demo, the others wait
    for it and read its record."""

    def make(root):
        console = io.StringIO()
        with contextlib.chdir(root):
            summary = run_demo(tiny_options(root / FOLDER), Console(STAGES, stream=console))
        return {"summary": summary, "console": console.getvalue()}

    made, root = once_per_session(tmp_path_factory, "tiny_demo", make)
    return {"root": root, "options": tiny_options(root / FOLDER), **made}
