from albert_tf.demo import corpus


def test_sentences_drop_code_and_grammar():
    text = ("The loop runs once for each item. It stops early on break.\n\n"
            ">>> for x in range(3):\n...     print(x)\n\n"
            "   for_stmt ::= \"for\" target_list \"in\" starred_list \":\" suite\n\n"
            "Short.\n\n1234 5678 9012 3456 7890 1234 5678")
    assert corpus.sentences_of(text) == ["The loop runs once for each item.", "It stops early on break."]


def test_python_documentation_is_available_offline():
    reference, library = corpus.reference_documents(), corpus.library_documents()
    assert sum(map(len, reference)) > 1000 and sum(map(len, library)) > 1000


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
