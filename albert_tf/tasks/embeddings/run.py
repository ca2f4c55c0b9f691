"""run_embeddings.py's work: train a `TextEncoder` on a pair file and evaluate it on scored
pairs (Spearman ×100, as the STS benchmarks report it).

* `--do_train`: `--train_file` pairs (`pairs.read_pairs`: CSV, TSV, JSONL; GLUE's STS-B as it
  is). `--embedding_loss=contrastive` (default): in-batch negatives; a scored file gives its
  pairs scored at or above the middle of its range (STS-B: 2.5 of 5) as positives.
  `--embedding_loss=cosine`: every pair against its score. The trained model is written to
  `--output_dir`, a new folder (refused when it exists and is not empty) that holds everything
  `--init_checkpoint=<it>` needs, with `eval_results.json`; it appears only when complete.
* `--do_eval`: `--dev_file` scored pairs; without --do_train the model of `--init_checkpoint`
  is evaluated (the pretrained baseline) and `<output_dir>/eval_results.json` written.
"""

from __future__ import annotations

import json
import os

from albert_tf import io_utils
from albert_tf.errors import UsageError
from albert_tf.tasks.embeddings.config import EmbeddingsRunConfig
from albert_tf.tasks.embeddings.encoder import TextEncoder
from albert_tf.tasks.embeddings.pairs import Pairs, parse_range, read_pairs

RESULTS = "eval_results.json"


def positives(pairs: Pairs) -> Pairs:
    """The pairs scored at or above the middle of the file's range (all of an unscored file)."""
    if pairs.scores is None:
        return pairs
    middle = sum(pairs.score_range) / 2
    keep = [i for i, score in enumerate(pairs.scores) if score >= middle]
    if not keep:
        raise UsageError(f"{pairs.path}: no pair scored at or above {middle:g}, the middle of "
                         "its range: no positives for --embedding_loss=contrastive")
    return Pairs([pairs.texts_a[i] for i in keep], [pairs.texts_b[i] for i in keep], None,
                 pairs.score_range, pairs.path)


def _check(config: EmbeddingsRunConfig) -> None:
    for flag in ("init_checkpoint", "output_dir"):
        if not getattr(config, flag):
            raise UsageError(f"--{flag} is required")
    if not config.do_train and not config.do_eval:
        raise UsageError("at least one of --do_train and --do_eval must be true")
    if config.do_train and not config.train_file:
        raise UsageError("--do_train needs --train_file")
    if config.do_eval and not config.dev_file:
        raise UsageError("--do_eval needs --dev_file (scored pairs)")
    if not config.temperature > 0:
        raise UsageError(f"--temperature must be above 0, got {config.temperature}")
    if config.train_batch_size < 1 or config.num_train_epochs <= 0:
        raise UsageError("--train_batch_size and --num_train_epochs must be above 0")
    output = os.path.abspath(config.output_dir)
    if config.do_train and os.path.exists(output) and (
            not os.path.isdir(output) or os.listdir(output)):
        raise UsageError(f"--output_dir={config.output_dir}: exists and is not an empty folder; "
                         "a trained model goes to a new folder")


def run_embeddings(config: EmbeddingsRunConfig) -> dict:
    """Trains and/or evaluates (see the module docstring); returns the results written."""
    _check(config)
    score_range = parse_range(config.score_range)
    # Every input is read (and every bad row refused) before the model loads.
    train = read_pairs(config.train_file, score_range,
                       need_scores=config.embedding_loss == "cosine") if config.do_train \
        else None
    dev = read_pairs(config.dev_file, score_range, need_scores=True) if config.do_eval else None
    encoder = TextEncoder.from_pretrained(
        config.init_checkpoint, config.pooling, config.max_seq_length, config.spm_model_file,
        config.vocab_file, config.albert_config_file, config.do_lower_case)
    results = {"pooling": encoder.pooling, "max_seq_length": encoder.max_seq_length}
    if train is not None:
        used = positives(train) if config.embedding_loss == "contrastive" else train
        epochs = max(1, round(config.num_train_epochs))
        fitted = encoder.fit(used, epochs=epochs, batch_size=config.train_batch_size,
                             learning_rate=config.learning_rate,
                             temperature=config.temperature, seed=config.seed)
        results.update(train_pairs=len(used), train_steps=fitted["steps"],
                       train_loss=fitted["loss"], embedding_loss=config.embedding_loss)
        if config.embedding_loss == "contrastive":
            results["temperature"] = config.temperature
    if dev is not None:
        scored = encoder.evaluate(dev.texts_a, dev.texts_b, dev.scores)
        results.update(eval_spearman=scored["spearman"], eval_pearson=scored["pearson"],
                       eval_pairs=scored["pairs"])
    text = json.dumps(results, indent=2)
    if train is not None:
        output = os.path.abspath(config.output_dir)
        if os.path.isdir(output) and not os.listdir(output):
            os.rmdir(output)  # an empty folder made for the run: written whole, renamed
        results["output_dir"] = encoder.save(output, {RESULTS: text})
    else:
        os.makedirs(config.output_dir, exist_ok=True)
        io_utils.write_text_atomically(os.path.join(config.output_dir, RESULTS), text + "\n")
    return results
