"""Data the tasks read: TFRecord schemas, the pretraining records reader, the keyed feature cache
(the pretraining data generator lives in `albert_tf.pretraining_data`)."""
