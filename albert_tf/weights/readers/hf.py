"""Reader for Hugging Face ALBERT folders (`config.json` with `model_type: albert`, weights in
`model.safetensors` (or shards), or `pytorch_model.bin` when torch is installed)."""

from __future__ import annotations

import json
import os

import numpy as np
from safetensors.numpy import load_file

from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.labels import placeholders
from albert_tf.tokenization.settings import lower_case_setting, read_settings
from albert_tf.weights import hf_names as hn
from albert_tf.weights.arrays import drop_identity_projection, fill_pooler
from albert_tf.weights.heads import labelled_heads
from albert_tf.weights.source import (SourceError, WeightSource, folder_json, json_key,
                                      read_json)

CONFIG = "config.json"
SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
TORCH_BIN = "pytorch_model.bin"
SPM = "spiece.model"


def is_hf_folder(path: str) -> bool:
    return "model_type" in folder_json(path, CONFIG)


def config_from_hf(values: dict, label: str):
    """The `AlbertConfig` of an HF config dict; keys HF has and we cannot honour are refused
    by name."""
    act = values.get("hidden_act", "gelu_new")
    if not isinstance(act, str) or act not in hn.ACTIVATIONS_IN:
        hint = (" (HF `gelu` is the exact erf form; ALBERT and albert-tf compute the tanh form, "
                "HF `gelu_new`)" if act == "gelu" else "")
        raise SourceError(f"{label}: config key hidden_act {act!r} is not supported{hint}; "
                          f"supported: {', '.join(hn.ACTIVATIONS_IN)}")
    eps = values.get("layer_norm_eps", hn.LAYER_NORM_EPS)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise SourceError(f"{label}: config key layer_norm_eps must be a number, got "
                          f"{json.dumps(eps)}")
    if not np.isclose(eps, hn.LAYER_NORM_EPS, rtol=1e-3, atol=0):
        raise SourceError(f"{label}: config key layer_norm_eps is {eps}; ALBERT uses "
                          f"{hn.LAYER_NORM_EPS}")
    position = values.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise SourceError(f"{label}: config key position_embedding_type is {position!r}; only "
                          f"'absolute' is ALBERT's")
    fields = {k: values.get(k, default) for k, default in hn.CONFIG_KEYS.items()}
    fields["hidden_act"] = hn.ACTIVATIONS_IN[act]
    try:
        return AlbertConfig.from_dict(fields, source=label)
    except ConfigError as error:
        raise SourceError(str(error)) from None


def _load_safetensors(path):
    try:
        return load_file(path)
    except Exception as error:  # safetensors raises its own SafetensorError, and TypeError for bf16
        raise SourceError(f"{path}: cannot read it as safetensors ({error})") from None


def _load_torch(path):
    try:
        import torch  # only for pickled weights; never a dependency of albert-tf
    except ImportError:
        raise SourceError(
            f"{path}: PyTorch pickles need torch to read (pip install torch), or save the model "
            f"with safetensors (save_pretrained(..., safe_serialization=True))") from None
    # weights_only: a pickle can run code; this loads tensors and nothing else.
    state = torch.load(path, map_location="cpu", weights_only=True)
    return {k: v.float().numpy() for k, v in state.items()}


def load_hf_tensors(folder: str) -> dict:
    """{HF name: array} from the folder's safetensors file(s) or pytorch_model.bin."""
    single = os.path.join(folder, SAFETENSORS)
    index = os.path.join(folder, SAFETENSORS_INDEX)
    if os.path.isfile(single):
        return _load_safetensors(single)
    if os.path.isfile(index):
        tensors = {}
        for shard in sorted(set(json_key(read_json(index), "weight_map", dict, index,
                                         {}).values())):
            tensors.update(_load_safetensors(os.path.join(folder, shard)))
        return tensors
    if os.path.isfile(os.path.join(folder, TORCH_BIN)):
        return _load_torch(os.path.join(folder, TORCH_BIN))
    raise SourceError(f"{folder}: no {SAFETENSORS}, {SAFETENSORS_INDEX} or {TORCH_BIN}")


def _encoder_prefix(tensors) -> str:
    return hn.ENCODER_PREFIX if any(k.startswith(hn.ENCODER_PREFIX) for k in tensors) else ""


def hf_to_tf1(tensors: dict, config, label: str, architecture=None) -> tuple[dict, tuple]:
    """TF1-named float32 arrays and the heads found. Names no row maps are passed through
    unchanged, so the loader reports them as unused."""
    tensors = dict(tensors)
    classifier = hn.CLASSIFIER_HEAD_OF.get(architecture, "classifier")
    prefix = _encoder_prefix(tensors)
    rows = [(prefix + h, t, tr) for h, t, tr in
            hn.EMBEDDINGS + hn.PROJECTION + tuple(
                hn.block_rows(config.num_hidden_groups, config.inner_group_num)) + hn.POOLER]
    heads = [head for head, head_rows in hn.HEADS.items() if head_rows[0][0] in tensors
             and (head not in hn.CLASSIFIER_HEADS or head == classifier)]
    for head in heads:
        rows += hn.HEADS[head]
    arrays = {}
    for hf_name, tf1_name, transpose in rows:
        if hf_name not in tensors:
            continue
        value = np.asarray(tensors.pop(hf_name), np.float32)
        arrays[tf1_name] = np.ascontiguousarray(value.T) if transpose else value
    for name, tied in hn.TIED.items():
        if name in tensors:
            value = tensors.pop(name)
            reference = arrays.get(tied)
            if reference is not None and not (value.shape == reference.shape
                                              and np.allclose(value, reference)):
                raise SourceError(
                    f"{label}: {name} differs from {tied}: an untied MLM decoder, which ALBERT "
                    f"does not have (config key tie_word_embeddings)")
    for name in list(tensors):
        if name.endswith(hn.BUFFERS):
            tensors.pop(name)
    arrays.update({name: np.asarray(value) for name, value in tensors.items()})
    return arrays, tuple(heads)


def check_label_keys(values: dict, label: str) -> None:
    """The head keys of an HF config.json, checked by type when the folder is opened: id2label
    (and label2id) a mapping of names, num_labels an integer, architectures a list of names,
    problem_type a string (the model keys: `config_from_hf`)."""
    for key in ("id2label", "label2id"):
        if key in values and not isinstance(values[key], dict):
            raise SourceError(f"{label}: key {key} must be a JSON object (id → name), got a "
                              f"{type(values[key]).__name__}")
    names = values.get("id2label") or {}
    bad = [k for k, v in names.items() if not isinstance(v, str) or not str(k).isdigit()]
    if bad:
        raise SourceError(f"{label}: key id2label maps ids (\"0\", \"1\", ...) to names; "
                          f"{bad[0]!r} → {names[bad[0]]!r} is not one")
    count = values.get("num_labels")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
        raise SourceError(f"{label}: key num_labels must be an integer, got {json.dumps(count)}")
    classes = values.get("architectures")
    if classes is not None and not (isinstance(classes, list)
                                    and all(isinstance(c, str) for c in classes)):
        raise SourceError(f"{label}: key architectures must be a list of class names, got "
                          f"{json.dumps(classes)}")
    kind = values.get("problem_type")
    if kind is not None and not isinstance(kind, str):
        raise SourceError(f"{label}: key problem_type must be a string, got {json.dumps(kind)}")


def _labels(values, num_labels, label):
    """The names of a head's `num_labels` outputs from `id2label`; an id it leaves out is an
    error naming it (a folder whose config names some labels but not all)."""
    id2label = {int(k): v for k, v in (values.get("id2label") or {}).items()}
    if not id2label:  # HF's own names for classes nobody named
        return placeholders(num_labels)
    missing = [i for i in range(num_labels) if i not in id2label]
    if missing:
        raise SourceError(
            f"{label}: key id2label names ids {sorted(id2label)} but the head has {num_labels} "
            f"outputs: id {missing[0]} has no label")
    return [id2label[i] for i in range(num_labels)]


def _do_lower_case(folder):
    # HF's AlbertTokenizer lower-cases unless its tokenizer_config.json says otherwise.
    values, path = read_settings(folder)
    recorded = None if values is None else lower_case_setting(values, path)
    return True if recorded is None else recorded


def read_hf(path: str) -> WeightSource:
    """An HF ALBERT folder as a `WeightSource` (TF1 names; see `hf_names`). The config and the
    tokenizer settings are read now; the weights when first needed (`WeightSource`)."""
    label = os.path.join(path, CONFIG)
    values = read_json(label)
    if values.get("model_type") != "albert":
        raise SourceError(f"{label}: model_type is {values.get('model_type')!r}; only 'albert' "
                          f"models can be read")
    config = config_from_hf(values, label)
    check_label_keys(values, label)
    spm = os.path.join(path, SPM)
    return WeightSource(
        path=path, format="hf", config=config,
        spm_model_file=spm if os.path.isfile(spm) else None,
        do_lower_case=_do_lower_case(path),
        weights_reader=lambda: _read_weights(path, values, config, label))


def _read_weights(path, values, config, label) -> dict:
    """The `WeightSource` fields that come from the weights (see `read_hf`)."""
    architecture = (values.get("architectures") or [None])[0]
    arrays, heads = hf_to_tf1(load_hf_tensors(path), config, path, architecture)
    drop_identity_projection(arrays, config, path)
    filled = fill_pooler(arrays, config)
    num_labels = labels = None
    for head, weights in labelled_heads().items():
        if head in heads:
            num_labels = int(arrays[weights].shape[0])
            labels = _labels(values, num_labels, label)
    return dict(arrays=arrays, heads=heads, num_labels=num_labels, labels=labels, filled=filled,
                problem_type=values.get("problem_type") if "classifier" in heads else None)
