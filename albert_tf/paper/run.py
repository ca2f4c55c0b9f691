"""The paper run: data → ablation models → scores → Figure 1 → results.json, report.md, PNGs.

One run per output_dir (a lock, as every script's). Every stage is resumable: the data is built
once, finished models are not retrained (a half-trained one resumes), and a model's scores are
kept beside its checkpoints (`paper_scores.json`, tied to the checkpoint and the held-out data),
so a second run trains and scores nothing and only writes the report again.
"""

from __future__ import annotations

import time

from albert_tf.paper import plots, report, speed
from albert_tf.paper.data import build_data
from albert_tf.paper.plan import PaperOptions, build_plan, figure_models
from albert_tf.paper.scoring import FIGURE_EXAMPLES, score_model
from albert_tf.paper.training import train_models
from albert_tf.tasks.output_lock import OutputDirLock
from albert_tf.training import Runtime
from albert_tf.training.logs import format_duration


def run_paper(options: PaperOptions, printer=print) -> dict:
    """The whole run under one lock on the output_dir (a second run on it stops at once)."""
    with OutputDirLock(options.output_dir):
        return _run(options, printer)


def _run(options: PaperOptions, printer) -> dict:
    start = time.time()
    plan = build_plan(options)
    printer(f"[paper] {len(plan.models)} models to train ({options.steps} steps each): "
            + ", ".join(spec.name for spec in plan.models), flush=True)
    data = build_data(options, lambda line: printer(line, flush=True))
    runtime = Runtime(options.runtime)
    trained = train_models(options, plan.models, data, runtime, printer)
    figure = {spec.name: label for label, spec in figure_models(options).items()}
    scores, curves = {}, {}
    for index, spec in enumerate(plan.models, 1):
        printer(f"[paper] scoring {index}/{len(plan.models)} {spec.name} (elapsed "
                f"{format_duration(time.time() - start)})", flush=True)
        scores[spec.name] = score_model(runtime, options, spec, data, spec.name in figure)
        if spec.name in figure:
            curves[figure[spec.name]] = scores[spec.name].pop("layer_smoothness")
    timed = speed.measure(runtime, options, plan.models, data, rounds=options.speed_rounds,
                          printer=printer)
    results = report.build_results(options, plan, data, trained, scores, timed, curves,
                                   min(FIGURE_EXAMPLES, data["heldout_sop_instances"]),
                                   time.time() - start)
    results["figures"] = plots.write_all(results, options.output_dir, printer)
    paths = report.write(results, options.output_dir)
    pattern = results["inter_sentence"]["pattern"]
    verdict = "holds" if pattern["holds"] else "does not hold"
    own = results["inter_sentence"]["own_task"]
    if not own["comparable"]:  # a model at chance on its own task: see report.md
        verdict += "; not comparable: " + ", ".join(
            f"the {label.upper()} model stayed at chance on {label.upper()}"
            for label, ok in own["learned"].items() if not ok)
    printer(f"[paper] done in {format_duration(time.time() - start)}: {paths['report']}, "
            f"{paths['json']}, {len(results['figures'])} figure(s). Table 5 pattern: SOP model "
            f"on NSP {pattern['sop_model_nsp_accuracy']:.3f} vs NSP model on SOP "
            f"{pattern['nsp_model_sop_accuracy']:.3f} ({verdict})", flush=True)
    return results
