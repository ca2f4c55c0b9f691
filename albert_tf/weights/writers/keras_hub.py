"""Writes a `WeightSource` as a keras-hub ALBERT preset that
`keras_hub.models.AlbertBackbone.from_preset` loads (and, with a classifier head,
`AlbertTextClassifier.from_preset`)."""

from __future__ import annotations

import datetime
import json
import os
import shutil

import h5py
import keras
import numpy as np

from albert_tf.io_utils import atomic_output
from albert_tf.labels import write_labels
from albert_tf.weights import keras_hub_names as kn
from albert_tf.weights.arrays import encoder_names, identity_projection, require
from albert_tf.weights.source import SourceError
from albert_tf.weights.tf1_names import BLOCK_PREFIX
from albert_tf.weights.writers.common import WriteReport, prepare, refuse_fixed_keys, unused_names


def check_keras_hub(config) -> None:
    """Refuses what keras-hub's AlbertBackbone cannot compute, naming the config key."""
    if config.hidden_act.lower() not in ("gelu", "gelu_new"):
        raise SourceError(f"keras-hub's AlbertBackbone computes only the tanh gelu: cannot "
                          f"express config key hidden_act={config.hidden_act!r}; nothing was written")
    refuse_fixed_keys(config, "keras-hub's AlbertBackbone")
    if config.num_hidden_layers % config.num_hidden_groups:
        raise SourceError(f"keras-hub's AlbertBackbone needs num_hidden_layers "
                          f"({config.num_hidden_layers}) to be a multiple of config key "
                          f"num_hidden_groups ({config.num_hidden_groups}); nothing was written")
    if config.hidden_dropout_prob != config.attention_probs_dropout_prob:
        raise SourceError(f"keras-hub's AlbertBackbone has one dropout rate: config key "
                          f"attention_probs_dropout_prob ({config.attention_probs_dropout_prob}) "
                          f"differs from hidden_dropout_prob ({config.hidden_dropout_prob}); "
                          f"nothing was written")


def _dtype(name):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name},
            "registered_name": None}


def backbone_config(config) -> dict:
    settings = {"name": "albert_backbone", "trainable": True, "dtype": _dtype("float32")}
    settings.update({theirs: getattr(config, ours) for theirs, ours in kn.CONFIG_KEYS.items()})
    settings["dropout"] = config.hidden_dropout_prob
    order = ("name", "trainable", "dtype", "vocabulary_size", "num_layers", "num_heads",
             "num_groups", "num_inner_repetitions", "embedding_dim", "hidden_dim",
             "intermediate_dim", "dropout", "max_sequence_length", "num_segments")
    return {"module": "keras_hub.src.models.albert.albert_backbone",
            "class_name": kn.BACKBONE_CLASS, "config": {k: settings[k] for k in order},
            "registered_name": "keras_hub>AlbertBackbone"}


def tokenizer_config() -> dict:
    return {"module": "keras_hub.src.models.albert.albert_tokenizer",
            "class_name": "AlbertTokenizer",
            "config": {"name": "albert_tokenizer", "trainable": True, "dtype": _dtype("int32"),
                       "config_file": "tokenizer.json", "proto": None, "sequence_length": None,
                       "add_bos": False, "add_eos": False},
            "registered_name": "keras_hub>AlbertTokenizer"}


def preprocessor_config(sequence_length) -> dict:
    return {"module": "keras_hub.src.models.albert.albert_text_classifier_preprocessor",
            "class_name": "AlbertTextClassifierPreprocessor",
            "config": {"name": "albert_text_classifier_preprocessor", "trainable": True,
                       "dtype": _dtype("float32"), "tokenizer": tokenizer_config(),
                       "config_file": "preprocessor.json", "sequence_length": sequence_length,
                       "truncate": "round_robin"},
            "registered_name": "keras_hub>AlbertTextClassifierPreprocessor"}


def task_config(config, num_classes, sequence_length) -> dict:
    return {"module": "keras_hub.src.models.albert.albert_text_classifier",
            "class_name": "AlbertTextClassifier",
            "config": {"backbone": backbone_config(config),
                       "preprocessor": preprocessor_config(sequence_length),
                       "name": "albert_text_classifier", "num_classes": num_classes,
                       "activation": "linear", "dropout": config.hidden_dropout_prob},
            "registered_name": "keras_hub>AlbertTextClassifier"}


def _layer(parent, key, name, values=()):
    holder = parent.create_group(key).create_group("vars")
    holder.attrs["name"] = name
    for index, value in enumerate(values):
        holder.create_dataset(str(index), data=value)


def _split(value, how, config):
    heads, size = config.num_attention_heads, config.head_size
    if how == "in":
        return value.reshape(value.shape[0], heads, size) if value.ndim == 2 else value.reshape(heads, size)
    if how == "out":
        return value.reshape(heads, size, value.shape[-1])
    return value


def write_backbone_h5(path, arrays, config) -> None:
    """`model.weights.h5` with the layout keras saves an AlbertBackbone in."""
    with h5py.File(path, "w") as handle:
        layers = handle.create_group("layers")
        entries = [(key, name, [arrays[t] for _, t in rows]) for key, name, rows in kn.BACKBONE]
        entries += [(key, (g, k), None) for key, g, k in
                    kn.block_keys(config.num_hidden_groups, config.inner_group_num)]
        for key, name, values in sorted(entries, key=lambda e: e[0]):
            if values is not None:
                _layer(layers, key, name, values)
                continue
            g, k = name
            block = layers.create_group(key)
            block.create_group("vars").attrs["name"] = kn.BLOCK_NAME.format(g=g, k=k)
            prefix = BLOCK_PREFIX.format(g=g, k=k)
            n = g * config.inner_group_num + k
            for sub, sub_name, rows in kn.BLOCK:
                if sub_name in kn.AUTO_NAMED:  # keras numbers these unnamed layers per process
                    sub_name += f"_{n}" if n else ""
                _layer(block, sub, sub_name,
                       [_split(arrays[prefix + t], how, config) for _, t, how in rows])
        handle.create_group("vars").attrs["name"] = "albert_backbone"


def write_task_h5(path, arrays) -> None:
    """`task.weights.h5` of an AlbertTextClassifier: the `logits` dense ([H, C] kernel), plus
    the empty optimizer/preprocessor entries keras saves with a compiled task."""
    with h5py.File(path, "w") as handle:
        layers = handle.create_group("layers")
        _layer(layers, "dense", "logits",
               [np.ascontiguousarray(arrays["output_weights"].T), arrays["output_bias"]])
        _layer(layers, "dropout", "output_dropout")
        optimizer = handle.create_group("optimizer").create_group("vars")
        optimizer.attrs["name"] = "adam"
        optimizer.create_dataset("0", data=np.int64(0))
        optimizer.create_dataset("1", data=np.float32(1e-5))
        preprocessor = handle.create_group("preprocessor")
        preprocessor.create_group("tokenizer").create_group("vars").attrs["name"] = "albert_tokenizer"
        preprocessor.create_group("vars").attrs["name"] = "albert_text_classifier_preprocessor"
        handle.create_group("vars").attrs["name"] = "albert_text_classifier"


def masked_lm_task_config(config) -> dict:
    return {"module": "keras_hub.src.models.albert.albert_masked_lm",
            "class_name": "AlbertMaskedLM",
            "config": {"backbone": backbone_config(config), "preprocessor": None,
                       "name": "albert_masked_lm"},
            "registered_name": "keras_hub>AlbertMaskedLM"}


def write_masked_lm_h5(path, arrays) -> None:
    """`task.weights.h5` of an AlbertMaskedLM: its `mlm_head` (output bias, intermediate dense
    and LayerNorm; the decoder is the backbone's token embedding)."""
    with h5py.File(path, "w") as handle:
        layers = handle.create_group("layers")
        _layer(layers, "input_layer_3", "mask_positions")
        head = layers.create_group("masked_lm_head")
        for sub, name, rows in kn.MLM_HEAD_LAYERS:
            _layer(head, sub, name, [arrays[t] for _, t in rows])
        holder = head.create_group("vars")
        holder.attrs["name"] = kn.MLM_HEAD_NAME
        for index, tf1_name in kn.MLM_HEAD:
            holder.create_dataset(str(index), data=arrays[tf1_name])
        optimizer = handle.create_group("optimizer").create_group("vars")
        optimizer.attrs["name"] = "adam"
        optimizer.create_dataset("0", data=np.int64(0))
        optimizer.create_dataset("1", data=np.float32(5e-5))
        handle.create_group("vars").attrs["name"] = "albert_masked_lm"


def _json(path, values):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(values, f, indent=4)


def write_keras_hub(source, output, config=None, spm_model_file=None,
                    sequence_length=None) -> WriteReport:
    """Writes `source` as a keras-hub preset folder `output` (which must not exist), atomically.

    A classifier head becomes an AlbertTextClassifier task (`task.json`, `task.weights.h5`,
    `preprocessor.json` with `sequence_length`, default min(512, max_position_embeddings)); else
    an MLM head becomes an AlbertMaskedLM task; other heads are left out and reported. Refuses, before writing, what keras-hub cannot
    express."""
    prepared = prepare(source, config, spm_model_file)
    config, arrays = prepared.config, dict(prepared.arrays)
    check_keras_hub(config)
    if config.embedding_size == config.hidden_size:
        arrays.update(identity_projection(config))
    backbone_names = sorted(set(encoder_names(config)) | set(identity_projection(config)))
    require(arrays, backbone_names, source.path)
    classifier = "classifier" in prepared.heads
    masked_lm = not classifier and "mlm" in prepared.heads
    written = ("classifier",) if classifier else ("mlm",) if masked_lm else ()
    head_names = (["output_weights", "output_bias"] if classifier else
                  [t for _, _, rows in kn.MLM_HEAD_LAYERS for _, t in rows] +
                  [t for _, t in kn.MLM_HEAD] if masked_lm else [])
    require(arrays, head_names, source.path)
    report = WriteReport(os.fspath(output), "keras_hub",
                         "AlbertTextClassifier" if classifier else
                         "AlbertMaskedLM" if masked_lm else kn.BACKBONE_CLASS, written,
                         tuple(h for h in prepared.heads if h not in written),
                         unused=unused_names(prepared.arrays, backbone_names + head_names))
    if classifier and prepared.spm_model_file is None:
        raise SourceError(f"{source.path}: a keras-hub AlbertTextClassifier preset needs its "
                          f"tokenizer: pass --spm_model_file; nothing was written")
    parameters = int(sum(np.size(arrays[n]) for n in backbone_names))
    metadata = {"keras_version": keras.__version__, "keras_hub_version": kn.KERAS_HUB_VERSION,
                "parameter_count": parameters,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                "tasks": ["MaskedLM", "TextClassifier"]}
    with atomic_output(output, directory=True) as tmp:
        os.makedirs(tmp)
        _json(os.path.join(tmp, "config.json"), backbone_config(config))
        _json(os.path.join(tmp, "metadata.json"), metadata)
        write_backbone_h5(os.path.join(tmp, "model.weights.h5"), arrays, config)
        if prepared.spm_model_file:
            os.makedirs(os.path.join(tmp, "assets", "tokenizer"))
            shutil.copyfile(prepared.spm_model_file,
                            os.path.join(tmp, "assets", "tokenizer", "vocabulary.spm"))
            _json(os.path.join(tmp, "tokenizer.json"), tokenizer_config())
        elif source.vocab_file:
            report.notes.append("a WordPiece vocabulary: keras-hub's AlbertTokenizer reads a "
                                "SentencePiece model only, so none was written")
        else:
            report.notes.append("no SentencePiece model (pass --spm_model_file): no tokenizer written")
        if classifier:
            write_labels(tmp, source.labels)  # keras-hub has no place for them
            length = (sequence_length or source.sequence_length
                      or min(512, config.max_position_embeddings))
            num_classes = int(arrays["output_weights"].shape[0])
            _json(os.path.join(tmp, "task.json"), task_config(config, num_classes, length))
            _json(os.path.join(tmp, "preprocessor.json"), preprocessor_config(length))
            write_task_h5(os.path.join(tmp, "task.weights.h5"), arrays)
        if masked_lm:
            _json(os.path.join(tmp, "task.json"), masked_lm_task_config(config))
            write_masked_lm_h5(os.path.join(tmp, "task.weights.h5"), arrays)
            report.notes.append(f"keras-hub's MLM head normalises with epsilon "
                                f"{kn.MLM_LAYER_NORM_EPSILON} (ALBERT: 1e-12): its MLM logits "
                                f"will differ slightly")
        if source.do_lower_case:
            report.notes.append("keras-hub's tokenizer does not lower-case; the source's did")
    return report
