"""`python -m albert_tf.demo`: the whole ALBERT pipeline on an embedded corpus, in minutes.

SentencePiece → create_pretraining_data → pretraining (MLM + SOP) → fine-tuning on a task
derived from the corpus → SavedModel export → raw sentences classified by the export loaded in
a fresh process. Everything is written under --output_dir; finished stages are reused.
"""

from __future__ import annotations

import dataclasses
import os

from absl import flags

from albert_tf import cli
from albert_tf.demo.run import run_demo
from albert_tf.demo.options import DemoOptions, full_options, with_steps

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "albert_demo", "Folder that receives everything the demo writes.")
flags.DEFINE_string("input_file", None,
                    "Your own text (one sentence per line, blank line between documents) instead "
                    "of Python's documentation; its documents are split in two halves for the task.")
FAST, FULL = DemoOptions(), full_options()
flags.DEFINE_bool("full", False,
                  f"The longer run of before: {FULL.pretrain.num_train_steps} float32 pretraining "
                  f"steps of a {FULL.num_hidden_layers}-pass model and "
                  f"{FULL.finetune.num_train_steps} fine-tuning steps (default: "
                  f"{FAST.pretrain.num_train_steps} pretraining steps of "
                  f"{FAST.num_hidden_layers} passes, in bf16 where the CPU has it natively, and "
                  f"{FAST.finetune.num_train_steps} fine-tuning steps).")
flags.DEFINE_integer("pretrain_steps", None, "Pretraining steps (default: as --full says).")
flags.DEFINE_integer("finetune_steps", None, "Fine-tuning steps (default: as --full says).")
flags.DEFINE_integer("num_workers", 0, "create_pretraining_data worker processes (0: all cores).")


def main(argv):
    del argv
    chosen = FULL if FLAGS.full else FAST
    steps = lambda flag, schedule: with_steps(  # noqa: E731
        schedule, schedule.num_train_steps if flag is None else flag)
    options = dataclasses.replace(
        chosen, output_dir=os.path.abspath(FLAGS.output_dir), input_file=FLAGS.input_file,
        pretrain=steps(FLAGS.pretrain_steps, chosen.pretrain),
        finetune=steps(FLAGS.finetune_steps, chosen.finetune), num_workers=FLAGS.num_workers)
    run_demo(options)


if __name__ == "__main__":
    cli.run(main)
