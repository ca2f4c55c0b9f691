"""Training health: a run that does not learn, or starts from a collapsed checkpoint, says so.

Fine-tuning a small or under-trained ALBERT often "collapses": the loss sits at chance
(ln 2 for two balanced classes) and every prediction is one class, yet the run exits 0 with a
number in `eval_results.txt`. `TrainingHealth` watches one run and warns, once per finding, in
one line that names the likely causes and the settings to change:

- **not learning** (`not_learning`): after at least `MIN_STEPS` steps (and, at a checkpoint
  before the last, twice the warm-up), the mean loss of the
  last half of the steps is not below the starting level by more than its noise, and it is not
  falling within that window either. The starting level is the task's chance loss when it has
  one (a classifier: the entropy of its training labels' prior, ln C when balanced; a tagger:
  its tags' prior), else the mean of the first tenth of the steps. Also not learning: at an
  evaluation of a checkpoint of at least `MIN_STEPS` steps, every one of at least
  `MIN_EXAMPLES` dev examples gets the same class (a tagger: the same tag, `O`), though the
  dev set holds several.
- **not learning at its end** (also `not_learning`), judged at the last evaluation of any run
  however short, and at every evaluation from `MIN_STEPS` steps: the eval loss is not finite,
  or it is at least `FAR_ABOVE_CHANCE` times the task's chance loss (or ln C, an even guess
  over C classes, where that is higher: imbalanced classes) while the predictions are no
  better than the commonest dev class (a model that overfits has its loss above chance too,
  but gets more right than that).
- **collapsed start** (`collapsed_start`): before the first step from an initial checkpoint,
  the encoder's outputs for one training batch barely differ between inputs (`input_spread`
  below `COLLAPSED_SPREAD`): the checkpoint looks under-trained or collapsed.

The thresholds come from measured runs (tests/test_training_health.py and the report of
issue 42): healthy runs of the suite, the demo and the bench never cross them. Each finding is
added to the results of the evaluations after it (`health = not_learning`) and to the run's
summary, and logged as one warning line starting `training health:`.
"""

from __future__ import annotations

import math

import numpy as np
from absl import logging

# Fewer steps than this are never judged: a short run (every run of the test suite) may not
# have left its warm-up, and its loss curve is mostly noise.
MIN_STEPS = 100
# The window judged is the last half of the steps, and at least this many.
MIN_WINDOW = 50
# "Within noise": not below the start by more than 3 standard errors of the window's mean,
# nor by more than this fraction of the start (a flat run's loss barely moves at all).
RELATIVE_TOLERANCE = 0.02
Z = 3.0
# One class for every dev example is judged only on this many examples or more.
MIN_EXAMPLES = 20
# An eval loss this many times the chance loss, with no more right than the commonest class:
# a run that diverged (the suite's toy classifier, 40 steps: learning rate 3.0 gives 47 against
# chance 0.69, 0.3 over 20 steps 4.5; 1e-3 and 5e-5 give 0.68 and 0.69).
FAR_ABOVE_CHANCE = 3.0
# Collapsed: the encoder's outputs vary between the inputs of a batch by less than this
# fraction of their size (`input_spread`; random-initialised models from 2 to 12 layers,
# H=16 to 768: 0.30-0.55; the last LayerNorm's gamma at 0: exactly 0).
COLLAPSED_SPREAD = 0.01

NOT_LEARNING, COLLAPSED_START = "not_learning", "collapsed_start"


def label_entropy(label_ids, num_classes: int | None = None) -> float | None:
    """The entropy (nats) of the labels' prior: the loss of a model that learned only how
    often each class occurs (ln C for C balanced classes); None without labels."""
    ids = np.asarray(label_ids).reshape(-1)
    ids = ids[ids >= 0]
    if not ids.size:
        return None
    counts = np.bincount(ids.astype(np.int64), minlength=num_classes or 0)
    p = counts[counts > 0] / ids.size
    return float(-(p * np.log(p)).sum())


def input_spread(sequence, mask) -> float:
    """How much the encoder's outputs vary between inputs, relative to their size: at each
    position, the tokens of the batch's inputs against their mean, over every position that
    at least two inputs reach ([CLS] left out: a random-initialised model's barely depends on
    the input yet). 0: every input gives the same outputs."""
    x = np.asarray(sequence, np.float64)[:, 1:]
    real = np.asarray(mask)[:, 1:] > 0
    keep = real.sum(0) >= 2
    x, real = x[:, keep], real[:, keep]
    if not real.any():
        return float("nan")
    counts = real.sum(0)[None, :, None]
    mean = (x * real[..., None]).sum(0, keepdims=True) / counts
    deviation = ((x - mean) ** 2 * real[..., None]).sum()
    size = (x * x * real[..., None]).sum()
    return math.sqrt(deviation / size) if size else 0.0


def encoder_spread(model, features) -> tuple[float, str] | None:
    """(`input_spread` of the model's encoder over the distinct inputs of one batch of
    `features`, what was measured); None without an encoder or two distinct inputs."""
    encoder = getattr(model, "encoder", None)
    if encoder is None or "input_ids" not in features:
        return None
    inputs = {}
    for key in ("input_ids", "input_mask", "segment_ids"):
        if key in features:
            value = np.asarray(features[key])
            inputs[key] = value.reshape(-1, value.shape[-1])  # multiple choice: [B·C, S]
    _, rows = np.unique(inputs["input_ids"], axis=0, return_index=True)
    if len(rows) < 2:
        return None
    inputs = {key: value[np.sort(rows)] for key, value in inputs.items()}
    sequence = np.asarray(encoder(inputs, training=False)["sequence_output"])
    mask = inputs.get("input_mask", np.ones(sequence.shape[:2]))
    spread = input_spread(sequence, mask)
    return None if math.isnan(spread) else (spread, "sequence outputs")


def loss_stalled(losses, reference: float | None = None) -> dict | None:
    """The not-learning judgement of a loss curve (see the module docstring): None when it
    cannot be judged yet or the loss came down; else {start, recent, noise, first, last}."""
    losses = np.asarray(losses, np.float64)
    n = len(losses)
    if n < MIN_STEPS:
        return None
    if reference is None:
        reference = float(losses[:max(10, n // 10)].mean())
    window = losses[-max(MIN_WINDOW, n // 2):]
    size = len(window)
    noise = float(np.std(np.diff(window))) / math.sqrt(2.0)  # per step, trend removed
    recent = float(window.mean())
    tolerance = max(Z * noise / math.sqrt(size), RELATIVE_TOLERANCE * abs(reference))
    if recent < reference - tolerance:
        return None
    quarter = size // 4
    early, late = window[:quarter].mean(), window[-quarter:].mean()
    falling = late < early - max(Z * noise * math.sqrt(2.0 / quarter),
                                 RELATIVE_TOLERANCE * abs(early))
    if falling and late < reference:
        return None  # below the start and still coming down: slow, not stuck
    return {"start": float(reference), "recent": recent, "noise": noise,
            "first": n - size + 1, "last": n}


def one_class(predicted, gold) -> object | None:
    """The one class every prediction is, when the gold labels hold several and there are at
    least `MIN_EXAMPLES` of them; else None."""
    predicted, gold = np.asarray(predicted), np.asarray(gold)
    if len(gold) < MIN_EXAMPLES or len(predicted) != len(gold):
        return None
    rows = predicted.reshape(len(predicted), -1)
    if len(np.unique(gold.reshape(len(gold), -1), axis=0)) < 2:
        return None
    if (rows == rows[:1]).all():
        first = rows[0]
        return first.tolist() if first.size > 1 else first.item()
    return None


def no_better_than_commonest(predicted, gold) -> tuple[int, int, int] | None:
    """(right, commonest, n) when the predictions get no more of the `n` gold labels right
    than always answering the commonest gold class would (`commonest` of them); else None.
    Gold labels below 0 (unknown) are left out; rows of several labels are compared whole."""
    predicted, gold = np.asarray(predicted), np.asarray(gold)
    if not len(gold) or len(predicted) != len(gold):
        return None
    rows, gold_rows = predicted.reshape(len(predicted), -1), gold.reshape(len(gold), -1)
    known = (gold_rows >= 0).all(1)
    rows, gold_rows = rows[known], gold_rows[known]
    if not len(gold_rows):
        return None
    right = int((rows == gold_rows).all(1).sum())
    commonest = int(np.unique(gold_rows, axis=0, return_counts=True)[1].max())
    return (right, commonest, len(gold_rows)) if right <= commonest else None


class TrainingHealth:
    """One run's health. `settings`: what the advice names, {role: (flag, value)} for the
    roles learning_rate, warmup, seed, init_checkpoint (`settings_of` reads them from a config);
    `chance_loss`: the loss of a model that learned nothing but the label prior."""

    def __init__(self, settings: dict | None = None, chance_loss: float | None = None):
        self.settings = dict(settings or {})
        self.chance_loss = chance_loss
        self.losses: list = []
        # What each check found and still holds: {"loss" | "predictions" | "start": message}.
        # The loss and the predictions are judged again at every checkpoint and evaluation
        # (a long run may look stuck at its first checkpoints and learn later).
        self.findings: dict = {}
        self.start_spread = None

    # ------------------------------------------------------------------ the advice
    def _flag(self, role: str, default: str) -> str:
        return self.settings.get(role, (default, None))[0]

    def _value(self, role: str):
        return self.settings.get(role, (None, None))[1]

    def advice(self) -> str:
        """The likely causes and what to try, naming the flags and the values this run used."""
        causes = []
        for role, cause in (("learning_rate", "a learning rate too high (or too low) for "
                                               "this model"),
                            ("warmup", "too short a warm-up"),
                            ("seed", "an unlucky initialisation of the head"),
                            ("init_checkpoint", "an under-trained initial checkpoint")):
            if role in self.settings:
                flag, value = self.settings[role]
                causes.append(f"{cause} ({flag}={value})")
        lr = self._value("learning_rate")
        lower = f"={float(lr) / 5:g}" if isinstance(lr, (int, float)) and lr > 0 else ""
        return (f"likely causes: {', '.join(causes) or 'the learning rate or warm-up'}; try "
                f"{self._flag('learning_rate', '--learning_rate')}{lower} (a few times lower; "
                f"higher if the loss was flat), "
                f"a longer {self._flag('warmup', '--warmup_step')}, another "
                f"{self._flag('seed', '--seed')}, or another "
                f"{self._flag('init_checkpoint', '--init_checkpoint')}")

    def _report(self, check: str, message: str | None) -> None:
        """Records what `check` found now (None: nothing); warns when that makes a new status
        (one line per status: the loss and the predictions both say not learning)."""
        status_before = self.status
        before = self.findings.pop(check, None)
        if message is not None:
            self.findings[check] = message
            kind = COLLAPSED_START if check == "start" else NOT_LEARNING
            if before is None and kind not in status_before.split(","):
                logging.warning("training health: %s", message)
            elif before is None:
                logging.info("training health: %s", message)
        elif before is not None:
            logging.info("training health: no longer so (%s check): %s", check, before)

    @property
    def status(self) -> str:
        """`ok`, or what was found, joined by `,` (`collapsed_start`, `not_learning`)."""
        found = [COLLAPSED_START] if "start" in self.findings else []
        if {"loss", "predictions", "eval"} & set(self.findings):
            found.append(NOT_LEARNING)
        return ",".join(found) or "ok"

    def fields(self) -> dict:
        """What a result or summary records: {"health": status} while something is found."""
        return {"health": self.status} if self.findings else {}

    # ------------------------------------------------------------------ the checks
    def record_loss(self, loss: float) -> None:
        self.losses.append(float(loss))

    def check_loss(self, final: bool = True) -> bool:
        """Judges the losses recorded so far; warns when they have not come down. Before the
        end of training (`final` False), not before twice the warm-up either."""
        warmup = self._value("warmup")
        if not final and isinstance(warmup, int) and len(self.losses) < 2 * warmup:
            return "loss" in self.findings
        stalled = loss_stalled(self.losses, self.chance_loss)
        if stalled is None:
            if len(self.losses) >= MIN_STEPS:
                self._report("loss", None)
            return False
        what = "chance" if self.chance_loss is not None else "the first steps'"
        self._report("loss", (
            f"not learning: the training loss over steps {stalled['first']}-{stalled['last']} "
            f"of this run averaged {stalled['recent']:.4g}, not below {what} loss "
            f"{stalled['start']:.4g} (step-to-step noise {stalled['noise']:.2g}); "
            + self.advice()))
        return True

    def check_predictions(self, step: int, predicted, gold, names=None) -> bool:
        """At an evaluation of a checkpoint at `step`: warns (once) when every dev example got
        one class. `names`: the class names by id, for the message."""
        if step is None or int(step) < MIN_STEPS:
            return False
        only = one_class(predicted, gold)
        if only is None:
            self._report("predictions", None)
            return False
        shown = names[only] if names is not None and isinstance(only, int) else only
        self._report("predictions", (
            f"not learning: at step {int(step)} the model predicts {shown!r} for every one of "
            f"the {len(gold)} dev examples; " + self.advice()))
        return True

    def check_evaluation(self, step: int | None, loss, predictions=None,
                         final: bool = False) -> bool:
        """At an evaluation (`final`: the run's last; else judged from `MIN_STEPS` steps):
        warns when the eval `loss` is not finite, or `FAR_ABOVE_CHANCE` times the chance loss
        or more with `predictions` ((predicted, gold), None: not known) no better than the
        commonest class."""
        if loss is None or not (final or (step is not None and int(step) >= MIN_STEPS)):
            return False
        loss, at = float(loss), "" if step is None else f" at step {int(step)}"
        message = None
        if not math.isfinite(loss):
            message = f"not learning: the evaluation{at} has a non-finite loss ({loss}); "
        else:
            chance, what = self.chance_loss, "the chance loss"
            if chance is None and predictions is not None and np.ndim(predictions[1]) == 1:
                chance = label_entropy(predictions[1])  # an eval-only run: the dev labels' prior
            classes = len(predictions[2]) if predictions is not None and len(predictions) > 2 \
                and predictions[2] is not None else 0
            if chance is not None and classes > 1 and math.log(classes) > chance:
                # An untrained head guesses uniformly: ln C, above the prior's entropy when the
                # classes are imbalanced (a tagger's O): a short run may not be below it yet.
                chance, what = math.log(classes), f"an even guess's loss (ln {classes})"
            if chance and loss >= FAR_ABOVE_CHANCE * chance:
                worse = None if predictions is None else no_better_than_commonest(
                    *predictions[:2])
                if predictions is None or worse is not None:
                    right = ("" if worse is None else
                             f", and gets {worse[0]} of {worse[2]} dev examples right, no more "
                             f"than the commonest class alone ({worse[1]})")
                    message = (f"not learning: the evaluation{at} has loss {loss:.4g}, "
                               f"{loss / chance:.3g} times {what} {chance:.4g}{right}; ")
        self._report("eval", None if message is None else message + self.advice())
        return message is not None

    def check_start(self, spread: float, what: str) -> bool:
        """Before the first step from an initial checkpoint: `spread` (`input_spread`) of the
        encoder's `what` over one training batch."""
        self.start_spread = float(spread)
        logging.info("training health: the initial encoder's %s vary across one batch by %.3g "
                     "of their size", what, spread)
        if spread >= COLLAPSED_SPREAD:
            return False
        checkpoint = self._value("init_checkpoint")
        self._report("start", (
            f"collapsed start: the initial checkpoint{f' {checkpoint}' if checkpoint else ''} "
            f"gives nearly the same {what} for every input of a training batch (they vary by "
            f"{spread:.2g} of their size; random-initialised models: 0.3-0.55): it looks "
            f"under-trained or collapsed, and fine-tuning from it is unlikely to learn; "
            f"pretrain it longer or start from another checkpoint"))
        return True

    def non_finite_message(self, loss: float, step: int, learning_rate: float, last_good,
                           last_saved, output_dir: str) -> str:
        """The non-finite-loss error: the step, the learning rate, the last good step."""
        saved = (f"the latest one in {output_dir} is from step {last_saved}"
                 if last_saved is not None else f"none in {output_dir} is from this run")
        good = (f"the last step with a finite loss was {last_good}" if last_good is not None
                else "no step of this run had a finite loss")
        flag = self._flag("learning_rate", "--learning_rate")
        given = self._value("learning_rate")
        return (f"loss is {loss} at step {step}; learning rate {learning_rate:.3g} at that step"
                f"{f' ({flag}={given})' if given is not None else ''}; {good}; stopping "
                f"without writing a checkpoint ({saved}); a lower {flag} or a longer "
                f"{self._flag('warmup', '--warmup_step')} usually avoids it")


def settings_of(config, num_warmup_steps=None, named=None) -> dict:
    """{role: (flag, value)} of a run config for the advice (learning_rate, warmup, seed,
    init_checkpoint), each flag by its name in that script (`FLAG_NAMES`). `named`: {role:
    (name, value)} the caller's own names over those (a Python API's arguments, such as
    `warmup_proportion`, where the run config holds warm-up steps)."""
    names = getattr(config, "FLAG_NAMES", {})
    schedule = getattr(config, "schedule", None)
    settings = {}
    if schedule is not None:
        settings["learning_rate"] = ("--learning_rate", schedule.learning_rate)
        warmup = schedule.num_warmup_steps if num_warmup_steps is None else num_warmup_steps
        settings["warmup"] = ("--" + names.get("num_warmup_steps", "num_warmup_steps"), warmup)
    for seed in ("seed", "shuffle_seed"):
        if hasattr(config, seed):
            settings["seed"] = ("--" + seed, getattr(config, seed))
            break
    if getattr(config, "init_checkpoint", None):
        settings["init_checkpoint"] = ("--init_checkpoint", config.init_checkpoint)
    return {**settings, **(named or {})}
