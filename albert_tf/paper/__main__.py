"""`python -m albert_tf.paper --input_file=TEXT --output_dir=DIR [--quick]`: the ALBERT paper's
ablations (Tables 3, 4, 5), Table 2's speed column and Figure 1, on your own text.

TEXT is create_pretraining_data's input: one sentence a line, a blank line between documents
(some documents are held out for scoring). `--quick` is minutes on a laptop's CPU (tiny models,
800 steps each); without it the models have ALBERT-base's shape and train 10,000 steps
each (a GPU/TPU job: pass the strategy flags). Any size flag overrides the preset. Re-running
with the same flags resumes: finished stages and models are reused.
"""

from __future__ import annotations

from absl import flags

from albert_tf import cli
from albert_tf.errors import UsageError
from albert_tf.paper.plan import PaperOptions

FLAGS = flags.FLAGS
# Flags shared with the other scripts (help from cli_flags.FLAG_TABLE); None: the preset decides.
SHARED = ("input_file output_dir spm_model_file vocab_file do_lower_case max_seq_length "
          "max_predictions_per_seq train_batch_size learning_rate optimizer dupe_factor "
          "num_workers")
cli.define_flags(__name__, SHARED, defaults={name: None for name in SHARED.split()},
                 runtime=True)
flags.DEFINE_bool("quick", False, "Tiny models (H=128, 4 layers, 64-token sequences, 800 "
                  "steps of 32): minutes on a laptop's CPU.")
# The paper's own numbers, (flag, help); None: the preset decides.
OWN_INTEGERS = (
    ("steps", "Training steps of each model (preset: 800 quick, 10000)."),
    ("hidden_size", "H of every model; heads (64 wide), FFN (4H) and the E grid (H/8, H/4, H/2, "
                    "H; default H/4) follow unless given."),
    ("num_hidden_layers", "Layers of every model."),
    ("num_attention_heads", "Attention heads."),
    ("intermediate_size", "FFN width."),
    ("embedding_size", "E of the inter-sentence and sharing models."),
    ("vocab_size", "Pieces of the SentencePiece model trained on your text when neither "
                   "--spm_model_file nor --vocab_file is given."),
    ("max_heldout_examples", "Held-out pairs scored per set."),
    ("seed", "Seed of the data generation and the training shuffles."))
for _name, _help in OWN_INTEGERS:
    flags.DEFINE_integer(_name, None, _help)
flags.DEFINE_list("embedding_sizes", None, "The E grid of the embedding-size table.")
flags.DEFINE_float("heldout_fraction", None, "Share of the documents held out for scoring.")

OPTION_FLAGS = SHARED.split() + [name for name, _ in OWN_INTEGERS] + ["heldout_fraction"]


def options_from_flags() -> PaperOptions:
    values = {name: FLAGS[name].value for name in OPTION_FLAGS}
    if FLAGS.embedding_sizes:
        try:
            values["embedding_sizes"] = tuple(int(e) for e in FLAGS.embedding_sizes)
        except ValueError:
            raise UsageError(f"--embedding_sizes must be integers, got "
                             f"{','.join(FLAGS.embedding_sizes)}") from None
    return PaperOptions.create(quick=FLAGS.quick, runtime=cli.runtime_config_from_flags(),
                               **values)


def main(argv) -> None:
    del argv
    options = options_from_flags()  # flag errors before TensorFlow starts
    from albert_tf.paper.run import run_paper  # TensorFlow: keeps --help and flag errors fast

    run_paper(options)


if __name__ == "__main__":
    cli.run(main, required=["input_file", "output_dir"])
