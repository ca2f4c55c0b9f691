"""Fine-tunes, evaluates, predicts and exports ALBERT as a token classifier (NER, POS, any tag
set) on CoNLL or JSONL files (`--train_file`, `--dev_file`, `--test_file`): run_classifier.py's
flags and conventions, plus `--doc_stride` for sentences longer than one window."""

from albert_tf import cli
from albert_tf.tasks.token_classification.config import NER_FLAGS, NerRunConfig

cli.define_flags(__name__, NER_FLAGS, NerRunConfig, runtime=True)


def main(_):
    # Imported here: keeps --help and flag errors fast (no TensorFlow).
    from albert_tf.tasks.token_classification.task import run_ner

    run_ner(cli.config_from_flags(NerRunConfig))


if __name__ == "__main__":
    cli.run(main, required=["output_dir"])
