"""One run's inputs, resolved once: `resolve_inputs(...)` returns a `RunInputs`.

Every way into a model (the task driver, `export_source`, the Python APIs, the paper kit)
starts here, from flags (a `RunConfig`) or Python arguments:

    inputs = resolve_inputs(config, labels=["neg", "pos"], head="classifier")
    inputs.source          # the opened WeightSource: weights read on first need, then kept
    inputs.albert_config   # the AlbertConfig, and inputs.origins["albert_config"]: from where
    inputs.spm_model_file, inputs.vocab_file, inputs.do_lower_case, inputs.labels  # likewise
    inputs.heads           # the heads the source holds
    inputs.checks          # what was checked against what

The contract:
- Nothing given is edited: a task takes `inputs.run_config(config)`, a filled copy.
- A value comes from the flag (argument) given, else from what the source holds, else the
  default; `origins` names which: "--flag", a file of the source, "id2label of ...".
- Every contradiction between what the source holds and what the flags say is one error naming
  both sides: config keys and tokenizer files (`resolve.resolve_model_files`), casing, labels
  (their order included), vocabulary size, sequence length, head type.
- Whoever holds a `RunInputs` passes `inputs.weights(path)` on, never the path again: the source
  is opened once and its weights are read once.
"""

from __future__ import annotations

import dataclasses
import os

from absl import logging

from albert_tf import io_utils
from albert_tf import labels as L
from albert_tf.config import ConfigError, with_passes
from albert_tf.errors import UsageError
from albert_tf.models.formats import SequenceView
from albert_tf.tokenization.sentencepiece import load_sentencepiece
from albert_tf.tokenization.settings import (CasingConflictError, flag_given,
                                             recorded_lower_case, resolve_do_lower_case)
from albert_tf.tokenization.wordpiece import load_vocab
from albert_tf.weights.heads import fixed_outputs, labelled_heads, reported_as, task_heads
from albert_tf.weights.resolve import resolve_model_files
from albert_tf.weights.model_folder import find_checkpoint
from albert_tf.weights.readers import open_source
from albert_tf.weights.source import WeightSource

# The heads a fine-tuned model ends in: a run that serves one needs its own.
TASK_HEADS = SequenceView(task_heads)
# Heads whose outputs have names (HF id2label, our labels.json): one output per label.
NAMED_HEADS = SequenceView(labelled_heads)


class InputsConflictError(UsageError):
    """What the flags say contradicts what the model (its folder) holds."""


def check_model_inputs(albert_config, max_seq_length: int, vocabulary_size: int | None = None,
                       vocabulary_file: str | None = None) -> None:
    """Before the first step: inputs the model cannot embed are named by flag and config key
    (an index past a table is a crash deep inside the step, or silently wrong on some devices)."""
    if max_seq_length > albert_config.max_position_embeddings:
        raise UsageError(f"--max_seq_length ({max_seq_length}) exceeds the model's "
                         f"max_position_embeddings ({albert_config.max_position_embeddings})")
    if vocabulary_size is not None and vocabulary_size > albert_config.vocab_size:
        raise UsageError(f"{vocabulary_file} has {vocabulary_size} pieces but the model's "
                         f"vocab_size is {albert_config.vocab_size}: ids past it cannot be "
                         "embedded (a vocabulary of another model?)")


@dataclasses.dataclass
class RunInputs:
    """What one run reads before it builds a model (see the module docstring)."""

    init_checkpoint: str | None = None
    source: WeightSource | None = None
    albert_config: object = None
    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool = True
    labels: list | None = None
    head: str | None = None  # the head the run uses, when it says
    taken: tuple = ()  # what came from the source, for the log (`resolve.ModelFiles.taken`)
    origins: dict = dataclasses.field(default_factory=dict)
    checks: list = dataclasses.field(default_factory=list)

    @property
    def heads(self) -> tuple:
        """The heads the source holds (reading them reads the weights, once)."""
        return tuple(self.source.heads) if self.source is not None else ()

    def describe(self) -> str:
        """One line: each input that has a value, and where it came from."""
        values = {"albert_config": self.albert_config is not None,
                  "tokenizer": self.spm_model_file or self.vocab_file,
                  "do_lower_case": str(self.do_lower_case).lower(), "labels": self.labels}
        return "; ".join(f"{key} from {self.origins[key]}" if values[key] is True
                         else f"{key}={values[key]} from {self.origins[key]}"
                         for key in values if values[key] and key in self.origins) or "none"

    def weights(self, path):
        """What `weights.load` takes for `path`: the opened source when `path` is this run's
        `--init_checkpoint`, else `path` itself (a checkpoint of the output_dir)."""
        if self.source is not None and path is not None and os.fspath(path) in (
                self.init_checkpoint, self.source.path):
            return self.source
        return path

    def run_config(self, config):
        """A copy of a task's run config with what was resolved filled in; `config` itself is
        left as given."""
        values = {"albert_config": self.albert_config, "init_checkpoint": self.init_checkpoint}
        if hasattr(config, "spm_model_file"):
            values.update(spm_model_file=self.spm_model_file, vocab_file=self.vocab_file)
        if hasattr(config, "do_lower_case"):
            values["do_lower_case"] = self.do_lower_case
        length = self.sequence_length(config)
        if length is not None:
            values["max_seq_length"] = length
        return dataclasses.replace(config, **values)

    def sequence_length(self, config) -> int | None:
        """A command line without --max_seq_length (`flags_given` names the flags it gave)
        takes the model's max_position_embeddings when that is shorter than the default: a
        model folder made for 128 tokens runs without the flag. A --max_seq_length given stays
        as given, and is checked against the model as in the original. None: nothing to fill."""
        length = getattr(config, "max_seq_length", None)
        given = getattr(config, "flags_given", None)
        if length is None or given is None or "max_seq_length" in given \
                or self.albert_config is None:
            return None
        return min(int(length), int(self.albert_config.max_position_embeddings))

    def model_labels(self) -> tuple[list | None, str | None]:
        """(names, where) of the outputs of the source's head this run uses; (None, None) when
        it has none. HF's placeholders LABEL_0, LABEL_1, ... are names (HF's own), which any
        names of their count agree with."""
        source = self.source
        if source is None or (self.head or "classifier") not in NAMED_HEADS:
            return None, None
        if (self.head or "classifier") not in source.heads or not source.labels:
            return None, None
        where = (f"id2label of {os.path.join(source.path, 'config.json')}"
                 if source.format == "hf" else f"{_folder(source)}/{L.LABELS_FILE}")
        return [str(n) for n in source.labels], where

    def check_labels(self, labels, where: str, trains: bool = False,
                     advice: str = "leave it out to use the model's labels, or give them in the "
                                   "model's order") -> None:
        """`labels` (what the run uses, from `where`) against the model's own, order included
        (`labels.disagreement`). A training run may give its head other labels (its new
        task's: the old head is dropped), but not the model's in another order: that would
        rename every id. `advice`: the error's way out."""
        if not labels:
            return
        own, origin = self.model_labels()
        if own is None:
            return
        how = L.disagreement(labels, own)
        if how is None:
            self.checks.append(f"labels: {where} agrees with {origin}")
            return
        if trains and how != "order":
            return
        how = {"order": "the same labels in another order: every id would be renamed",
               "count": f"{len(labels)} labels for a head of {len(own)} outputs"}.get(
                   how, "other labels than the model was trained on")
        raise InputsConflictError(
            f"{where} {[str(n) for n in labels]} contradicts {origin} {own} ({how}); {advice}")


def _folder(source) -> str:
    path = os.fspath(source.path)
    return path if os.path.isdir(path) else os.path.dirname(path) or "."


def _config_labels(config):
    """A task config's `--label_list` (run_ner's, or run_classifier's among its file flags)."""
    files = getattr(config, "files", None)
    return getattr(config, "label_list", None) or getattr(files, "label_list", None)


def resolve_inputs(config=None, *, init_checkpoint=None, albert_config_file=None,
                   spm_model_file=None, vocab_file=None, do_lower_case=None, labels=None,
                   labels_flag: str = "--label_list", max_seq_length=None, head=None,
                   trains=None, need_tokenizer: bool = True,
                   source: WeightSource | None = None, num_hidden_layers=None,
                   passes_flag: str = "--num_hidden_layers") -> RunInputs:
    """The inputs of one run, each resolved and checked once (see the module docstring).

    `config`: a task's `RunConfig` (its flags); the keyword arguments, when given, win over its
    fields (the Python APIs pass only those). `do_lower_case`: None when not given (a config
    says through `flags_given`). `labels`: the run's labels (a list, or names comma-separated),
    checked against the model's. `head`: the head the run uses ("classifier", ...); a run that
    does not train (`trains` false) and whose source holds another task's head is refused.
    `max_seq_length`, when given, is checked against max_position_embeddings and the
    tokenizer's vocabulary against vocab_size (a task checks its own flags after validating).
    `source`: an already opened source of `init_checkpoint`, reused.
    `num_hidden_layers` (the run's flag, not the config key): run the model's shared layer that
    many times instead of its trained depth (`config.with_passes`); `passes_flag` names it."""
    def field(name, given):
        return given if given is not None else getattr(config, name, None)

    init_checkpoint = field("init_checkpoint", init_checkpoint)
    handle = getattr(config, "albert_hub_module_handle", None)
    if handle and not init_checkpoint and os.path.isfile(os.path.join(handle, "tfhub_module.pb")):
        init_checkpoint = handle  # a local TF-Hub v1 module folder is the weights
    init_checkpoint = None if init_checkpoint is None else os.fspath(init_checkpoint)
    config_file = field("albert_config_file", albert_config_file)
    spm, vocab = field("spm_model_file", spm_model_file), field("vocab_file", vocab_file)
    wants_tokenizer = need_tokenizer and (config is None or hasattr(config, "spm_model_file"))
    if source is None and not init_checkpoint and not field("do_train", trains):
        source = _trained_folder(getattr(config, "output_dir", None))
    files = resolve_model_files(init_checkpoint, config_file, spm, vocab,
                                need_tokenizer=wants_tokenizer, source=source)
    inputs = RunInputs(init_checkpoint, files.source, files.albert_config, files.spm_model_file,
                       files.vocab_file, head=head, taken=files.taken)
    _record_origins(inputs, config_file, spm, vocab, getattr(config, "albert_config", None))
    _run_passes(inputs, field("num_hidden_layers", num_hidden_layers), passes_flag)
    _resolve_casing(inputs, config, do_lower_case)
    trains = bool(field("do_train", trains))
    _check_head(inputs, trains)
    run_labels = L.parse(labels if labels is not None else _config_labels(config))
    # The model's own labels are in its weights (a head's size): read only when they matter.
    own, origin = inputs.model_labels() if run_labels or head in NAMED_HEADS else (None, None)
    inputs.check_labels(run_labels, labels_flag, trains)
    inputs.labels = run_labels or own
    inputs.origins["labels"] = labels_flag if run_labels else origin
    if max_seq_length is not None:  # a task checks its flag itself, after its own validate()
        _check_sizes(inputs, max_seq_length)
    logging.info("inputs: %s", inputs.describe())
    return inputs


def _trained_folder(output_dir) -> WeightSource | None:
    """The output_dir a run serves without --init_checkpoint (predicting with, evaluating or
    exporting its own checkpoints), when it holds one: its config, tokenizer file and casing
    are read from it (`weights.model_folder`), as from --init_checkpoint=<it>."""
    if not output_dir or not io_utils.is_local(output_dir) or \
            not find_checkpoint(output_dir, required=False):
        return None
    return open_source(output_dir)


def _record_origins(inputs, config_file, spm, vocab, given_config) -> None:
    source, origins = inputs.source, inputs.origins
    if config_file:
        origins["albert_config"] = f"--albert_config_file={config_file}"
    elif inputs.albert_config is not None:
        origins["albert_config"] = f"the model config of {source.path}"
    elif given_config is not None:  # a config built in Python with its AlbertConfig
        inputs.albert_config = given_config
        origins["albert_config"] = "the run config's albert_config"
    if spm or vocab:
        origins["tokenizer"] = "--spm_model_file" if spm else "--vocab_file"
    elif inputs.spm_model_file or inputs.vocab_file:
        origins["tokenizer"] = f"the tokenizer file of {source.path}"


def _run_passes(inputs, passes, flag: str) -> None:
    """The model config run `passes` times (a run's --num_hidden_layers); its trained depth is
    the config's own (`with_passes` refuses 0, more, or a count that breaks the groups)."""
    if passes is None or inputs.albert_config is None:
        return
    trained = inputs.albert_config.num_hidden_layers
    try:
        inputs.albert_config = with_passes(inputs.albert_config, passes, flag)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    if trained != passes:
        inputs.origins["albert_config"] += f", run {passes} of its {trained} passes ({flag})"


def _resolve_casing(inputs, config, do_lower_case) -> None:
    """`do_lower_case` as the model's tokenizer settings record it (`tokenization.settings`):
    the settings file beside the tokenizer file, else the source's, else the output_dir's (a
    run resumed or served there keeps the casing its checkpoints were trained with); a
    keras-hub preset feeds raw text (no lower-casing). A flag given against the record is one
    error naming both."""
    if do_lower_case is not None:
        value, given = bool(do_lower_case), True
    elif config is not None and hasattr(config, "do_lower_case"):
        value, given = config.do_lower_case, flag_given(config, "do_lower_case", True)
    else:
        value, given = True, False
    source = inputs.source
    output_dir = getattr(config, "output_dir", None)
    places = (inputs.spm_model_file or inputs.vocab_file,
              source.path if source is not None else None,
              output_dir if output_dir and os.path.isdir(output_dir) else None)
    resolved = resolve_do_lower_case(value, given, *places)  # a contradiction raises
    recorded, where = recorded_lower_case(*places)
    raw_text = source is not None and source.format == "keras_hub"
    if recorded is not None:
        origin = where
    elif raw_text:
        if given and value:
            raise CasingConflictError(
                f"--do_lower_case contradicts {source.path}, a keras-hub preset whose tokenizer "
                "feeds text to SentencePiece as it is (no lower-casing); leave --do_lower_case "
                "out to follow the preset")
        resolved, origin = False, f"{source.path} (keras-hub: text as it is)"
    else:
        origin = "--do_lower_case" if given else "the default (lower-case)"
    inputs.do_lower_case = bool(resolved)
    inputs.origins["do_lower_case"] = origin
    if given:
        inputs.checks.append(f"casing: --do_lower_case agrees with {origin}")


def _check_head(inputs, trains: bool) -> None:
    """A run that serves its head from the source (no training) needs the source's head to be
    that head: a token classifier is not a classifier of texts."""
    if trains or inputs.head not in TASK_HEADS or inputs.source is None:
        return
    held = [h for h in inputs.heads if h in TASK_HEADS]
    # A head the source's format cannot tell from another (RACE's from a one-label classifier)
    # is reported as that one: then its output count tells them apart.
    reported = reported_as(inputs.head, inputs.source.format)
    size, count = fixed_outputs(inputs.head), inputs.source.num_labels
    if not held or inputs.head in held or (reported in held and (
            reported == inputs.head or None in (size, count) or size == count)):
        return
    what = " and a ".join(f"{h} head" + (f" of {count} outputs" if h == reported else "")
                          for h in held)
    flag = "--init_checkpoint" if inputs.init_checkpoint else "--output_dir"  # `_trained_folder`
    raise InputsConflictError(
        f"{flag}={inputs.source.path} holds a {what}, but this run serves a "
        f"{inputs.head} head: pass a checkpoint of this task (or --do_train to train its head "
        "from that encoder)")


def _check_sizes(inputs, max_seq_length) -> None:
    """The sequence length against max_position_embeddings, the tokenizer's vocabulary against
    vocab_size (`check_model_inputs`)."""
    config = inputs.albert_config
    if config is None:
        return
    tokenizer = inputs.spm_model_file or inputs.vocab_file
    size = None
    if tokenizer and io_utils.is_local(tokenizer) and os.path.isfile(tokenizer):
        size = (load_sentencepiece(tokenizer).GetPieceSize() if inputs.spm_model_file
                else len(load_vocab(tokenizer)))
    check_model_inputs(config, int(max_seq_length or 0), size, tokenizer)
    inputs.checks.append(f"vocabulary: {size} pieces within vocab_size {config.vocab_size}"
                         if size is not None else "vocabulary: not checked (no local file)")
