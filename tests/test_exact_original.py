"""--exact_original reproduces the original script's records (the fixture's run_info.json digest)."""

import collections
import hashlib
import json

import pytest

from albert_tf.data import schema
from albert_tf.pretraining_data import documents, exact_original, sentence_tokens
from albert_tf.pretraining_data import example_encoder as encoding
from albert_tf.pretraining_data.options import PretrainingDataOptions


@pytest.fixture(scope="module")
def fixture_run(fixtures_dir, spm_model):
    """The fixture's flags (run_info.json) and our records in memory."""
    folder = fixtures_dir / "create_pretraining_data"
    options = PretrainingDataOptions(
        input_file=str(folder / "input.txt"), output_file="unused", spm_model_file=spm_model,
        max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2, masked_lm_prob=0.15,
        ngram=3, random_seed=12345, exact_original=True)
    encoder = sentence_tokens.SentenceEncoder(options.make_tokenizer())
    doc_counts = collections.Counter()
    corpus = exact_original.read_corpus([options.input_file], options, encoder,
                                        documents.InputCounters(), doc_counts)
    generated = exact_original.generate(corpus, options, encoder)
    example_encoder = encoding.ExampleEncoder(64, 10)
    return folder, generated, example_encoder, doc_counts


def test_record_count_matches(fixture_run):
    folder, generated, _, _ = fixture_run
    run_info = json.loads((folder / "run_info.json").read_text())
    assert len(generated) == run_info["num_instances"] == 4527


def test_first_five_records_equal_the_original(fixture_run):
    folder, generated, example_encoder, _ = fixture_run
    golden = json.loads((folder / "first5_examples.json").read_text())
    for ours, theirs in zip(generated[:5], golden):
        features = example_encoder.features(ours)
        for name in schema.PRETRAINING_WRITE_ORDER:
            assert features[name] == theirs[name], name


def test_content_digest_equals_the_original(fixture_run):
    """sha256 over SerializeToString(deterministic=True) of every record, in file order."""
    folder, generated, example_encoder, _ = fixture_run
    run_info = json.loads((folder / "run_info.json").read_text())
    digest = hashlib.sha256()
    for instance in generated:
        digest.update(example_encoder.serialize(instance))
    assert digest.hexdigest() == run_info["sha256_of_concat_deterministic_serialized_examples"]


def test_corpus_counts(fixture_run):
    _, _, _, doc_counts = fixture_run
    # The fixture's input holds 4,757 sentences; the original drops nothing else from it.
    assert doc_counts["sentences"] == 4757
    assert doc_counts["documents"] == 93

