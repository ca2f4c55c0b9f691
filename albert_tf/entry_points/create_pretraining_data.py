"""Creates ALBERT pretraining TFRecords (masked LM + sentence order) from raw text.

Same flags and defaults as the original `create_pretraining_data.py`, plus:
  --exact_original   reproduce the original's records exactly (in memory, single process)
  --num_workers      worker processes for the default streaming mode (0 = all cores)
  --undecodable_lines=skip|fail, --max_line_bytes, --block_bytes, --shuffle_buffer,
  --output_shards, --summary_file, --progress_interval_s, --allow_empty
  --beam_runner, --beam_pipeline_options   the same records on Apache Beam (pip install -e ".[beam]")
Input: one sentence per line, a blank line between documents.

Every error a user can fix ends the run with one `error: ...` line and exit status 1 (2 for bad
flags); --verbosity=1 shows the traceback. No output file appears unless the run completes.
"""

from albert_tf import cli
from albert_tf.entry_points import MAIN, start
from albert_tf.errors import UsageError
from albert_tf.pretraining_data.options import PretrainingDataOptions

FLAGS = """
    input_file output_file vocab_file spm_model_file input_file_mode do_lower_case
    do_whole_word_mask do_permutation favor_shorter_ngram random_next_sentence max_seq_length
    ngram max_predictions_per_seq random_seed dupe_factor masked_lm_prob short_seq_prob
    exact_original num_workers undecodable_lines max_line_bytes block_bytes shuffle_buffer
    output_shards summary_file progress_interval_s allow_empty beam_runner beam_pipeline_options"""


def main(argv):
    # TensorFlow-heavy: imported once the flags are parsed, so --help and flag errors are instant.
    from albert_tf.pretraining_data import engines

    if len(argv) > 1:
        raise UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    engines.run(cli.config_from_flags(PretrainingDataOptions))


def run(argv=None):
    """`albert-create-pretraining-data` / `python create_pretraining_data.py`."""
    cli.define_flags(MAIN, FLAGS, PretrainingDataOptions,
                     defaults={"input_file": None, "output_file": None})
    start(__doc__, main, ["input_file", "output_file"], argv)
