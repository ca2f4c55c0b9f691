"""Sentence embeddings: fine-tunes an ALBERT encoder on text pairs and evaluates it on scored
pairs (Spearman x100, as the STS benchmarks report it).

  python run_embeddings.py --init_checkpoint=<pretraining output_dir | model folder>
      --train_file=glue/STS-B/train.tsv --dev_file=glue/STS-B/dev.tsv --do_train --do_eval
      --output_dir=embedder [--embedding_loss=contrastive|cosine] [--pooling=mean|cls|pooled]

Pair files are CSV, TSV or JSONL with the two texts (and a score) found by their header:
sentence1/sentence2 (GLUE's STS-B TSV as it is), text_a/text_b, anchor/positive; else the
first two columns (and a third, the score). --output_dir is a new folder holding the model,
its tokenizer and embedding_config.json (the pooling): `python -m albert_tf.search
--init_checkpoint=<it>` and `TextEncoder.from_pretrained(<it>)` read it alone. Without
--do_train, --do_eval scores --init_checkpoint's model (the pretrained baseline).
"""

import os

from absl import flags, logging

from albert_tf import cli
from albert_tf.entry_points import EVAL_RESULTS_JSON, MAIN, finish, start
from albert_tf.tasks import embeddings  # TensorFlow loads on first use
from albert_tf.tasks.embeddings.config import EmbeddingsRunConfig

FLAGS = """
    init_checkpoint albert_config_file spm_model_file vocab_file do_lower_case output_dir
    train_file dev_file do_train do_eval pooling embedding_loss temperature score_range
    max_seq_length train_batch_size learning_rate num_train_epochs seed json"""


def main(argv):
    del argv
    values = flags.FLAGS
    if not values["verbosity"].present:  # the inputs' INFO lines: silence is for success
        logging.set_verbosity(logging.WARNING)
    fields = {name: values[name].value for name in FLAGS.split() if name != "json"}
    result = embeddings.run_embeddings(EmbeddingsRunConfig(**fields))
    finish(result, gist(result, fields["output_dir"]), values.json)


def gist(result: dict, output_dir: str) -> list:
    """The closing lines: the folder trained (if any), what it trained on, the evaluation."""
    lines = []
    folder = result.get("output_dir")
    if folder:
        lines.append(f"model folder: {folder} (--init_checkpoint={folder} alone serves it)")
        lines.append(f"trained on {result['train_pairs']} pairs, {result['train_steps']} steps "
                     f"({result['embedding_loss']} loss, {result['pooling']} pooling)")
    if "eval_spearman" in result:
        lines.append(f"Spearman x100 {result['eval_spearman']:.2f} on {result['eval_pairs']} "
                     f"scored pairs ({os.path.join(folder or output_dir, EVAL_RESULTS_JSON)})")
    return lines


def run(argv=None):
    """`albert-run-embeddings` / `python run_embeddings.py`."""
    cli.define_flags(MAIN, FLAGS, EmbeddingsRunConfig, defaults={"json": False})
    start(__doc__, main, ["init_checkpoint", "output_dir"], argv)
