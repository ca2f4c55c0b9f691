"""Fill-mask on raw text with a pretrained model's masked-LM head: `FillMask` (Python),
`python -m albert_tf.fill_mask` (the command) and the `fill_mask` signature of an encoder export
(`export_saved_model.py` from a pretraining folder). `FillMask` is loaded on first use: importing
this package starts no TensorFlow."""

from albert_tf import lazy_imports as _lazy_imports

_EXPORTS = {"FillMask": "albert_tf.tasks.fill_mask.predictor",
            "FillMaskError": "albert_tf.tasks.fill_mask.texts"}
__all__ = list(_EXPORTS)

__getattr__ = _lazy_imports.lazy_exports(__name__, _EXPORTS)
