"""Fill-mask on raw text with a pretrained model's masked-LM head: `FillMask` (Python),
`python -m albert_tf.fill_mask` (the command) and the `fill_mask` signature of an encoder export
(`export_saved_model.py` from a pretraining folder). `FillMask` is loaded on first use: importing
this package starts no TensorFlow."""

import importlib as _importlib

_EXPORTS = {"FillMask": "albert_tf.tasks.fill_mask.predictor",
            "FillMaskError": "albert_tf.tasks.fill_mask.texts"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert_tf.tasks.fill_mask' has no attribute {name!r}")
