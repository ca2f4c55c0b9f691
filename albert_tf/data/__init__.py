"""Data: TFRecord schemas, pretraining instance creation, tf.data readers."""
