"""ALBERT models: the encoder and every model with a head on it.

`AlbertModel` (encoder), `AlbertPretrainer` (masked-LM + sentence-order heads),
`AlbertClassifier` (GLUE), `AlbertSquadV1` / `AlbertSquadV2` (SQuAD spans),
`AlbertMultipleChoice` (RACE), `AlbertTokenClassifier` (NER and other tagging: a tag per
piece). Task models are built as `Cls(config, <head arguments>,
encoder=None)`.

`HEAD_CLASSES` is the one list of models with a head: each class carries its head id, the
weight-source heads it holds, their names in every weight format (`FORMATS`), its TFLite
outputs and its export (`SERVING`; see `AlbertTaskModel`), and every place that needs "which
heads exist" or "what is this head called in format X" derives it from here. A new head is its
own class plus one line in the list below (or `register_head(cls)`).
"""

from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.classifier import (AlbertClassifier, classifier_loss, classifier_outputs,
                                         per_example_loss)
from albert_tf.models.encoder import AlbertModel, as_albert_config
from albert_tf.models.formats import HEAD_CLASSES, HeadFormats, KerasHubHead, register_head
from albert_tf.models.multiple_choice import (RACE_NUM_CHOICES, AlbertMultipleChoice,
                                              multiple_choice_loss)
from albert_tf.models.pretrainer import (AlbertPretrainer, masked_lm_example_loss, masked_lm_loss,
                                         pretraining_losses, sentence_order_example_loss,
                                         sentence_order_loss)
from albert_tf.models.squad import AlbertSquadV1, AlbertSquadV2, squad_v1_loss, squad_v2_loss
from albert_tf.models.token_classifier import AlbertTokenClassifier, token_classifier_loss

# In the order heads are listed everywhere (`WeightSource.heads`, load reports, the tables).
HEAD_CLASSES.extend((
    AlbertPretrainer,
    AlbertClassifier,
    AlbertSquadV1,
    AlbertSquadV2,
    AlbertMultipleChoice,
    AlbertTokenClassifier,
))

__all__ = [
    "HEAD_CLASSES", "HeadFormats", "KerasHubHead", "register_head",
    "AlbertModel", "AlbertTaskModel", "AlbertPretrainer", "AlbertClassifier", "AlbertSquadV1",
    "AlbertSquadV2", "AlbertMultipleChoice", "RACE_NUM_CHOICES", "as_albert_config",
    "masked_lm_example_loss", "masked_lm_loss", "sentence_order_example_loss",
    "sentence_order_loss", "pretraining_losses", "per_example_loss", "classifier_loss",
    "classifier_outputs",
    "squad_v1_loss", "squad_v2_loss", "multiple_choice_loss",
    "AlbertTokenClassifier", "token_classifier_loss",
]
