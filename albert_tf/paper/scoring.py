"""Scores a trained model on the held-out records, as the paper's Table 5 does: MLM accuracy, and
the sentence-pair head's accuracy on NSP pairs and on SOP pairs; plus parameter counts.

The NSP and SOP accuracies are the same head (`seq_relationship`, label 0 = B follows A) read on
the two kinds of held-out pairs: a model trained on one kind is scored on both. MLM accuracy is
the mean of the two held-out sets' (the same text, masked twice). A model's scores are kept
beside its checkpoints (`paper_scores.json`, tied to the checkpoint and the held-out data).
"""

from __future__ import annotations

import json
import os

from albert_tf.config import AlbertConfig
from albert_tf.data.pretraining_dataset import dataset_fn
from albert_tf.models import AlbertModel, AlbertPretrainer
from albert_tf.param_counts import count_params
from albert_tf.io_utils import write_text_atomically
from albert_tf.paper.data import read_record
from albert_tf.paper.plan import PaperOptions
from albert_tf.paper.training import model_dir
from albert_tf.paper.transitions import measure, record_batches
from albert_tf.tasks.pretraining.objective import pretraining_objective
from albert_tf.weights.loading import init_from_checkpoint
from albert_tf.weights.model_folder import CONFIG_NAME, find_checkpoint
from albert_tf.training.loop import evaluate_batches
from albert_tf.training.steps import EvalStep

SCORES = "paper_scores.json"
FIGURE_EXAMPLES = 256  # held-out sequences Figure 1 is measured on


def parameter_counts(config: AlbertConfig) -> dict:
    """The encoder's weights (the paper's tables count them without the [H,H] pooler), and the
    embedding part (V×E tables + E→H projection) of that."""
    encoder = AlbertModel(config)
    total = count_params(encoder)
    embeddings = count_params(encoder.embeddings)
    projection = encoder.transformer.embedding_projection
    if projection is not None:
        embeddings += count_params(projection)
    return {"parameters": total - count_params(encoder.pooler), "parameters_with_pooler": total,
            "embedding_parameters": embeddings}


def eval_batches(instances: int, options: PaperOptions) -> tuple[int, int]:
    """(batch size, batches) that read the held-out set once (its size is a multiple of the
    batch size, or smaller than one batch: `heldout.balanced_count`)."""
    examples = max(1, instances)
    batch = max(1, min(options.eval_batch_size, examples))
    return batch, max(1, examples // batch)


def load_pretrainer(runtime, directory: str):
    """The model of a paper model folder with the checkpoint it serves (the model folder's rule:
    best, else newest; a paper run keeps no best); (model, config, load line)."""
    config = AlbertConfig.from_json_file(os.path.join(directory, CONFIG_NAME))
    with runtime.scope():
        model = AlbertPretrainer(config)
    return model, config, init_from_checkpoint(model, directory)


def heldout_metrics(runtime, model, data: dict, options: PaperOptions) -> dict:
    """{"sop": metrics, "nsp": metrics} on the two held-out record sets."""
    step = EvalStep(runtime, model, pretraining_objective())
    found = {}
    for kind in ("sop", "nsp"):
        batch, batches = eval_batches(data[f"heldout_{kind}_instances"], options)
        make = dataset_fn(data[f"heldout_{kind}"], options.max_seq_length,
                          options.max_predictions_per_seq, batch, is_training=False)
        iterator = iter(runtime.strategy.distribute_datasets_from_function(make))
        found[kind] = {**evaluate_batches(step, iterator, batches), "examples": batch * batches}
    return found


def _cached(path: str, settings: dict):
    if not os.path.exists(path):
        return None
    record = read_record(path)
    return record["result"] if record.get("settings") == settings else None


def score_model(runtime, options: PaperOptions, spec, data: dict, with_curve: bool) -> dict:
    """Held-out accuracies and parameter counts (and Figure 1's curve for its two models)."""
    directory = model_dir(options, spec)
    settings = {"checkpoint": os.path.basename(find_checkpoint(directory, required=False) or ""),
                "data": data["key"], "max_heldout_examples": options.max_heldout_examples,
                "curve": with_curve, "figure_examples": FIGURE_EXAMPLES}
    path = os.path.join(directory, SCORES)
    found = _cached(path, settings)
    if found is not None:
        return found
    model, config, loaded = load_pretrainer(runtime, directory)
    metrics = heldout_metrics(runtime, model, data, options)
    sop, nsp = metrics["sop"], metrics["nsp"]
    found = {"mlm_accuracy": (sop["masked_lm_accuracy"] + nsp["masked_lm_accuracy"]) / 2,
             "nsp_accuracy": nsp["sentence_order_accuracy"],
             "sop_accuracy": sop["sentence_order_accuracy"],
             "mlm_loss": (sop["masked_lm_loss"] + nsp["masked_lm_loss"]) / 2,
             "heldout_examples": {"sop": sop["examples"], "nsp": nsp["examples"]},
             **parameter_counts(config), "loaded": loaded}
    if with_curve:
        found["layer_smoothness"] = measure(model.encoder, record_batches(
            [data["heldout_sop"]], options.max_seq_length, options.max_predictions_per_seq,
            FIGURE_EXAMPLES, options.eval_batch_size))
    write_text_atomically(path, json.dumps({"settings": settings, "result": found}, indent=1))
    return found
