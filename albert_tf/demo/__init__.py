"""The end-to-end demo: `python -m albert_tf.demo`."""
