"""`results.json` and `report.md`: our numbers beside the paper's, with the scale said plainly.

results.json holds one section per claim (`inter_sentence` = Table 5, `sharing` = Table 4,
`embedding_size` = Table 3, `speed` = Table 2's speedup column, `layer_smoothness` = Figure 1),
`figures` (the PNG files written), and `models` / `settings` / `data` for the details.
"""

from __future__ import annotations

import json
import math
import os

from albert_tf.io_utils import write_text_atomically
from albert_tf.paper import paper_numbers as paper
from albert_tf.paper.health import inter_sentence_health, own_task
from albert_tf.paper.plan import PaperOptions, Plan, speed_baseline
from albert_tf.paper.smoothness import smoothness_summary

SECTIONS = ("inter_sentence", "sharing", "embedding_size", "layer_smoothness", "speed", "figures")
PATTERN_MARGIN = 0.03  # the acceptance: SOP model's NSP acc > NSP model's SOP acc + this
SCORE_KEYS = ("mlm_accuracy", "nsp_accuracy", "sop_accuracy", "parameters",
              "embedding_parameters")


def _row(label, spec, scores, **paper_values) -> dict:
    found = scores[spec.name]
    return {"row": label, "model": spec.name, **{k: found[k] for k in SCORE_KEYS},
            "paper": paper_values}


def _standard_error(accuracy: float, examples: int) -> float:
    return math.sqrt(accuracy * (1 - accuracy) / max(1, examples))


def inter_sentence(plan: Plan, scores: dict) -> dict:
    rows = [_row(label, spec, scores, **paper.TABLE5[label])
            for label, spec in plan.rows("inter_sentence")]
    by = {r["row"]: r for r in rows}
    sop_on_nsp, nsp_on_sop = by["sop"]["nsp_accuracy"], by["nsp"]["sop_accuracy"]
    counts = {label: scores[spec.name].get("heldout_examples", {})
              for label, spec in plan.rows("inter_sentence")}
    error = math.hypot(_standard_error(sop_on_nsp, counts["sop"].get("nsp", 0)),
                       _standard_error(nsp_on_sop, counts["nsp"].get("sop", 0)))
    # The other sections' models are SOP-trained too: their NSP accuracies show how much of the
    # base model's number is its own and how much the objective's.
    every_sop = {spec.name: scores[spec.name]["nsp_accuracy"]
                 for spec in plan.models if spec.objective == "sop"}
    return {"rows": rows, "pattern": {
        "claim": "the SOP-trained model solves NSP better than the NSP-trained model solves SOP",
        "sop_model_nsp_accuracy": sop_on_nsp, "nsp_model_sop_accuracy": nsp_on_sop,
        "margin": sop_on_nsp - nsp_on_sop, "margin_standard_error": error,
        "required_margin": PATTERN_MARGIN,
        "holds": bool(sop_on_nsp - nsp_on_sop > PATTERN_MARGIN),
        "every_sop_trained_model_nsp_accuracy": every_sop,
        "paper": {"sop_model_nsp_accuracy": 78.9, "nsp_model_sop_accuracy": 52.0}}}


def sharing(plan: Plan, scores: dict, options: PaperOptions) -> dict:
    rows = []
    for label, spec in plan.rows("sharing"):
        rows.append(_row(label, spec, scores, **{
            f"E={e}": paper.TABLE4[e][label] for e in (paper.TABLE4_DEFAULT_E, 768)}))
    return {"embedding_size": options.embedding_size, "rows": rows}


def embedding_size(plan: Plan, scores: dict, options: PaperOptions) -> dict:
    rows = []
    for label, spec in plan.rows("embedding_size"):
        e = paper.paper_e(spec.embedding_size, options.embedding_size, options.hidden_size,
                          options.embedding_sizes)
        values = {"E": e, **paper.TABLE3[spec.share][e]} if e else {}
        rows.append({**_row(label, spec, scores, **values), "embedding_size": spec.embedding_size,
                     "share": spec.share})
    return {"rows": rows}


def speed(plan: Plan, trained: dict, timed: dict, options: PaperOptions) -> dict:
    base = speed_baseline(options).name
    base_rate = timed.get(base, {}).get("steps_per_second")
    rows = [{"model": spec.name, "steps_per_second": timed[spec.name]["steps_per_second"],
             "speedup": timed[spec.name]["steps_per_second"] / base_rate if base_rate else None,
             "rounds": timed[spec.name]["rounds"],
             "logged_steps_per_second": trained[spec.name].get("steps_per_second")}
            for spec in plan.models]
    return {"baseline": base, "rows": rows, "paper_table2_speedup": paper.TABLE2_SPEEDUP,
            "note": "training steps/s of each model relative to the not-shared one, timed in "
                    "this run with the models taking turns (the fastest of "
                    f"{options.speed_rounds} rounds of 10 steps); sharing "
                    "saves parameters, not arithmetic, so at equal H and L the speeds differ by "
                    "little; the paper's speedups compare models of different H and L on TPUs, "
                    "where fewer parameters also mean less communication"}


def layer_smoothness(curves: dict, examples: int) -> dict:
    return {**curves, "smoothness": smoothness_summary(curves), "examples": examples,
            "paper": paper.FIGURE1}


def scale(options: PaperOptions, data: dict, parameters: int) -> str:
    return (f"ours: H={options.hidden_size}, {options.num_hidden_layers} layers, "
            f"{options.num_attention_heads} heads, FFN {options.intermediate_size}, vocabulary "
            f"{data['vocab_size']}, {parameters / 1e6:.2f}M parameters (all-shared, E="
            f"{options.embedding_size}); {options.steps} steps of {options.train_batch_size} "
            f"sequences of {options.max_seq_length} tokens on {data['train_documents']} documents "
            f"({data['train_lines']} lines); the paper: {paper.SCALE}")


def build_results(options: PaperOptions, plan: Plan, data: dict, trained: dict, scores: dict,
                  timed: dict, curves: dict, curve_examples: int, elapsed_s: float) -> dict:
    base = plan.rows("inter_sentence")[-1][1]  # SOP, all-shared, default E
    settings = {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in vars(options).items() if k != "runtime"}
    # Whether each NSP/SOP model learned its own task (paper.health): Table 5 needs both.
    own = {spec.name: own_task(spec, scores[spec.name], trained[spec.name], options)
           for spec in plan.models}
    return {
        "scale": scale(options, data, scores[base.name]["parameters"]),
        "inter_sentence": {**inter_sentence(plan, scores), "own_task": inter_sentence_health(
            plan, {name: found for name, found in own.items() if found})},
        "sharing": sharing(plan, scores, options),
        "embedding_size": embedding_size(plan, scores, options),
        "layer_smoothness": layer_smoothness(curves, curve_examples),
        "speed": speed(plan, trained, timed, options),
        "figures": [],
        "models": {spec.name: {"objective": spec.objective, "share": spec.share,
                               "embedding_size": spec.embedding_size, **scores[spec.name],
                               **trained[spec.name], "own_task": own[spec.name]}
                   for spec in plan.models},
        "settings": {**settings, "runtime": vars(options.runtime)},
        "data": data, "elapsed_seconds": round(elapsed_s, 1), "citation": paper.CITATION,
    }


# ---------------------------------------------------------------------------------- report.md
def _pct(value) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _num(value, digits=1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _table(header, rows) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def render(results: dict) -> str:
    lines = ["# The ALBERT paper in miniature", "",
             f"Scale: {results['scale']}.", "",
             "Compare patterns (which row wins, by how much relative to the others), not "
             "values: our models are tiny and briefly trained, the paper's were ALBERT-base "
             "trained for days. The paper's Tables 3 and 4 report downstream averages "
             "(fine-tuned SQuAD/MNLI/SST-2/RACE); ours are intrinsic held-out accuracies. "
             "Accuracies in %; held-out NSP and SOP sets are balanced, so chance is 50.", ""]
    inter = results["inter_sentence"]
    health = inter.get("own_task", {})
    at_chance = {label for label, ok in health.get("learned", {}).items() if not ok}
    lines += ["## Table 5: inter-sentence loss (none / NSP / SOP)", ""]
    lines += _table(["trained with", "MLM", "NSP", "SOP", "paper MLM", "paper NSP", "paper SOP"],
                    [[r["row"] + (" (own task at chance)" if r["row"] in at_chance else ""),
                      _pct(r["mlm_accuracy"]), _pct(r["nsp_accuracy"]),
                      _pct(r["sop_accuracy"]), r["paper"]["mlm"], r["paper"]["nsp"],
                      r["paper"]["sop"]] for r in inter["rows"]])
    p = inter["pattern"]
    lines += ["", f"Pattern ({p['claim']}; required margin {p['required_margin']:.2f}): SOP "
              f"model on NSP {_pct(p['sop_model_nsp_accuracy'])} vs NSP model on SOP "
              f"{_pct(p['nsp_model_sop_accuracy'])}: margin {p['margin']:+.3f} (standard error "
              f"{p['margin_standard_error']:.3f}), **{'holds' if p['holds'] else 'does not hold'}"
              "** (paper: 78.9 vs 52.0).", ""]
    if health.get("notes"):
        lines += ["**Not comparable:** a model that did not learn its own sentence task cannot "
                  "show which objective transfers better. " + " ".join(
                      note + "." for note in health["notes"]), ""]
    others = p.get("every_sop_trained_model_nsp_accuracy") or {}
    if len(others) > 1:
        values = list(others.values())
        lines += [f"NSP accuracy of all {len(values)} SOP-trained models of this run (the "
                  f"sharing and E rows too): {_pct(min(values))} to {_pct(max(values))}, mean "
                  f"{_pct(sum(values) / len(values))}.", ""]
    if not p["holds"]:
        lines += ["At this scale the pattern did not appear: the sentence-pair heads learn "
                  "little in a few thousand steps of a tiny model. More `--steps`, a larger "
                  "model or the default (ALBERT-base) size give them the training the paper's "
                  "models had.", ""]
    share = results["sharing"]
    lines += [f"## Table 4: cross-layer sharing (E={share['embedding_size']})", ""]
    lines += _table(["sharing", "parameters", "MLM", "NSP", "SOP", "paper params (E=128)",
                     "paper avg (E=128)", "paper params (E=768)", "paper avg (E=768)"],
                    [[r["row"], f"{r['parameters']:,}", _pct(r["mlm_accuracy"]),
                      _pct(r["nsp_accuracy"]), _pct(r["sop_accuracy"]),
                      f"{r['paper']['E=128']['params_m']}M", _num(r["paper"]["E=128"]["avg"]),
                      f"{r['paper']['E=768']['params_m']}M", _num(r["paper"]["E=768"]["avg"])]
                     for r in share["rows"]])
    lines += ["", "## Table 3: embedding size E", ""]
    lines += _table(["model", "parameters", "embedding params", "MLM", "SOP", "paper E",
                     "paper params", "paper avg"],
                    [[r["row"], f"{r['parameters']:,}", f"{r['embedding_parameters']:,}",
                      _pct(r["mlm_accuracy"]), _pct(r["sop_accuracy"]), r["paper"].get("E", "—"),
                      f"{r['paper']['params_m']}M" if r["paper"] else "—",
                      _num(r["paper"].get("avg"))] for r in results["embedding_size"]["rows"]])
    spd = results["speed"]
    lines += ["", "## Table 2's speedup column", "", spd["note"] + ".", ""]
    lines += _table(["model", "steps/s", "speedup", "steps/s logged while training"],
                    [[r["model"], _num(r["steps_per_second"], 2), _num(r["speedup"], 2),
                      _num(r["logged_steps_per_second"], 2)] for r in spd["rows"]])
    lines += ["", "Paper (relative to BERT-large): " + ", ".join(
        f"{k} {v}x" for k, v in spd["paper_table2_speedup"].items()) + ".", ""]
    smooth = results["layer_smoothness"]
    lines += ["## Figure 1: layer-to-layer transitions", "",
              f"Mean over the tokens of {smooth['examples']} held-out sequences.", ""]
    names = [k for k in smooth if isinstance(smooth[k], dict) and "layers" in smooth[k]]
    if names:
        layers = smooth[names[0]]["layers"]
        header = ["layer"] + [f"{n} L2" for n in names] + [f"{n} cosine" for n in names]
        lines += _table(header, [[layer] + [_num(smooth[n]["l2_distance"][i], 3) for n in names]
                                 + [_num(smooth[n]["cosine_similarity"][i], 3) for n in names]
                                 for i, layer in enumerate(layers)])
        lines += ["", "Mean change between consecutive layers (smaller = smoother): " + "; ".join(
            f"{n}: L2 {_num(v['l2_distance_mean_change'], 3)}, cosine "
            f"{_num(v['cosine_similarity_mean_change'], 3)}"
            for n, v in smooth["smoothness"].items()) + ".", ""]
    lines += [f"Paper: {smooth['paper']}", ""]
    if results["figures"]:
        lines += ["## Figures", ""] + [f"![{os.path.basename(f)}]({os.path.basename(f)})"
                                       for f in results["figures"]] + [""]
    lines += [f"Source of the paper's numbers: {results['citation']}.", ""]
    return "\n".join(lines)


def write(results: dict, output_dir: str) -> dict:
    paths = {"json": os.path.join(output_dir, "results.json"),
             "report": os.path.join(output_dir, "report.md")}
    write_text_atomically(paths["json"], json.dumps(results, indent=1, default=str) + "\n")
    write_text_atomically(paths["report"], render(results))
    return paths
