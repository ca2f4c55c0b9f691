"""export_saved_model.py's work: every SavedModel a weight source can serve, from any format
`weights.readers.open_source` reads. It sits above the tasks (an application of them): the
classifier and SQuAD exports are theirs (`ClassifierServing`, `SquadServing`).

Under `export_dir`:
* `encoder/<v>`: TF-Hub encoder signatures (`mlm` and TF Hub's `.mlm` when the source has the
  masked-LM head, `sop` when it has the sentence-order head);
* `preprocessing/<v>`: raw text → ids (when there is a SentencePiece model or a vocabulary);
* `classifier/<v>`: when the source has a classification head, run_classifier's export
  (`serving_default` on serialized Examples; `serve_text(text_a)` for one text and
  `serve_pair(text_a, text_b)` for two, as the source does not say which its task reads),
  labels from the source (HF `id2label`, our run's labels.json) when it names them;
* `squad/<v>`: when the source has a span head, run_squad's export (`serving_default` on ids →
  start/end logits, `answer_text` on raw question/context).
* with `tflite`: `<name>/tflite/<v>/` beside each SavedModel with a TFLite form (encoder,
  classifier, SQuAD v1.1): the files converted from that same model.
Every module is checked in a fresh process against the Keras model before any version folder
appears; everything (SavedModels and TFLite files) is published together, or nothing.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.errors import UsageError
from albert_tf.io_utils import check_version
from albert_tf.models import AlbertClassifier, AlbertSquadV1, AlbertSquadV2
from albert_tf.serving import reference
from albert_tf.serving.encoder import build_module
from albert_tf.serving.preprocessing import build_preprocessing
from albert_tf.serving.publish import Publication
from albert_tf.serving.saved_model import resolve_path, staged_saved_model
from albert_tf.serving.tflite import FOLDER as TFLITE_FOLDER
from albert_tf.serving.tflite import parse_kinds
from albert_tf.serving.tflite import writer as tflite_writer
from albert_tf.serving.verify import compare, verify_all_in_fresh_process
from albert_tf.tasks.classification.export import ClassifierServing
from albert_tf.tasks.squad.export import SquadServing
from albert_tf.text import optional as text_optional
from albert_tf.tokenization import FullTokenizer, unk
from albert_tf.weights.loading import init_from_checkpoint
from albert_tf.weights.readers import open_source
from albert_tf.weights.run_inputs import resolve_inputs
from albert_tf.weights.source import MULTI_LABEL

SAMPLE_TEXT = (["The quick brown fox jumps over the lazy dog.", "ALBERT shares its layers."],
               ["A fox.", ""])


def default_max_seq_length(config) -> int:
    return min(512, int(config.max_position_embeddings))


def hub_seq_length(max_seq_length, source, config) -> int:
    """The length TF Hub's preprocessing calls pack to by default: `--max_seq_length` (or a
    keras-hub preset's own length) when given, else 128 as TF Hub's preprocessors (or the
    model's max_position_embeddings if smaller)."""
    given = max_seq_length or getattr(source, "sequence_length", None)
    return int(given or min(128, default_max_seq_length(config)))


def _load(model, source, init_from_group0):
    logging.info("%s", init_from_checkpoint(model, source, init_from_group0, require_head=True))
    return model


def _classifier(config, source, files, max_seq_length, do_lower_case, init_from_group0):
    multi_label = source.problem_type == MULTI_LABEL
    model = _load(AlbertClassifier(config, source.num_labels, multi_label=multi_label), source,
                  init_from_group0)
    labels = source.labels if source.labels and len(source.labels) == source.num_labels else None
    # A source does not say whether its task reads one text or two: both signatures
    # (serve_text(text_a), serve_pair(text_a, text_b)).
    serving = ClassifierServing(model, max_seq_length, files.spm_model_file, do_lower_case,
                                pair=None, label_names=labels, vocab_file=files.vocab_file,
                                albert_text_rules=albert_text_rules(source))
    root, signatures = serving.module()
    tflite_args = {"label_names": labels}

    def check():  # (inputs, the Keras model's outputs) for the fresh-process comparison
        ids, mask, types_, _ = reference.sample_inputs(config, length=min(16, max_seq_length))
        examples = [_example(ids[i], mask[i], types_[i], max_seq_length) for i in range(len(ids))]
        calls = {"serving_default": {"input": np.array(examples, dtype=object)}}
        expected = {"serving_default": _numpy(serving.serve_examples(tf.constant(examples)))}
        if "serve_text" in signatures:
            text_a, text_b = (np.array(t) for t in SAMPLE_TEXT)
            calls["serve_text"] = {"text_a": text_a}
            expected["serve_text"] = _numpy(serving.serve_single(tf.constant(text_a)))
            calls["serve_pair"] = {"text_a": text_a, "text_b": text_b}
            expected["serve_pair"] = _numpy(serving.serve_pair(tf.constant(text_a),
                                                               tf.constant(text_b)))
        return calls, expected

    return root, signatures, check, (model, tflite_args)


def albert_text_rules(source) -> bool:
    """Whether raw text gets the original's preprocessing (accents, whitespace, digit-comma
    split) before SentencePiece: not for keras-hub, whose tokenizer passes it as is."""
    return source.format != "keras_hub"


def _example(ids, mask, segments, length) -> bytes:
    def feature(values):
        padded = np.zeros(length, np.int64)
        padded[:len(values)] = values
        return tf.train.Feature(int64_list=tf.train.Int64List(value=padded))

    return tf.train.Example(features=tf.train.Features(feature={
        "input_ids": feature(ids), "input_mask": feature(mask),
        "segment_ids": feature(segments)})).SerializeToString()


def _squad(config, source, files, max_seq_length, do_lower_case, init_from_group0):
    if not files.spm_model_file:
        raise UsageError(f"{source.path} holds a span (SQuAD) head: its raw-text export needs "
                         "--spm_model_file (the source holds none)")
    version_2 = "squad_v2" in source.heads
    model = _load(AlbertSquadV2(config) if version_2 else AlbertSquadV1(config), source,
                  init_from_group0)
    serving = SquadServing(model, files.spm_model_file, max_seq_length,
                           max_query_length=min(64, max_seq_length // 2), max_answer_length=30,
                           do_lower_case=do_lower_case)
    root, signatures = serving.module()  # run_squad's export

    def check():  # serving_default takes [batch, max_seq_length] ids, as run_squad's export
        ids, mask, types_, _ = reference.sample_inputs(config, length=max_seq_length)
        inputs = {"input_ids": ids, "input_mask": mask, "segment_ids": types_}
        if version_2:
            inputs["p_mask"] = 1 - types_
        expected = {"serving_default": _numpy(serving.serve_ids(
            {k: tf.constant(v) for k, v in inputs.items()}))}
        return {"serving_default": inputs}, expected

    # SQuAD v2's answerability beam search has no TFLite form (serving.tflite.default_heads).
    return root, signatures, check, (None if version_2 else model, {})


def _numpy(outputs) -> dict:
    return {k: v.numpy() for k, v in outputs.items() if v.dtype != tf.string}


def export_source(init_checkpoint, export_dir, albert_config_file=None, spm_model_file=None,
                  vocab_file=None, max_seq_length=None, do_lower_case=None, version=None,
                  verify: bool = True, init_from_group0: bool = False, tflite=None,
                  serving_xla: bool = False) -> dict:
    """Writes every export the source at `init_checkpoint` can serve; returns
    {"model", "heads", "<name>": path, "<name>_check": differences} (see the module docstring).
    `max_seq_length` defaults to the source's preprocessor length (keras-hub), else 512 or the
    model's max_position_embeddings if smaller;
    `do_lower_case` to the source's tokenizer setting (keras-hub: none), else True.
    `tflite` (kinds, see `serving.tflite.KINDS`): also `<export_dir>/<name>/tflite/<version>/`
    (`<name>.<kind>.tflite`, `<name>.json`, the tokenizer) for the encoder and each head with a
    TFLite form, versioned with the SavedModel `<export_dir>/<name>/<version>` it came from.
    Nothing is published until every SavedModel and TFLite file is written and checked."""
    tflite_kinds = parse_kinds(tflite)
    # Checked before the source is read: 0 was taken for "the default", -3 written as a folder.
    if max_seq_length is not None and int(max_seq_length) < 3:
        raise UsageError(f"--max_seq_length must be at least 3, got {max_seq_length}")
    check_version(version)
    if (spm_model_file or vocab_file) and not text_optional.available():
        # A tokenizer file given on purpose asks for the raw-text exports: refuse, not skip.
        flag = "--spm_model_file" if spm_model_file else "--vocab_file"
        text_optional.tensorflow_text(f"{flag} (the raw-text exports: preprocessing, "
                                      "serve_text, answer_text)")

    # The source opened once (a path that holds none is an error here, not "no source"), its
    # config, tokenizer and casing resolved and checked once; everything below uses `files`.
    source = open_source(resolve_path(init_checkpoint))
    files = resolve_inputs(init_checkpoint=source.path, source=source,
                           albert_config_file=resolve_path(albert_config_file),
                           spm_model_file=resolve_path(spm_model_file),
                           vocab_file=resolve_path(vocab_file), do_lower_case=do_lower_case,
                           max_seq_length=max_seq_length or 0)  # 0: the vocabulary alone
    config = files.albert_config
    if config is None:
        raise UsageError(f"--albert_config_file is required: {source.path} holds no model config")
    hub_length = hub_seq_length(max_seq_length, source, config)
    # A keras-hub preset's preprocessor truncates at its own length: the same, by default.
    max_seq_length = int(max_seq_length or getattr(source, "sequence_length", None)
                         or default_max_seq_length(config))
    if max_seq_length > config.max_position_embeddings:
        raise UsageError(f"--max_seq_length ({max_seq_length}) exceeds the model's "
                         f"max_position_embeddings ({config.max_position_embeddings})")
    do_lower_case = files.do_lower_case  # as the tokenizer's settings (or the source) record
    if files.vocab_file and not files.spm_model_file:
        result_unk = unk.vocabulary_check(FullTokenizer(files.vocab_file, do_lower_case),
                                          do_lower_case)
    export_dir = resolve_path(export_dir)
    encoder = reference.load_model(config, source, init_from_group0)
    result = {"model": type(encoder).__name__, "source": source.describe(),
              "heads": list(source.heads)}
    if files.taken:
        result["from_source"] = list(files.taken)
    result["do_lower_case"] = bool(do_lower_case)
    if files.vocab_file and not files.spm_model_file:
        result["vocabulary_unk_rate"] = round(result_unk, 5)
    # Every module is built (weights loaded, tokenizer read) before anything is written.
    sop = "sop" in source.heads
    exports = [("encoder", *build_module(encoder, sop, serving_xla),
                lambda: reference.expected_encoder_outputs(encoder, config, sop), 1e-5)]
    if (files.spm_model_file or files.vocab_file) and not text_optional.available():
        logging.warning("%s", text_optional.skipped("the preprocessing export"))
    elif files.spm_model_file or files.vocab_file:
        rules = albert_text_rules(source)
        exports.append(("preprocessing", *build_preprocessing(
            files.spm_model_file, max_seq_length, do_lower_case, files.vocab_file, rules,
            hub_length),
            lambda: reference.expected_preprocessing(files.spm_model_file, max_seq_length,
                                                     do_lower_case, files.vocab_file, rules), 0))
    heads = [("classifier", _classifier)] if "classifier" in source.heads else []
    if "squad_v1" in source.heads or "squad_v2" in source.heads:
        heads.append(("squad", _squad))
    lite_models = {"encoder": (encoder, {})}
    for name, build in heads:
        root, signatures, check, (model, lite_args) = build(
            config, source, files, max_seq_length, do_lower_case, init_from_group0)
        exports.append((name, root, signatures, check, 1e-5))
        if model is not None:
            lite_models[name] = (model, lite_args)
    lite_files = {}  # name -> (stage, write) of the TFLite files published with its SavedModel
    checks = []  # (name, staged path, calls, expected outputs, atol)
    with Publication() as publication:
        for name, module, signatures, check, atol in exports:
            model, args = lite_models.get(name, (None, {}))
            write = model is not None and tflite_writer(
                model, max_seq_length, tflite_kinds, spm_model_file=files.spm_model_file,
                vocab_file=None if files.spm_model_file else files.vocab_file,
                do_lower_case=do_lower_case, verify=verify, **args)
            with staged_saved_model(module, os.path.join(export_dir, name), signatures, version,
                                    (TFLITE_FOLDER,) if write else (), publication) as stage:
                if verify:
                    checks.append((name, stage.path, *check(), atol))
                if write:
                    lite_files[name] = stage, write(stage.extra(TFLITE_FOLDER))
            result[name] = stage
        # Every SavedModel of the export served by one fresh process, before any is published.
        served = verify_all_in_fresh_process(
            [(path, calls) for _, path, calls, _, _ in checks]) if checks else []
        for (name, _, _, expected, atol), outputs in zip(checks, served):
            result[f"{name}_check"] = compare(expected, outputs, atol)
    # Published together (versions are final only now).
    for name, _, _, _, _ in exports:
        result[name] = result[name].target
    if lite_files:
        result["tflite"] = {name: {key: stage.final_path(path) for key, path in written.items()}
                            for name, (stage, written) in lite_files.items()}
    return result
