"""RACE 4-way multiple choice: reading articles, features and their keyed TFRecord caches
(`data`). The constants every RACE module shares are re-exported here."""

from albert_tf.tasks.race.data import LABELS, LEVELS, NUM_CHOICES  # noqa: F401
