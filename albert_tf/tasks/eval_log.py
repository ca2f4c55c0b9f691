"""Results-file formats of the evaluation loop (`CheckpointEvaluator`'s `log`).

`EvalLog` is the interface; `RunnerEvalLog` is the format of the original SQuAD and RACE runners'
`eval_results.txt`: per checkpoint its `key = value` lines, a `saved <src> to <dst>` line per
file copied to `model.ckpt-best`, `best <key> = <value>`, the keys every task's evaluations end
with (`best_<metric>`, `best_step`; `eval_state`) and a line of 50 `=`; at the end the best
checkpoint's lines and `best perf happened at step: <step>`.
"""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf.io_utils import write_text_atomically


class EvalLog:
    """What a task writes for each evaluation. Subclasses override what their format needs."""

    def start(self, evaluator) -> None:
        """Called once, with the state of earlier runs read."""

    def record(self, step, result: dict, best_before, copied: list) -> None:
        """One checkpoint of output_dir evaluated; `copied` lists the files copied to best."""

    def record_other(self, step, result: dict, best_before) -> None:
        """A checkpoint from elsewhere (`--init_checkpoint`) evaluated."""
        self.record(step, result, best_before, [])

    def finish(self, evaluator) -> dict:
        """The run's evaluations are done; returns the result to report."""
        return evaluator.best_result or evaluator.last or {}


class RunnerEvalLog(EvalLog):
    def __init__(self, output_dir, key: str, results_name: str = "eval_results.txt"):
        self.key = key
        self.path = os.path.join(os.fspath(output_dir), results_name)
        self.lines: list = []

    def _write(self):
        write_text_atomically(self.path, "\n".join(self.lines) + "\n")

    def record(self, step, result, best_before, copied):
        # The keys every task's results end with (best_<metric>, best_step) follow the original's.
        ours = [name for name in result if name.startswith("best_")]
        self.lines += [f"{name} = {value}" for name, value in sorted(result.items())
                       if name not in ours]
        self.lines += [f"saved {source} to {target}" for source, target in copied]
        best = result[self.key] if copied else best_before
        self.lines.append(f"best {self.key} = {best}")
        self.lines += [f"{name} = {result[name]}" for name in ours]
        self.lines.append("=" * 50)
        self._write()

    def record_other(self, step, result, best_before):
        """The original runners only scored (and printed) a checkpoint given on the command line."""

    def finish(self, evaluator):
        if evaluator.best_result is None and tf.io.gfile.exists(evaluator.best_prefix + ".index"):
            evaluator.load(evaluator.best_prefix)  # the best is from an earlier run: score it
            evaluator.best_result = evaluator.evaluate()
        if evaluator.best_result is not None:
            self.lines += [f"{name} = {value}"
                           for name, value in sorted(evaluator.best_result.items())]
            self.lines.append(f"best perf happened at step: {evaluator.state.best_step}")
            self._write()
        return evaluator.best_result or evaluator.last or {}
