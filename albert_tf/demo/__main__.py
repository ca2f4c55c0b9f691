"""`python -m albert_tf.demo`: the whole ALBERT pipeline on an embedded corpus, in minutes.

SentencePiece → create_pretraining_data → pretraining (MLM + SOP) → fine-tuning on a task
derived from the corpus → SavedModel export → raw sentences classified by the export loaded in
a fresh process. Everything is written under --output_dir; finished stages are reused.
"""

from __future__ import annotations

import os

from absl import flags

from albert_tf import cli
from albert_tf.demo.run import run_demo
from albert_tf.demo.stages import DemoOptions, with_steps

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "albert_demo", "Folder that receives everything the demo writes.")
flags.DEFINE_string("input_file", None,
                    "Your own text (one sentence per line, blank line between documents) instead "
                    "of Python's documentation; its documents are split in two halves for the task.")
DEFAULTS = DemoOptions()
flags.DEFINE_integer("pretrain_steps", DEFAULTS.pretrain.num_train_steps, "Pretraining steps.")
flags.DEFINE_integer("finetune_steps", DEFAULTS.finetune.num_train_steps, "Fine-tuning steps.")
flags.DEFINE_integer("num_workers", 0, "create_pretraining_data worker processes (0: all cores).")


def main(argv):
    del argv
    options = DemoOptions(output_dir=os.path.abspath(FLAGS.output_dir), input_file=FLAGS.input_file,
                          pretrain=with_steps(DEFAULTS.pretrain, FLAGS.pretrain_steps),
                          finetune=with_steps(DEFAULTS.finetune, FLAGS.finetune_steps),
                          num_workers=FLAGS.num_workers)
    run_demo(options)


if __name__ == "__main__":
    cli.run(main)
