"""Did each paper model learn its own sentence-pair task? A model trained on NSP (or SOP) whose
held-out NSP (SOP) accuracy is within two standard errors of chance (50 %: the held-out pairs
are balanced) did not, and a Table 5 comparison between such models says nothing about the
objectives. results.json marks it (`models[name]["own_task"]`, `inter_sentence.own_task`) and
report.md says it, with what the training curve shows: the step from which the model's
training accuracy on its task cleared chance, or that it never did in the steps it had (so it
needs more `--steps`).
"""

from __future__ import annotations

import math

from albert_tf.paper.training import logged_scalars

CHANCE = 0.5
Z = 2.0  # standard errors above chance before an accuracy counts as learned
TRAINING_TAG = "sentence_order_accuracy"  # the trainer's name for the sentence-pair head's


def clears_chance(accuracy: float, examples: int) -> bool:
    """Whether `accuracy` over `examples` balanced pairs is more than `Z` standard errors of a
    coin (0.5 / sqrt(n)) above chance."""
    return examples > 0 and accuracy > CHANCE + Z * 0.5 / math.sqrt(examples)


def learned_from_step(curve: list, examples_per_point: int) -> int | None:
    """The first logged step from which every later logged training accuracy clears chance;
    None when the last one does not."""
    step = None
    for logged_step, accuracy in curve:
        if not clears_chance(accuracy, examples_per_point):
            step = None
        elif step is None:
            step = logged_step
    return step


def training_curve(directory: str | None) -> list:
    """[(step, training accuracy of the sentence-pair head)] as logged, every process's."""
    if not directory:
        return []
    return sorted(point for values in logged_scalars(directory, TRAINING_TAG)
                  for point in values)


def own_task(spec, scores: dict, trained: dict, options) -> dict | None:
    """Whether an NSP- or SOP-trained model learned its own task (None for MLM alone)."""
    if spec.objective not in ("nsp", "sop"):
        return None
    accuracy = scores[f"{spec.objective}_accuracy"]
    examples = int(scores.get("heldout_examples", {}).get(spec.objective, 0))
    curve = training_curve(trained.get("directory"))
    every = max(1, options.steps // 20)  # the interval the paper run logs at
    learned = clears_chance(accuracy, examples)
    found = {"objective": spec.objective, "heldout_accuracy": accuracy,
             "heldout_examples": examples, "chance": CHANCE, "learned": learned,
             "steps": options.steps, "training_accuracy_last": curve[-1][1] if curve else None,
             "training_cleared_chance_from_step": learned_from_step(
                 curve, every * options.train_batch_size)}
    return found


def describe(name: str, found: dict) -> str:
    """One sentence on a model that did not learn its own task, and how many steps it needs."""
    task = found["objective"].upper()
    examples = max(1, found["heldout_examples"])
    line = (f"{name} (trained with {task}) scores {100 * found['heldout_accuracy']:.1f} % on "
            f"held-out {task}, within chance (50 ± {100 * Z * 0.5 / math.sqrt(examples):.1f} %): "
            f"it did not learn its own task in {found['steps']} steps")
    start = found["training_cleared_chance_from_step"]
    if start is not None:
        return line + (f"; its training accuracy cleared chance only from step {start}, so "
                       f"give it several times {start} steps (--steps)")
    last = found["training_accuracy_last"]
    shown = f" (last logged: {100 * last:.1f} %)" if last is not None else ""
    return line + (f"; its training accuracy never cleared chance{shown}, so it needs more "
                   f"than {found['steps']} steps: re-run with a larger --steps (4x or more)")


def inter_sentence_health(plan, models: dict) -> dict:
    """Table 5's check: did its NSP and SOP models learn their own tasks?"""
    rows = {label: spec.name for label, spec in plan.rows("inter_sentence")}
    learned = {label: models[rows[label]]["learned"] for label in ("nsp", "sop")
               if models.get(rows[label])}
    return {"learned": learned, "comparable": all(learned.values()),
            "notes": [describe(rows[label], models[rows[label]])
                      for label, ok in learned.items() if not ok]}
