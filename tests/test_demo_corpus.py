import dataclasses
import io
import json
import os
import random

import pytest

from albert_tf.demo import corpus, stages
from albert_tf.demo.console import Console
from albert_tf.demo.run import not_learnt, sop_row
from albert_tf.errors import InputError


def test_sentences_drop_code_and_grammar():
    text = ("The loop runs once for each item. It stops early on break.\n\n"
            ">>> for x in range(3):\n...     print(x)\n\n"
            "   for_stmt ::= \"for\" target_list \"in\" starred_list \":\" suite\n\n"
            "Short.\n\n1234 5678 9012 3456 7890 1234 5678")
    assert corpus.sentences_of(text) == ["The loop runs once for each item.", "It stops early on break."]


def test_python_documentation_is_available_offline():
    reference, library = corpus.reference_documents(), corpus.library_documents()
    assert sum(map(len, reference)) > 1000 and sum(map(len, library)) > 1000


def test_the_required_libraries_docstrings_join_the_pretraining_text():
    documents = corpus.dependency_documents()
    assert sum(map(len, documents)) > 5000  # NumPy's, Keras' and TensorFlow's, offline
    # cut at docstring boundaries into documents of about DOCUMENT_SENTENCES sentences
    assert max(map(len, documents)) < 2 * corpus.DOCUMENT_SENTENCES
    assert corpus.dependency_documents(("no_such_module", "numpy.linalg")) == \
        corpus.dependency_documents(("numpy.linalg",))


def test_each_sentence_is_kept_once_across_sources():
    first = [["A shared sentence.", "Only in the first."], ["A shared sentence."]]
    second = [["Only in the second.", "A shared sentence."], ["Only in the first."]]
    assert corpus.unique_sentences(first, second) == [
        [["A shared sentence.", "Only in the first."]], [["Only in the second."]]]


def test_task_is_balanced_and_split_by_document():
    reference = [[f"reference doc {d} sentence {s} is here." for s in range(10)] for d in range(20)]
    library = [[f"library doc {d} sentence {s} is here." for s in range(10)] for d in range(30)]
    task = corpus.source_task(reference, library, max_per_class=1000)
    for rows in task.values():
        assert sum(label for _, label in rows) * 2 == len(rows)
    docs = {split: {" ".join(s.split()[:3]) for s, _ in rows} for split, rows in task.items()}
    assert not docs["train"] & docs["dev"] and not docs["train"] & docs["test"]


def test_corpus_round_trip(tmp_path):
    documents = [["First sentence here.", "Second one."], ["Another document."]]
    stats = corpus.write_corpus(tmp_path / "c.txt", documents)
    assert stats == {"documents": 2, "sentences": 3}
    assert corpus.read_documents(tmp_path / "c.txt") == documents


def _own_text(path, seed):
    """40 documents of 8 sentences over a few hundred words: too little text for 3,000 pieces."""
    rng = random.Random(seed)
    words = [f"w{seed}x{i}" if i % 3 else f"word{i}" for i in range(300)]
    documents = [" ".join(rng.choice(words) for _ in range(12)).capitalize() + "."
                 for _ in range(40 * 8)]
    path.write_text("\n\n".join("\n".join(documents[d * 8:(d + 1) * 8]) for d in range(40)) + "\n")
    return str(path)


def test_another_input_file_redoes_every_stage_after_it_with_a_vocabulary_sized_to_it(
        tmp_path, monkeypatch):
    # The demo has no --vocab_size: a small text is sized (the error advised that flag), and a
    # re-run on another text trained nothing new: its corpus sat beside the old vocabulary,
    # records and model (each stage's settings named only paths and byte counts).
    options = stages.DemoOptions(output_dir=str(tmp_path / "out"), max_seq_length=32,
                                 max_predictions_per_seq=5, dupe_factor=1, num_workers=1)
    runs = []
    for text, seed in (("a.txt", 1), ("b.txt", 2), ("b.txt", 2)):  # the last: all reused
        options = dataclasses.replace(options, input_file=_own_text(tmp_path / text, seed))
        console = Console(stages.STAGES, io.StringIO())
        corpus = stages.build_corpus(options, console)
        spm = stages.train_vocabulary(options, corpus, console)
        records = stages.make_records(options, spm, console)
        runs.append((corpus, spm, records, console.stream.getvalue()))
    (corpus_a, spm_a, records_a, out_a), (corpus_b, spm_b, records_b, out_b), (*_, out_c) = runs
    for spm, out in ((spm_a, out_a), (spm_b, out_b)):
        with open(spm["vocab"], encoding="utf-8") as f:
            pieces = sum(1 for _ in f)
        assert spm["vocab_size"] == pieces < options.vocab_size
        assert (f"the corpus makes at most {pieces:,} pieces, not 3,000: training {pieces:,}"
                in out)
    assert "reusing" not in out_b and out_c.count("reusing finished stage") == 3
    assert corpus_a["digest"] != corpus_b["digest"] and spm_a["key"] != spm_b["key"]
    assert records_a["key"] != records_b["key"]
    # Sentences as long as a sequence: every held-out pair is a one-sentence chunk with
    # another document's text, so there is no order pair; masked LM is scored on the
    # generator's held-out records and SOP is not scored.
    assert records_b["order_pairs"] == 0 and records_b["heldout"].endswith("/heldout.tfrecord")
    # Pretraining (run here as its stage would, its training faked) follows the records and
    # builds its model for the vocabulary trained.
    monkeypatch.setattr(stages.Stage, "run", lambda stage, fn: (stage.settings, fn))
    monkeypatch.setattr(stages, "run_pretraining", lambda config: {
        "masked_lm_accuracy": 0.0, "sentence_order_accuracy": 0.5, "masked_lm_loss": 1.0,
        "sentence_order_loss": 0.7})
    monkeypatch.setattr(stages, "write_tokenizer_files", lambda *a, **k: None)
    settings, fn = stages.pretrain(options, spm_b, records_b, Console(7, io.StringIO()))
    assert settings["records_stage"] == records_b["key"]
    os.makedirs(options.path("pretrain"))
    result = fn()
    with open(result["config"]) as f:
        assert json.load(f)["vocab_size"] == spm_b["vocab_size"] == result["vocab_size"]
    assert result["sentence_order_scored"] is False
    row = sop_row({"pretraining": result})
    assert row.startswith("not scored: no held-out sequence holds two sentences"), row


def test_a_text_too_small_to_hold_a_document_out_is_one_clear_error(tmp_path):
    # It used to fail in create_pretraining_data, on the empty held-out file, advising a flag
    # (--allow_empty) the demo does not have.
    text = tmp_path / "tiny.txt"
    text.write_text("One sentence here.\n\nAnother document, one sentence.\n")
    options = stages.DemoOptions(output_dir=str(tmp_path / "out"), input_file=str(text))
    with pytest.raises(InputError, match=r"tiny.txt: 2 document\(s\); .* needs at least 10"):
        stages.build_corpus(options, Console(stages.STAGES, io.StringIO()))
    assert not os.path.exists(options.path("corpus", "stage.json"))


def test_the_closing_table_says_what_the_run_did_not_learn():
    def summary(sop, dev, pairs=6464):
        return {"pretraining": {"sentence_order_accuracy": sop, "heldout_examples": pairs},
                "fine_tuning": {"eval_accuracy": dev, "majority_baseline": 0.5}}
    assert not_learnt(summary(0.529, 0.876)) is None  # a default run: both above their lines
    assert not_learnt(summary(0.510, 0.876)).startswith("held-out sentence order (SOP not above")
    assert not_learnt(summary(0.529, 0.500)).startswith("the task (dev accuracy not above")
    both = not_learnt(summary(0.500, 0.500))
    assert " and " in both and both.endswith("more --pretrain_steps or --finetune_steps")
