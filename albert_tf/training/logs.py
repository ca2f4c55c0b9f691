"""Progress logging (step, loss, metrics, learning rate, examples/s, ETA) and TensorBoard."""

from __future__ import annotations

import time

import tensorflow as tf
from absl import logging
from tensorflow.core.framework import summary_pb2

# tf.summary.scalar needs the tensorboard package; the raw write with the scalar plugin's
# metadata gives the same event records without it.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")).SerializeToString()


def write_scalar(name, value, step):
    tf.summary.write(name, tf.constant(float(value), tf.float32), step=step,
                     metadata=_SCALAR_METADATA)


class MetricSums:
    """Σ numerator / Σ denominator per metric name, over several steps."""

    def __init__(self):
        self.sums = {}

    def add(self, pairs):
        for name, (num, den) in pairs.items():
            n, d = self.sums.get(name, (0.0, 0.0))
            self.sums[name] = (n + float(num), d + float(den))

    def result(self):
        return {k: (n / d if d else float("nan")) for k, (n, d) in self.sums.items()}

    def reset(self):
        self.sums = {}


def format_duration(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}"


class StepLogger:
    """Logs every `every` steps and writes the same scalars to TensorBoard under `log_dir`."""

    def __init__(self, log_dir, every, global_batch_size, total_steps, start_step,
                 write_summaries=True):
        self.every = max(int(every), 1)
        self.global_batch_size = global_batch_size
        self.total_steps = total_steps
        self.writer = tf.summary.create_file_writer(log_dir) if (log_dir and write_summaries) else None
        self.metrics = MetricSums()
        self.losses = []
        self._last_time = time.time()
        self._last_step = start_step

    def record(self, step, loss, metrics, learning_rate):
        self.losses.append(float(loss))
        self.metrics.add(metrics)
        if step % self.every and step != self.total_steps:
            return None
        now = time.time()
        steps = max(step - self._last_step, 1)
        rate = steps * self.global_batch_size / max(now - self._last_time, 1e-9)
        eta = (self.total_steps - step) * (now - self._last_time) / steps
        values = {"loss": sum(self.losses) / len(self.losses), **self.metrics.result(),
                  "learning_rate": float(learning_rate), "examples_per_second": rate}
        parts = " ".join(f"{k}={v:.6g}" for k, v in values.items())
        logging.info("step %d/%d %s eta=%s", step, self.total_steps, parts, format_duration(eta))
        if self.writer is not None:
            with self.writer.as_default():
                for name, value in values.items():
                    write_scalar(name, value, step)
            self.writer.flush()
        self.losses, self._last_time, self._last_step = [], now, step
        self.metrics.reset()
        return values
