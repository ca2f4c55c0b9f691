"""Writes a `WeightSource` as a Hugging Face ALBERT folder (config.json, model.safetensors,
spiece.model) that `transformers.Albert*.from_pretrained` loads."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
from safetensors.numpy import save_file

from albert_tf.io_utils import atomic_output
from albert_tf.labels import placeholders
from albert_tf.models.formats import head_formats
from albert_tf.weights import hf_names as hn
from albert_tf.weights.arrays import identity_projection, require
from albert_tf.weights.source import SourceError
from albert_tf.weights.writers.common import WriteReport, prepare, refuse_fixed_keys, unused_names


def architecture_for(heads) -> str:
    """The HF class for a set of heads: task heads win over the pretraining heads, the first
    (in `HEAD_CLASSES` order) present naming the class."""
    for architecture, held in hn.ARCHITECTURES.items():
        if architecture not in hn.PRETRAINING_CLASSES and all(head in heads for head in held):
            return architecture
    if "mlm" in heads:
        return "AlbertForPreTraining" if "sop" in heads else "AlbertForMaskedLM"
    return "AlbertModel"


def check_hf(config) -> None:
    """Refuses what HF's ALBERT cannot compute, naming the config key."""
    refuse_fixed_keys(config, "Hugging Face ALBERT")
    if config.hidden_act.lower() not in hn.ACTIVATIONS_OUT:
        raise SourceError(f"Hugging Face ALBERT cannot express config key hidden_act="
                          f"{config.hidden_act!r}; nothing was written")
    # HF puts layer i in group int(i / (L / G)); ours is int(i / L * G): refuse where the
    # float expressions part ways.
    L, G = config.num_hidden_layers, config.num_hidden_groups
    if any(int(i / (L / G)) != config.group_index(i) for i in range(L)):
        raise SourceError(f"Hugging Face ALBERT assigns layers to groups differently for "
                          f"num_hidden_layers={L}, num_hidden_groups={G} (config key "
                          f"num_hidden_groups); nothing was written")


def hf_config(config, architecture, labels=None, problem_type=None) -> dict:
    values = {key: getattr(config, key) for key in hn.CONFIG_KEYS}
    values.update(
        architectures=[architecture], model_type="albert",
        hidden_act=hn.ACTIVATIONS_OUT[config.hidden_act.lower()],
        layer_norm_eps=hn.LAYER_NORM_EPS, classifier_dropout_prob=config.hidden_dropout_prob,
        pad_token_id=0, bos_token_id=2, eos_token_id=3, tie_word_embeddings=True,
        dtype="float32")
    if labels is not None:
        values["id2label"] = {str(i): label for i, label in enumerate(labels)}
        values["label2id"] = {label: i for i, label in enumerate(labels)}
    if problem_type and architecture == "AlbertForSequenceClassification":
        values["problem_type"] = problem_type  # HF then applies a sigmoid per label
    return dict(sorted(values.items()))


def hf_tensors(arrays: dict, config, architecture: str, label: str) -> tuple[dict, list]:
    """({HF name: float32 array} for `architecture`, [TF1 names used]) from TF1-named arrays."""
    arrays = dict(arrays)
    if config.embedding_size == config.hidden_size:
        arrays.update(identity_projection(config))
    prefix = "" if architecture == "AlbertModel" else hn.ENCODER_PREFIX
    rows = [(prefix + h, t, tr) for h, t, tr in
            hn.EMBEDDINGS + hn.PROJECTION +
            tuple(hn.block_rows(config.num_hidden_groups, config.inner_group_num))]
    if architecture not in hn.WITHOUT_POOLER:
        rows += [(prefix + h, t, tr) for h, t, tr in hn.POOLER]
    for head in hn.ARCHITECTURES[architecture]:
        rows += hn.HEADS[head]
    require(arrays, [t for _, t, _ in rows], label)
    return {h: np.ascontiguousarray(arrays[t].T if tr else arrays[t], np.float32)
            for h, t, tr in rows}, [t for _, t, _ in rows]


def write_hf(source, output, config=None, spm_model_file=None) -> WriteReport:
    """Writes `source` to the folder `output` (which must not exist), atomically.

    The HF class follows the heads (`architecture_for`); heads it has no place for are left
    out and reported. A config HF cannot express is refused before anything is written."""
    prepared = prepare(source, config, spm_model_file)
    config = prepared.config
    check_hf(config)
    architecture = architecture_for(prepared.heads)
    tensors, used = hf_tensors(prepared.arrays, config, architecture, source.path)
    labels = None
    written = hn.ARCHITECTURES[architecture]
    labelled = [head_formats()[head] for head in written if head_formats()[head].labelled]
    if labelled:  # a head with one output per label: HF names them in id2label
        num_labels = prepared.arrays[labelled[0].tf1[0][0]].shape[0]
        labels = source.labels or placeholders(num_labels)
    report = WriteReport(os.fspath(output), "hf", architecture, written,
                         tuple(h for h in prepared.heads if h not in written),
                         unused=unused_names(prepared.arrays, used))
    with atomic_output(output, directory=True) as tmp:
        os.makedirs(tmp)
        save_file(tensors, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        with open(os.path.join(tmp, "config.json"), "w", encoding="utf-8") as f:
            json.dump(hf_config(config, architecture, labels, source.problem_type), f, indent=2)
            f.write("\n")
        if source.do_lower_case is False:  # HF's AlbertTokenizer lower-cases by default
            with open(os.path.join(tmp, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                json.dump({"tokenizer_class": "AlbertTokenizer", "do_lower_case": False}, f)
        if prepared.spm_model_file:
            shutil.copyfile(prepared.spm_model_file, os.path.join(tmp, "spiece.model"))
        elif source.vocab_file:
            report.notes.append("a WordPiece vocabulary: HF's AlbertTokenizer reads a SentencePiece "
                                "model only, so none was written")
        else:
            report.notes.append("no SentencePiece model (pass --spm_model_file): spiece.model not written")
    return report
