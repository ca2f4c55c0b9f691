"""`TextClassifier`'s multi-label and long-document settings: given as arguments, else read back
from `<output_dir>/labels.json` (which a training run records them in), else the defaults; each
checked with a message naming the argument."""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.tasks.classification.config import check_windows


@dataclasses.dataclass
class ApiSettings:
    multi_label: bool = False
    threshold: float = 0.5
    long_document: str = "first"
    doc_stride: int | None = None
    window_pooling: str = "mean"

    @classmethod
    def resolve(cls, given: dict, recorded: dict, max_seq_length: int, error=UsageError):
        """`given` (arguments; None: not given) over `recorded` (labels.json's settings)."""
        values = {}
        if recorded.get("task_type") == "multi_label":
            values["multi_label"] = True
        for name in ("threshold", "long_document", "doc_stride", "window_pooling"):
            if name in recorded:
                values[name] = recorded[name]
        values.update({k: v for k, v in given.items() if v is not None})
        settings = cls(**values)
        if recorded and recorded.get("task_type", "classification") != (
                "multi_label" if settings.multi_label else "classification"):
            raise error(f"multi_label={settings.multi_label} but the output_dir's labels.json "
                        f"was written by a {recorded.get('task_type', 'classification')} "
                        "classifier; use another output_dir")
        try:
            check_windows(settings.long_document, settings.window_pooling, settings.doc_stride,
                          max_seq_length, prefix="")
            if not 0.0 < float(settings.threshold) < 1.0:
                raise UsageError(f"threshold must be between 0 and 1 (exclusive), got "
                                 f"{settings.threshold}")
        except UsageError as bad:
            raise error(str(bad)) from None
        # An argument this classifier would ignore without a word.
        if given.get("threshold") is not None and not settings.multi_label:
            raise error("threshold is used only with multi_label=True (a single-label "
                        "classifier picks the most probable label)")
        for name in ("window_pooling", "doc_stride"):
            if given.get(name) is not None and settings.long_document != "windows":
                raise error(f"{name} is used only with long_document='windows'")
        return settings

    def run_fields(self) -> dict:
        """The `ClassifierRunConfig` fields of these settings."""
        return {"threshold": float(self.threshold), "long_document": self.long_document,
                "doc_stride": self.doc_stride, "window_pooling": self.window_pooling}

    @property
    def task_type(self) -> str:
        return "multi_label" if self.multi_label else "classification"
