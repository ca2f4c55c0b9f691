"""Run settings: the original's defaults, validation with clear messages, derived configs."""

import pytest

from albert_tf.pretraining_data.options import PretrainingDataOptions


def test_original_defaults():
    o = PretrainingDataOptions()
    assert (o.input_file_mode, o.do_lower_case, o.do_whole_word_mask, o.do_permutation,
            o.favor_shorter_ngram, o.random_next_sentence) == ("r", True, True, False, True, False)
    assert (o.max_seq_length, o.ngram, o.max_predictions_per_seq, o.random_seed, o.dupe_factor,
            o.masked_lm_prob, o.short_seq_prob) == (512, 3, 20, 12345, 40, 0.15, 0.1)


@pytest.mark.parametrize("changes,message", [
    (dict(input_file=""), "--input_file is required"),
    (dict(spm_model_file=None), "--vocab_file or --spm_model_file"),
    (dict(max_seq_length=4), "--max_seq_length must be at least 5"),
    (dict(masked_lm_prob=1.5), "--masked_lm_prob"),
    (dict(dupe_factor=0), "--dupe_factor"),
    (dict(input_file_mode="w"), "--input_file_mode"),
    (dict(undecodable_lines="ignore"), "--undecodable_lines"),
    (dict(output_shards=0), "--output_shards"),
])
def test_validation_names_the_flag(changes, message):
    options = PretrainingDataOptions(**{"input_file": "in", "output_file": "out",
                                        "spm_model_file": "m", **changes})
    with pytest.raises(ValueError, match=message):
        options.validate()


def test_modes_configure_masking(spm_model):
    from albert_tf.pretraining_data import sentence_tokens

    options = PretrainingDataOptions(spm_model_file=spm_model)
    encoder = sentence_tokens.SentenceEncoder(options.make_tokenizer())
    assert not options.masking_config(encoder).full_candidate_shuffle
    options.exact_original = True
    exact = options.masking_config(encoder)
    assert exact.full_candidate_shuffle and exact.replay_unused_shuffle
    assert options.preprocess("  Ça  VA\n") == "ca va"
    assert PretrainingDataOptions(vocab_file="v").preprocess("  Ça  VA\n") == "Ça  VA"
    assert options.workers() >= 1


def test_validation_errors_are_usage_errors():
    from albert_tf.errors import UsageError

    with pytest.raises(UsageError, match="--ngram must be at least 1"):
        PretrainingDataOptions(input_file="in", output_file="out", spm_model_file="m", ngram=0).validate()
    assert PretrainingDataOptions().allow_empty is False
