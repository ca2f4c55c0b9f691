"""The one load path: `load(model, source)` puts the weights of any source into a model.

Initialisation, evaluation, prediction and export all load through it (the trainer gets it as
its `initialize` callable from the task driver), so every load logs the same one line: what was
loaded, the source's heads the model has no use for, the model's heads the source lacks.
"""

from __future__ import annotations

from absl import logging

from albert_tf.weights.heads import (has_head, head_loaded, labelled_heads, model_heads,
                                     task_heads)
from albert_tf.weights.lora_base import read_record, restore_lora
from albert_tf.weights.our_checkpoints import restore_ours
from albert_tf.weights.readers import open_source
from albert_tf.weights.source import WeightSource
from albert_tf.weights.stable import read_stable
from albert_tf.weights.tf1_checkpoint import (ArrayReader, CheckpointError, load_tf1_checkpoint,
                                              load_tf1_weights)


def load(model, source, init_from_group0=False, require_head=False, new_head=False) -> str:
    """Loads model weights (not optimizer slots, as the original) from any weight source
    `open_source` reads, or an opened `WeightSource`: an original TF1 checkpoint, a TF-Hub v1
    module, one written by this package's training, or converted arrays (Hugging Face,
    keras-hub). Returns one line saying what was loaded and what was left (heads of the source
    the model has no use for, heads of the model the source lacks).

    `require_head=True` (prediction and export): a task model whose head the checkpoint does
    not hold (a pretraining checkpoint) is refused rather than used with an untrained head.
    A head of the model's kind with another number of outputs is refused naming both counts;
    `new_head=True` (a training run's start) drops it instead with one warning line: a new
    head (another class count) trains from a fine-tuned encoder.
    """
    source = source if isinstance(source, WeightSource) else open_source(source)
    # A run still training in the folder may rotate the checkpoint away: read the newest then.
    return read_stable(source, lambda opened: _load(model, opened, init_from_group0,
                                                    require_head, new_head))


def _other_size(model, source, new_head: bool) -> bool:
    """Whether the source holds the model's labelled head with another number of outputs (then
    the model's head starts new, `new_head`; else one error naming both counts)."""
    wanted, held = getattr(model, "num_labels", None), source.num_labels
    heads = [h for h in model_heads(model) if h in source.heads and h in labelled_heads()]
    if not heads or wanted is None or held is None or int(wanted) == int(held):
        return False
    names = f" ({', '.join(map(str, source.labels))})" if source.labels else ""
    if new_head:
        logging.warning("%s: its %s head has %d outputs%s, this run's %d: the encoder is "
                        "loaded and the head trained new", source.path, heads[0], held, names,
                        wanted)
        return True
    if wanted == 1 and heads[0] == "classifier":
        wanted, advice = "1 (a regression)", "pass a regression model's checkpoint"
    else:
        advice = "pass that model's labels (or none, to use its own), a checkpoint of this task"
    raise CheckpointError(
        f"{source.path} holds a {heads[0]} head with {held} outputs{names}, but this run's "
        f"has {wanted}: {advice}, or --do_train to train a new head from its encoder")


def _load(model, source, init_from_group0, require_head, new_head=False) -> str:
    if has_head(model) and _other_size(model, source, new_head):
        description = _load(model.encoder, source, init_from_group0, False)
        return description.replace("heads loaded: none", f"{model_heads(model)[0]} head new")
    if source.arrays is not None or source.format != "albert_tf":
        if source.arrays is not None:
            report = load_tf1_weights(model, ArrayReader(source.arrays), source.path,
                                      init_from_group0)
        else:
            report = load_tf1_checkpoint(model, source.checkpoint_prefix, init_from_group0)
        heads = [] if not has_head(model) else [
            h for h in model_heads(model) if head_loaded(h, report.loaded)]
        description = f"{source.describe()}: {len(report.loaded)} variables loaded"
        if report.from_group0:
            description += f" ({len(report.from_group0)} from group_0)"
    elif (record := read_record(source.checkpoint_prefix)) is not None:
        # A LoRA run's adapters and head: its base (lora.json) first, its encoder and no head.
        description, attributes = restore_lora(
            model, source.checkpoint_prefix, record,
            lambda target, base: _load(target, open_source(base), False, False, True))
        heads = list(model_heads(model))
    else:
        description, attributes = restore_ours(model, source.checkpoint_prefix)
        heads = list(model_heads(model)) if attributes else []
    wanted = model_heads(model) if has_head(model) else ()
    left = [h for h in source.heads if h not in wanted and not
            (h == "classifier" and "multiple_choice" in wanted)]
    missing = [h for h in wanted if h not in heads]
    description += (f"; heads loaded: {', '.join(heads) or 'none'}"
                    + (f"; not used: {', '.join(left)}" if left else "")
                    + (f"; not in the source (left at their init): {', '.join(missing)}"
                       if missing else ""))
    if require_head and not heads and has_head(model):
        held = [h for h in source.heads if h in task_heads()]
        what = (f"it holds a {' and a '.join(held)} head, another task's" if held
                else "it is a pretraining checkpoint")
        raise CheckpointError(
            f"{source.path} holds no trained head for {type(model).__name__} ({what}): train "
            "first (--do_train) or pass a fine-tuned --init_checkpoint of this task")
    return description


# The name the tasks, the original's flag (--init_checkpoint) and older code use.
init_from_checkpoint = load
