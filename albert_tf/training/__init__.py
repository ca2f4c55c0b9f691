"""Training runtime shared by pretraining and every fine-tuning task.

Usage (what the task driver, `albert_tf.tasks.driver`, does for pretraining, GLUE, SQuAD and
RACE):

    from albert_tf import weights
    from albert_tf.optimization import create_optimizer
    from albert_tf.training import Runtime, RuntimeConfig, Objective, Trainer

    runtime = Runtime(RuntimeConfig(distribution_strategy="mirrored",   # one_device | mirrored |
                                    mixed_precision="bf16",             #   multi_worker_mirrored | tpu
                                    jit_compile=True,                   # none | bf16 | fp16
                                    gradient_accumulation_steps=4))
    with runtime.scope():                     # precision policy is already set here
        model = MyTaskModel(config)
        optimizer = create_optimizer(lr, num_train_steps, num_warmup_steps, "adamw")

    def loss_fn(outputs, features):           # mean over the batch it is given
        loss = ...
        return loss, {"accuracy": (num_correct, num_examples)}   # or plain scalars

    objective = Objective(loss_fn, metric_fn=lambda outputs, features: {...})
    trainer = Trainer(runtime, model, optimizer, objective, output_dir, keep_checkpoint_max=5)

    def dataset_fn(ctx):                      # tf.distribute.InputContext
        return my_dataset(batch_size=ctx.get_per_replica_batch_size(global_batch))

    def on_checkpoint(step, path):           # after each save, e.g. a periodic evaluation
        logging.info("step %d: %s", step, trainer.evaluate(eval_dataset_fn, steps=100))

    trainer.train(dataset_fn, global_batch, num_train_steps, save_checkpoints_steps=1000,
                  log_every_steps=100, on_checkpoint=on_checkpoint,
                  initialize=lambda model: weights.load(model, init_checkpoint))

What the loop guarantees:
- Checkpoints (`tf.train.CheckpointManager`, files `model.ckpt-<step>.*` in output_dir) hold the
  model, the optimizer (slots and `iterations`, which is the global step) and the loss scale;
  a restarted run resumes from the latest and stops at `num_train_steps` (like the original's
  Estimator, it restarts its input pipeline rather than resuming the data position).
- Gradients are summed over micro-batches and replicas, then clipped by the global norm (the
  optimizer's `clip_norm`, counted like TF1's clip_by_global_norm), so one device, mirrored,
  multi-worker and accumulated runs apply the same update for the same global batch.
- A non-finite loss raises `NonFiniteLossError` naming the step, the learning rate and the last
  step with a finite loss; nothing new is saved.
- Its `health` (`training.health.TrainingHealth`) watches the loss: one that stays within noise
  of its start (or of the task's chance loss) is one `training health:` warning line.
- Logs every `log_every_steps`: loss, metrics, learning rate, examples/s, ETA; the same scalars
  go to TensorBoard event files in output_dir.
- Keeping the best checkpoint is the driver's (`tasks.eval_state.CheckpointEvaluator`, an
  `on_checkpoint` hook): it copies the best to `model.ckpt-best.*` and never deletes anything.
"""

from albert_tf.training.checkpoint_files import CheckpointState, copy_checkpoint
from albert_tf.training.logs import MetricSums, StepLogger
from albert_tf.training.loop import NonFiniteLossError, Trainer
from albert_tf.training.runtime import Runtime, RuntimeConfig, make_strategy, set_precision
from albert_tf.training.steps import EvalStep, Objective, TrainStep

__all__ = ["CheckpointState", "copy_checkpoint", "MetricSums", "StepLogger",
           "NonFiniteLossError", "Trainer", "Runtime", "RuntimeConfig", "make_strategy",
           "set_precision", "EvalStep", "Objective", "TrainStep"]
