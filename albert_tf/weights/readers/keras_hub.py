"""Reader for keras-hub ALBERT presets (`config.json` naming `AlbertBackbone`,
`model.weights.h5`; tasks add `task.json` + `task.weights.h5`)."""

from __future__ import annotations

import contextlib
import os
import re

import h5py
import numpy as np

from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.labels import LabelFile
from albert_tf.weights import keras_hub_names as kn
from albert_tf.weights.arrays import drop_identity_projection
from albert_tf.weights.source import (SourceError, WeightSource, folder_json, json_key,
                                      read_json)
from albert_tf.weights.tf1_names import BLOCK_PREFIX

CONFIG, WEIGHTS, TASK, TASK_WEIGHTS = "config.json", "model.weights.h5", "task.json", "task.weights.h5"
SPM = os.path.join("assets", "tokenizer", "vocabulary.spm")


def is_preset(path: str) -> bool:
    values = folder_json(path, CONFIG)
    return "class_name" in values and "config" in values


def config_from_keras_hub(values: dict, label: str):
    if values.get("class_name") != kn.BACKBONE_CLASS:
        raise SourceError(f"{label}: class_name is {values.get('class_name')!r}; only "
                          f"{kn.BACKBONE_CLASS} presets can be read")
    settings = json_key(values, "config", dict, label, {})
    missing = [k for k in kn.CONFIG_KEYS if k not in settings]
    if missing:
        raise SourceError(f"{label}: config key(s) {', '.join(missing)} missing")
    fields = {ours: settings[theirs] for theirs, ours in kn.CONFIG_KEYS.items()}
    dropout = settings.get("dropout", 0.0)
    fields.update(hidden_act="gelu", hidden_dropout_prob=dropout,
                  attention_probs_dropout_prob=dropout, initializer_range=0.02)
    try:
        return AlbertConfig.from_dict(fields, source=label)
    except ConfigError as error:
        raise SourceError(str(error)) from None


def _vars(group):
    """[var arrays] of one layer group (vars/0, vars/1, …) and the layer's name."""
    holder = group.get("vars")
    if holder is None:
        return [], None
    values = [np.asarray(holder[str(i)], np.float32) for i in range(len(holder))]
    return values, holder.attrs.get("name")


def _reshape(value, how, hidden):
    if how == "in":  # [H, heads, d] → [H, H]; [heads, d] → [H]
        return value.reshape(value.shape[0], hidden) if value.ndim == 3 else value.reshape(hidden)
    if how == "out":  # [heads, d, H] → [H, H]
        return value.reshape(hidden, value.shape[-1])
    return value


def _layers(handle):
    """(group, var arrays, layer name) of each saved layer in a `*.weights.h5` file."""
    layers = handle.get("layers", {})
    for key in layers:
        values, name = _vars(layers[key])
        yield layers[key], values, name


@contextlib.contextmanager
def _read_h5(path: str):
    """The HDF5 file at `path`; any h5py error while it is read (a truncated or overwritten file
    fails at the open, or only at the first group read) is a `SourceError` naming the file."""
    try:
        with h5py.File(path, "r") as handle:
            yield handle
    except SourceError:
        raise
    except (OSError, RuntimeError, KeyError, ValueError) as error:
        raise SourceError(f"{path}: cannot read it as HDF5 ({error}); the file is damaged or not "
                          "keras-hub weights") from None


def backbone_to_tf1(weights_file: str, config) -> dict:
    """TF1-named arrays of a keras-hub backbone's `model.weights.h5`, by each layer's name."""
    backbone = {name: rows for _, name, rows in kn.BACKBONE}
    block = {name: rows for _, name, rows in kn.BLOCK}
    arrays = {}
    with _read_h5(weights_file) as handle:
        for group, values, name in _layers(handle):
            match = re.fullmatch(r"group_(\d+)_inner_layer_(\d+)", str(name))
            if match:
                prefix = BLOCK_PREFIX.format(g=int(match.group(1)), k=int(match.group(2)))
                for path, _, _ in kn.BLOCK:
                    sub_values, sub_name = _vars(group[path]) if path in group else ([], None)
                    for index, tf1_name, how in block.get(sub_name, ()):
                        arrays[prefix + tf1_name] = _reshape(sub_values[index], how,
                                                             config.hidden_size)
            else:
                for index, tf1_name in backbone.get(name, ()):
                    arrays[tf1_name] = values[index]
    return arrays


def classifier_to_tf1(task_weights_file: str) -> dict:
    rows = {name: r for _, name, r in kn.CLASSIFIER}
    arrays = {}
    with _read_h5(task_weights_file) as handle:
        for _, values, name in _layers(handle):
            for index, tf1_name in rows.get(name, ()):
                arrays[tf1_name] = values[index]
    if "output_weights" not in arrays:
        raise SourceError(f"{task_weights_file}: no `logits` dense layer (AlbertTextClassifier)")
    arrays["output_weights"] = np.ascontiguousarray(arrays["output_weights"].T)  # [H, C] → [C, H]
    return arrays


def masked_lm_to_tf1(task_weights_file: str) -> dict:
    """The MLM head of an AlbertMaskedLM's `task.weights.h5` under the original's names.

    keras-hub normalises in this head with epsilon 1e-5 where ALBERT uses 1e-12, so our MLM
    logits are not keras-hub's exactly (6.5e-4 max on logits of scale 1 for a small random
    model measured against keras-hub 0.32; the encoder is exact)."""
    arrays = {}
    with _read_h5(task_weights_file) as handle:
        for group, values, name in _layers(handle):
            if name != kn.MLM_HEAD_NAME:
                continue
            for index, tf1_name in kn.MLM_HEAD:
                arrays[tf1_name] = values[index]
            for path, _, rows in kn.MLM_HEAD_LAYERS:
                sub_values, _ = _vars(group[path])
                for index, tf1_name in rows:
                    arrays[tf1_name] = sub_values[index]
    if len(arrays) != 5:
        raise SourceError(f"{task_weights_file}: no complete `{kn.MLM_HEAD_NAME}` layer "
                          f"(AlbertMaskedLM)")
    return arrays


def read_keras_hub(path: str) -> WeightSource:
    """A keras-hub preset folder as a `WeightSource`: the backbone, plus the classifier head of
    an AlbertTextClassifier or the MLM head of an AlbertMaskedLM preset. The config and the
    task's class are read now, the weights when first needed (`WeightSource`)."""
    config = config_from_keras_hub(read_json(os.path.join(path, CONFIG)),
                                   os.path.join(path, CONFIG))
    weights = os.path.join(path, WEIGHTS)
    if not os.path.isfile(weights):
        raise SourceError(f"{path}: no {WEIGHTS}")
    task, notes = None, ()
    task_file = os.path.join(path, TASK)
    if os.path.isfile(task_file) and os.path.isfile(os.path.join(path, TASK_WEIGHTS)):
        task = read_json(task_file).get("class_name")
    if task == "AlbertMaskedLM":
        notes = (f"keras-hub's MLM head normalises with epsilon {kn.MLM_LAYER_NORM_EPSILON}, "
                 f"ALBERT's with 1e-12: MLM logits differ slightly from keras-hub's",)
    spm = os.path.join(path, SPM)
    preprocessor = os.path.join(path, "preprocessor.json")
    length = (json_key(json_key(read_json(preprocessor), "config", dict, preprocessor, {}),
                       "sequence_length", int, preprocessor)
              if os.path.isfile(preprocessor) else None)
    # keras-hub's AlbertTokenizer feeds raw text to SentencePiece: no lower-casing.
    return WeightSource(
        path=path, format="keras_hub", config=config,
        spm_model_file=spm if os.path.isfile(spm) else None, do_lower_case=False, notes=notes,
        sequence_length=length, weights_reader=lambda: _read_weights(path, config, task))


def _read_weights(path, config, task) -> dict:
    """The `WeightSource` fields that come from the weights (see `read_keras_hub`)."""
    arrays = backbone_to_tf1(os.path.join(path, WEIGHTS), config)
    drop_identity_projection(arrays, config, path)
    values = dict(heads=(), num_labels=None, labels=None)
    if task == "AlbertTextClassifier":
        arrays.update(classifier_to_tf1(os.path.join(path, TASK_WEIGHTS)))
        num_labels = int(arrays["output_weights"].shape[0])
        # written beside it by our converter
        values.update(heads=("classifier",), num_labels=num_labels,
                      labels=LabelFile.read(path).for_head(num_labels, "classifier", path))
    elif task == "AlbertMaskedLM":
        arrays.update(masked_lm_to_tf1(os.path.join(path, TASK_WEIGHTS)))
        values["heads"] = ("mlm",)
    return dict(values, arrays=arrays)
