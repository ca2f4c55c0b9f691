"""Knowledge distillation's loss: a student learns from a teacher's soft labels and the true ones.

    loss = alpha · T² · KL(softmax(teacher / T) ‖ softmax(student / T))
           + (1 − alpha) · CE(labels, student)

(Hinton et al. 2015: T² keeps the soft term's gradients at the scale of the hard one's as T
grows.) The teacher's logits come from the teacher run in the same step, never from disk.
run_classifier.py's defaults are T = 2, alpha = 0.5.
"""

from __future__ import annotations

import tensorflow as tf

def soft_label_loss(student_logits, teacher_logits, temperature: float):
    """Per example: KL(softmax(teacher / T) ‖ softmax(student / T)) · T² (float32)."""
    t = float(temperature)
    teacher = tf.nn.log_softmax(tf.stop_gradient(tf.cast(teacher_logits, tf.float32)) / t, -1)
    student = tf.nn.log_softmax(tf.cast(student_logits, tf.float32) / t, -1)
    return tf.reduce_sum(tf.exp(teacher) * (teacher - student), -1) * (t * t)


def distillation_loss(student_logits, teacher_logits, hard_loss, temperature: float,
                      alpha: float):
    """The batch's loss: alpha · mean soft-label loss + (1 − alpha) · `hard_loss` (the true
    labels' mean cross-entropy, as the task computes it)."""
    soft = tf.reduce_mean(soft_label_loss(student_logits, teacher_logits, temperature))
    return float(alpha) * soft + (1.0 - float(alpha)) * tf.cast(hard_loss, tf.float32)
