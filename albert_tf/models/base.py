"""`AlbertTaskModel`: what every model with a head on the ALBERT encoder has in common."""

from __future__ import annotations

import keras

from albert_tf.config import AlbertConfig
from albert_tf.models.encoder import AlbertModel, as_albert_config


class AlbertTaskModel(keras.Model):
    """An `AlbertModel` (`.encoder`) plus a task head built by the subclass.

    Every task model is built as `Cls(config, <head arguments>, encoder=None, **kwargs)`.
    A given `encoder` is used as is (shared, e.g. by two heads or by a pretrainer whose weights
    a task starts from); otherwise a new one is built from `config`. The encoder is assigned
    before the head's weights, so `model.weights` (and the optimizer slots that follow their
    order) keep the order the models have always had.

    `get_config` holds `config` plus the head arguments named by `HEAD_ARGUMENTS`; `from_config`
    builds a model with a new encoder from it (an encoder shared at construction is not part of
    the config, as with any Keras layer argument that is an object).

    What the rest of the package knows about a head is read from its class (one registry:
    `albert_tf.models.HEAD_CLASSES`):
    `HEAD_ID`: the head's id. `HEADS`: the weight-source heads the model holds (what
    `WeightSource.heads` lists): `(HEAD_ID,)`, but `("mlm", "sop")` for the pretrainer, whose
    two heads a source may hold one without the other.
    `FORMATS`: {head: `HeadFormats`} for each of `HEADS`: its TF1, HF and keras-hub names.
    `TFLITE_NAME` / `TFLITE_OUTPUTS`: the TFLite file's name and output names; `()` when the
    model has no TFLite form.
    `SERVING`: how `export_saved_model.py` exports the head: `"<module>:<function>"` or the
    function, called as `function(cls, inputs)` with a `serving.head_export.HeadInputs`, returning a
    `HeadExport`; None when the head has no export of its own (the pretrainer's heads are
    served by the encoder's export).
    """

    HEAD_ARGUMENTS: tuple = ()
    HEAD_ID: str = ""
    HEADS: tuple = ()
    FORMATS: dict = {}
    TFLITE_NAME: str = ""
    TFLITE_OUTPUTS: tuple = ()
    SERVING = None

    def __init__(self, config: AlbertConfig, encoder: AlbertModel | None = None, **kwargs):
        super().__init__(**kwargs)
        self.config = as_albert_config(config)
        self.encoder = encoder if encoder is not None else AlbertModel(self.config)

    def get_config(self):
        head = {name: getattr(self, name) for name in self.HEAD_ARGUMENTS}
        return {"config": self.config.to_dict(), **head, "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(AlbertConfig.from_dict(config.pop("config")), **config)
