"""Fill-mask on raw text with a pretraining model's masked-LM head:

  python -m albert_tf.fill_mask --init_checkpoint=<pretraining output_dir | model folder>
      [--spm_model_file=30k-clean.model] [--top_k=5] "The capital of France is [MASK]." ...

(or each text as --text="...") prints one JSON line per text: {"text": ..., "masks":
[[{"score", "token", "token_str", "sequence"}, ...], ...]}, the top_k candidates of each [MASK]
in it (Hugging Face fill-mask's records; `FillMask.predict` in Python, the `fill_mask`
signature of export_saved_model.py's encoder export). [MASK] is found anywhere in the text,
also glued to a word; a text without one is an error naming it.
"""

import json

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import MAIN
from albert_tf.errors import UsageError
from albert_tf.tasks import fill_mask as fill_mask_task  # FillMask loads on first use
from albert_tf.tasks.fill_mask import texts as mask_texts

FLAGS = "init_checkpoint albert_config_file spm_model_file vocab_file do_lower_case " \
        "max_seq_length top_k text"


def main(argv):
    texts = [*(flags.FLAGS.text or []), *argv[1:]]
    if not texts:
        raise UsageError('give one or more texts after the flags, each with [MASK] (e.g. '
                         '"The capital of France is [MASK].")')
    values = flags.FLAGS
    if not values["verbosity"].present:  # the inputs' INFO lines: silence is for success
        logging.set_verbosity(logging.WARNING)
    if not values.init_checkpoint or not values.init_checkpoint.strip():
        raise UsageError("--init_checkpoint must not be empty")
    mask_texts.checked_texts(texts)
    top_k = mask_texts.check_top_k(values.top_k)  # before the model loads
    fill = fill_mask_task.FillMask.from_pretrained(
        values.init_checkpoint, values.spm_model_file or None, values.vocab_file or None,
        values.albert_config_file or None, values.do_lower_case, values.max_seq_length)
    for text, masks in zip(texts, fill.predict(texts, top_k)):
        print(json.dumps({"text": text, "masks": masks}))


def run(argv=None):
    """`python -m albert_tf.fill_mask`."""
    cli.define_flags(MAIN, FLAGS, defaults={"top_k": 5, "do_lower_case": None,
                                            "max_seq_length": None})
    cli.run(main, required=["init_checkpoint"], argv=argv)


if __name__ == "__main__":
    run()
