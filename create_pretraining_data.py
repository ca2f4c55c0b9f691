"""Creates ALBERT pretraining TFRecords (masked LM + sentence order) from raw text.

Same flags and defaults as the original `create_pretraining_data.py`, plus:
  --exact_original   reproduce the original's records exactly (in memory, single process)
  --num_workers      worker processes for the default streaming mode (0 = all cores)
  --undecodable_lines=skip|fail, --max_line_bytes, --block_bytes, --shuffle_buffer,
  --output_shards, --summary_file, --progress_interval_s, --allow_empty
Input: one sentence per line, a blank line between documents.

Every error a user can fix ends the run with one `error: ...` line and exit status 1 (2 for bad
flags); --verbosity=1 shows the traceback. No output file appears unless the run completes.
"""

from albert_tf import cli

cli.quiet_tensorflow()  # before TensorFlow loads

from absl import flags  # noqa: E402

from albert_tf.data import documents, pretraining_data  # noqa: E402
from albert_tf.data.pretraining_options import PretrainingDataOptions  # noqa: E402
from albert_tf.errors import UsageError  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None, "Input raw text file(s): comma-separated glob patterns.")
flags.DEFINE_string("output_file", None,
                    "Output TFRecord file(s), comma-separated; instances are written round-robin.")
flags.DEFINE_string("vocab_file", None,
                    "Vocabulary file (WordPiece mode; unused when --spm_model_file is given).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model file (the English ALBERT models).")
flags.DEFINE_string("input_file_mode", "r",
                    "'r': input must be UTF-8 (see --undecodable_lines); 'rb': undecodable bytes "
                    "are dropped, as the original's WordPiece path did.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input text.")
flags.DEFINE_bool("do_whole_word_mask", True, "Mask whole words rather than single pieces.")
flags.DEFINE_bool("do_permutation", False, "Add permutation targets (doubles the prediction slots).")
flags.DEFINE_bool("favor_shorter_ngram", True, "N-gram lengths with p(n) proportional to 1/n.")
flags.DEFINE_bool("random_next_sentence", False,
                  "BERT next-sentence negatives from random documents instead of sentence order.")
flags.DEFINE_integer("max_seq_length", 512, "Maximum sequence length.")
flags.DEFINE_integer("ngram", 3, "Maximum n-gram length (in words) to mask.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Seed of every random choice.")
flags.DEFINE_integer("dupe_factor", 40, "Passes over the input, each with different masks.")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float("short_seq_prob", 0.1,
                   "Probability of a shorter target length (drawn once per document and pass).")

flags.DEFINE_bool("exact_original", False,
                  "Reproduce the original script's records exactly (its n-gram draws seeded with "
                  "numpy's legacy RNG at --random_seed); holds the corpus in memory, one process.")
flags.DEFINE_integer("num_workers", 0,
                     "Worker processes in the default streaming mode (0: all cores). The output "
                     "does not depend on it.")
flags.DEFINE_enum("undecodable_lines", "skip", list(documents.UNDECODABLE_POLICIES),
                  "A line that is not valid UTF-8 is reported (file:line) and skipped, or stops the run.")
flags.DEFINE_integer("max_line_bytes", 1_000_000,
                     "Longer lines keep only their first bytes (counted in the summary); 0 = no cap.")
flags.DEFINE_integer("block_bytes", 1_048_576,
                     "Streaming mode: text per unit of work; random-document segments are drawn "
                     "from the same block. Memory grows with it (times workers and dupe_factor).")
flags.DEFINE_integer("shuffle_buffer", 10_000,
                     "Streaming mode: records mixed across blocks before writing (0: none).")
flags.DEFINE_integer("output_shards", 1,
                     "Split each --output_file into this many files named PATH-0000i-of-0000n.")
flags.DEFINE_string("summary_file", "",
                    "Where to write the JSON summary (default: first output file + .summary.json).")
flags.DEFINE_float("progress_interval_s", 10.0, "Seconds between progress lines.")
flags.DEFINE_bool("allow_empty", False,
                  "Input that yields no instance writes empty output files (exit 0) instead of "
                  "failing with nothing written.")


def main(argv):
    if len(argv) > 1:
        raise UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    pretraining_data.run(cli.config_from_flags(PretrainingDataOptions))


if __name__ == "__main__":
    cli.run(main, required=["input_file", "output_file"])
