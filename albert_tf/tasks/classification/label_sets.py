"""Multi-label examples (`--task_type=multi_label`, `TextClassifier(multi_label=True)`): each
example's label is a set of names (a tuple, possibly empty). The label list is `--label_list`,
else the sorted union of the training sets; every name of a dev or labelled test set must be
in it (one `CustomDataError` naming the file, line and column otherwise)."""

from __future__ import annotations

from albert_tf.tasks.classification.files import CustomDataError, case_clash


def resolve_label_sets(train_examples, train_file: str, label_list: list[str] | None) -> list:
    """The label names in id order: `label_list`, else the sorted union of the training sets
    (at least one name)."""
    if label_list:
        check_label_sets(train_examples, label_list, from_flag=True)
        return list(label_list)
    named = [(name, example) for example in train_examples for name in example.label]
    clash = case_clash([name for name, _ in named])
    if clash:
        (first, one), (later, other) = (named[i] for i in clash)
        raise CustomDataError(f"labels {later!r} ({other.source}) and {first!r} ({one.source}) "
                              "differ only in case: one label or two? Write one spelling, or "
                              "name both in --label_list")
    seen = sorted({name for name, _ in named})
    if not seen:
        raise CustomDataError(f"{train_file}: no example of the training file has a label; a "
                              "multi-label classifier needs at least 1")
    return seen


def check_label_sets(examples, labels: list[str], from_flag: bool) -> None:
    """Every name of every (labelled) example must be one the model can predict."""
    for example in examples:
        for name in example.label or ():
            if name not in labels:
                if from_flag:
                    reason = f"is not in --label_list ({', '.join(labels)})"
                else:
                    reason = (f"was never seen in training (the training labels are "
                              f"{', '.join(labels)}; pass --label_list to fix the set)")
                raise CustomDataError(f"{example.source}: label {name!r} {reason}")


def join(names, separator: str = ",") -> str:
    """A label set as test_predictions.tsv and the export's `labels` write it."""
    return separator.join(names)
