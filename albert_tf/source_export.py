"""export_saved_model.py's work: every SavedModel a weight source can serve, from any format
`weights.readers.open_source` reads. It sits above the tasks (an application of them): each
head's export is its task's, named by the head class (`SERVING`, see `serving.head_export`).

Under `export_dir`:
* `encoder/<v>`: TF-Hub encoder signatures (`mlm` and TF Hub's `.mlm` when the source has the
  masked-LM head, `sop` when it has the sentence-order head; `fill_mask` on raw text with
  `[MASK]`s when it has the masked-LM head and a tokenizer: `tasks/fill_mask/export.py`;
  `embed` on raw text → L2-normalised sentence vectors when it has a tokenizer, pooled as the
  folder's embedding_config.json says: `tasks/embeddings/export.py`);
* `preprocessing/<v>`: raw text → ids (when there is a SentencePiece model or a vocabulary);
* `classifier/<v>`: when the source has a classification head, run_classifier's export
  (`serving_default` on serialized Examples; `serve_text(text_a)` for one text and
  `serve_pair(text_a, text_b)` for two, as the source does not say which its task reads),
  labels from the source (HF `id2label`, our run's labels.json) when it names them;
* `squad/<v>`: when the source has a span head, run_squad's export (`serving_default` on ids →
  start/end logits, `answer_text` on raw question/context).
* `token_classifier/<v>`: when the source has a token classifier, run_ner's export
  (`serving_default` on ids → tags per position, `serve_text` on raw text → tags per word and
  entities), tag names from the source (labels.json, HF `id2label`);
* `multiple_choice/<v>`: when the source has a multiple-choice (RACE) head, run_race's
  features in the graph (`serve_text(passage, question, options)` → `choice`, `letter`,
  `probabilities`; `serving_default` on ids [B, options, S]), its TFLite file a row scorer.
* with `tflite`: `<name>/tflite/<v>/` beside each SavedModel with a TFLite form (encoder,
  classifier, SQuAD v1.1, token classifier, multiple choice's row scorer): the files converted
  from that same model.
A head the source holds that has no export is refused (one error naming it), never left out.
Every module is checked in a fresh process against the Keras model before any version folder
appears; everything (SavedModels and TFLite files) is published together, or nothing.
"""

from __future__ import annotations

import importlib
import os

from absl import logging

from albert_tf.errors import UsageError
from albert_tf.io_utils import check_version
from albert_tf.models import HEAD_CLASSES, AlbertPretrainer
from albert_tf.serving import reference
from albert_tf.serving.encoder import build_module
from albert_tf.serving.head_export import HeadInputs
from albert_tf.serving.preprocessing import build_preprocessing
from albert_tf.serving.publish import Publication
from albert_tf.serving.saved_model import resolve_path, staged_saved_model
from albert_tf.serving.tflite import FOLDER as TFLITE_FOLDER
from albert_tf.serving.tflite import parse_kinds
from albert_tf.serving.tflite import writer as tflite_writer
from albert_tf.serving.openvino_export import cached_dev_inputs
from albert_tf.serving.openvino_export import extras as runtime_extras
from albert_tf.serving.openvino_export import require as require_runtimes
from albert_tf.serving.verify import compare, verify_all_in_fresh_process
from albert_tf.tasks.embeddings.export import embed_serving
from albert_tf.tasks.fill_mask.export import fill_mask_serving
from albert_tf.text import optional as text_optional
from albert_tf.tokenization import FullTokenizer, unk
from albert_tf.weights.loading import init_from_checkpoint
from albert_tf.weights.readers import open_source
from albert_tf.weights.run_inputs import resolve_inputs


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


def albert_text_rules(source) -> bool:
    """Whether raw text gets the original's preprocessing (accents, whitespace, digit-comma
    split) before SentencePiece: not for keras-hub, whose tokenizer passes it as is."""
    return source.format != "keras_hub"


def serving_of(cls):
    """The export function a head class names in `SERVING` (`"<module>:<function>"`, imported
    here, at the top of the layers, or the function itself); None when it names none."""
    serving = cls.SERVING
    if isinstance(serving, str):
        module, _, name = serving.partition(":")
        serving = getattr(importlib.import_module(module), name)
    return serving


def head_exports(source, inputs: HeadInputs) -> list:
    """The `HeadExport` of every head the source holds, built (nothing written), one per head
    class of `HEAD_CLASSES` holding it. The pretrainer's heads are the encoder export's
    (`mlm`, `sop`); any other head without an export of its own is refused, naming it."""
    exports, served = [], set(AlbertPretrainer.HEADS)
    for cls in HEAD_CLASSES:
        held = [head for head in cls.HEADS if head in source.heads]
        if not held or cls is AlbertPretrainer:
            continue
        serving = serving_of(cls)
        if serving is None:
            raise UsageError(f"{source.path} holds a {held[0]} head, which has no SavedModel "
                             f"export ({cls.__name__} names no SERVING)")
        export = serving(cls, inputs)
        if any(export.name == other.name for other in exports):
            raise UsageError(f"{source.path} holds two heads exported as {export.name}/: "
                             f"{', '.join(source.heads)}")
        exports.append(export)
        served.update(held)
    left = [head for head in source.heads if head not in served]
    if left:
        raise UsageError(f"{source.path} holds a {left[0]} head that no head class exports")
    return exports


def export_source(init_checkpoint, export_dir, albert_config_file=None, spm_model_file=None,
                  vocab_file=None, max_seq_length=None, do_lower_case=None, version=None,
                  verify: bool = True, init_from_group0: bool = False, tflite=None,
                  onnx=None, openvino=None,
                  serving_xla: bool = False, num_hidden_layers=None,
                  max_qa_length: int | None = None) -> dict:
    """Writes every export the source at `init_checkpoint` can serve; returns
    {"model", "heads", "<name>": path, "<name>_check": differences} (see the module docstring).
    `max_seq_length` defaults to the source's preprocessor length (keras-hub; the length a run
    recorded in its folder: `model_folder.LENGTHS_FILE`), else 512 or the
    model's max_position_embeddings if smaller;
    `do_lower_case` to the source's tokenizer setting (keras-hub: none), else True.
    `tflite` (kinds, see `serving.tflite.KINDS`): also `<export_dir>/<name>/tflite/<version>/`
    (`<name>.<kind>.tflite`, `<name>.json`, the tokenizer) for the encoder and each head with a
    TFLite form, versioned with the SavedModel `<export_dir>/<name>/<version>` it came from.
    `num_hidden_layers`: run the shared layer that many times (at most the trained depth);
    every export and TFLite file then serves that model, and the result records it.
    `max_qa_length`: the pieces a multiple-choice export keeps of a question+option (as
    run_race.py's flag; default: what the folder's run recorded, else 128). Nothing is
    published until every SavedModel and TFLite file is written and checked."""
    tflite_kinds = parse_kinds(tflite)
    # --onnx / --openvino: kinds checked and their runtimes loaded (or named) before any work.
    onnx_kinds, openvino_kinds = require_runtimes(onnx, openvino)
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
                           max_seq_length=max_seq_length or 0,  # 0: the vocabulary alone
                           num_hidden_layers=num_hidden_layers)
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
    if source.checkpoint_prefix:  # a folder's: the one it serves (model.ckpt-best, else newest)
        result["checkpoint"] = source.checkpoint_prefix
    if files.taken:
        result["from_source"] = list(files.taken)
    result["do_lower_case"] = bool(do_lower_case)
    result["num_hidden_layers"] = config.num_hidden_layers  # the passes every export runs
    if files.vocab_file and not files.spm_model_file:
        result["vocabulary_unk_rate"] = round(result_unk, 5)
    # Every module is built (weights loaded, tokenizer read) before anything is written.
    sop = "sop" in source.heads
    encoder_root, encoder_signatures = build_module(encoder, sop, serving_xla)
    encoder_check = lambda: reference.expected_encoder_outputs(encoder, config, sop)  # noqa: E731
    if "mlm" in source.heads and (files.spm_model_file or files.vocab_file) \
            and text_optional.available():  # raw text with [MASK] → top-k (tasks/fill_mask)
        encoder_check = fill_mask_serving(
            encoder, config, files.spm_model_file, files.vocab_file, max_seq_length,
            do_lower_case, albert_text_rules(source)).attach(
                encoder_root, encoder_signatures, encoder_check)
    if (files.spm_model_file or files.vocab_file) and text_optional.available():
        # raw text → one L2-normalised vector per text (tasks/embeddings)
        encoder_check = embed_serving(
            encoder, source.path, files.spm_model_file, files.vocab_file, max_seq_length,
            do_lower_case, albert_text_rules(source)).attach(
                encoder_root, encoder_signatures, encoder_check)
    exports = [("encoder", encoder_root, encoder_signatures, encoder_check, 1e-5)]
    if (files.spm_model_file or files.vocab_file) and not text_optional.available():
        logging.warning("%s", text_optional.skipped("the preprocessing export"))
    elif files.spm_model_file or files.vocab_file:
        rules = albert_text_rules(source)
        exports.append(("preprocessing", *build_preprocessing(
            files.spm_model_file, max_seq_length, do_lower_case, files.vocab_file, rules,
            hub_length),
            lambda: reference.expected_preprocessing(files.spm_model_file, max_seq_length,
                                                     do_lower_case, files.vocab_file, rules), 0))
    inputs = HeadInputs(config, source, files.spm_model_file, files.vocab_file, max_seq_length,
                        do_lower_case, albert_text_rules(source),
                        lambda model: _load(model, source, init_from_group0),
                        max_qa_length=None if max_qa_length is None else int(max_qa_length))
    lite_models = {"encoder": (encoder, {})}
    for head in head_exports(source, inputs):
        exports.append((head.name, head.root, head.signatures, head.check, 1e-5))
        if head.tflite_model is not None:
            lite_models[head.name] = (head.tflite_model, head.tflite_args)
        elif onnx_kinds or openvino_kinds:
            flag = "--onnx" if onnx_kinds else "--openvino"
            raise UsageError(f"{flag}: the {head.name} export has no ids-in form to convert "
                             f"(the heads with one: encoder, classifier, squad v1.1, "
                             f"token_classifier, multiple_choice); leave {flag} out")
    # folder (tflite, onnx, openvino) -> name -> (stage, written) of the files published with
    # its SavedModel
    runtime_files = {}
    # static_int8's scales from the dev features the folder's run cached, where it has them.
    dev_inputs = cached_dev_inputs(source.path, max_seq_length) if "static_int8" in (
        openvino_kinds or ()) else None
    checks = []  # (name, staged path, calls, expected outputs, atol)
    with Publication() as publication:
        for name, module, signatures, check, atol in exports:
            model, args = lite_models.get(name, (None, {}))
            write = model is not None and tflite_writer(
                model, max_seq_length, tflite_kinds, spm_model_file=files.spm_model_file,
                vocab_file=None if files.spm_model_file else files.vocab_file,
                do_lower_case=do_lower_case, verify=verify, **args)
            writes = {TFLITE_FOLDER: write} if write else {}
            if model is not None:  # ONNX / OpenVINO: <name>/onnx/<v>, <name>/openvino/<v>
                writes.update(runtime_extras(
                    model, max_seq_length, onnx_kinds, openvino_kinds,
                    spm_model_file=files.spm_model_file,
                    vocab_file=None if files.spm_model_file else files.vocab_file,
                    do_lower_case=do_lower_case, verify=verify, dev_inputs=dev_inputs, **args))
            # The verification's requests are also TF Serving's warmup requests.
            verification = check() if verify else None
            with staged_saved_model(module, os.path.join(export_dir, name), signatures, version,
                                    tuple(writes), publication,
                                    warmup=verification and verification[0]) as stage:
                if verify:
                    checks.append((name, stage.path, *verification, atol))
                for folder, write_folder in writes.items():
                    runtime_files.setdefault(folder, {})[name] = (
                        stage, write_folder(stage.extra(folder)))
            result[name] = stage
        # Every SavedModel of the export served by one fresh process, before any is published.
        served = verify_all_in_fresh_process(
            [(path, calls) for _, path, calls, _, _ in checks]) if checks else []
        for (name, _, _, expected, atol), outputs in zip(checks, served):
            result[f"{name}_check"] = compare(expected, outputs, atol)
    # Published together (versions are final only now).
    for name, _, _, _, _ in exports:
        result[name] = result[name].target
    for folder, files_of in runtime_files.items():
        result[folder] = {name: {key: stage.final_path(path) for key, path in written.items()}
                          for name, (stage, written) in files_of.items()}
    return result
