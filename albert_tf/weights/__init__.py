"""Weights: every format in, every format out, and the one load path.

    from albert_tf import weights
    source = weights.open_source(path)          # picks the reader from what the path holds
    print(weights.load(model, source))          # or weights.load(model, path)

Readers (`readers/`: `tf1` for TF1 checkpoints, output_dirs and TF-Hub v1 modules, `hf`,
`keras_hub`) each yield a `WeightSource` (TF1-named arrays + config + heads + tokenizer files);
`load` (`loading`) puts one into a model; writers (`writers/`, `python -m albert_tf.weights`)
write one back. The name tables: `tf1_names` (the one every reader maps to), `hf_names`,
`keras_hub_names`; `tf1_checkpoint` loads and saves the original's checkpoints over the first,
`our_checkpoints` handles the ones our training writes. `resolve` takes a run's config and
tokenizer from its source; `model_folder` finds what a model folder holds.
"""

import importlib as _importlib

# Loaded on first use: `python -m albert_tf.weights --help` (and `albert_tf.convert`) must not
# import TensorFlow, which the readers do.
_EXPORTS = {
    "load": "loading", "init_from_checkpoint": "loading",
    "open_source": "readers", "READERS": "readers",
    "WeightSource": "source", "SourceError": "source", "HEADS": "heads",
    "CheckpointError": "tf1_checkpoint", "load_tf1_checkpoint": "tf1_checkpoint",
    "save_tf1_checkpoint": "tf1_checkpoint",
    "is_tf1_checkpoint": "our_checkpoints", "checkpoint_step": "our_checkpoints",
    "export_tf1_checkpoint": "our_checkpoints",
    "resolve_model_files": "resolve", "write": "writers", "OUTPUT_FORMATS": "writers",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
