"""Fine-tunes, evaluates, predicts and exports ALBERT as a token classifier (NER, POS, any tag
set) on CoNLL or JSONL files (`--train_file`, `--dev_file`, `--test_file`): run_classifier.py's
flags and conventions, plus `--doc_stride` for sentences longer than one window."""

from absl import flags

from albert_tf import cli
from albert_tf.entry_points import MAIN, finish, run_gist, start
from albert_tf.tasks.token_classification.config import NER_FLAGS, NerRunConfig


def main(_):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.tasks.token_classification.task import run_ner

    config = cli.config_from_flags(NerRunConfig)
    summary = run_ner(config)
    finish(summary, run_gist(config.output_dir, summary), flags.FLAGS.json)


def run(argv=None):
    """`albert-run-ner` / `python run_ner.py`."""
    cli.define_flags(MAIN, NER_FLAGS + " json", NerRunConfig, defaults={"json": False},
                     runtime=True)
    start(__doc__, main, ["output_dir"], argv)
