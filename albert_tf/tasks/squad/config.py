"""run_squad.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.run_config import (ScheduleConfig, TextTaskConfig, check_at_least,
                                  parse_runtime_kinds, parse_tflite_kinds)


@dataclasses.dataclass
class SquadRunConfig(TextTaskConfig):
    """The original `run_squad_v1.py` / `run_squad_v2.py` flags (same names and defaults)."""

    version_2_with_negative: bool = False
    train_file: str | None = None
    predict_file: str | None = None
    train_feature_file: str | None = None
    predict_feature_file: str | None = None
    predict_feature_left_file: str | None = None
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    n_best_size: int = 20
    max_answer_length: int = 30
    start_n_top: int = 5
    end_n_top: int = 5
    dropout_prob: float = 0.1
    tflite: str = ""  # kinds of TFLite file written beside the export (v1.1 only)
    onnx: str = ""  # kinds of ONNX file (v1.1 only; serving/onnx_export.py)
    openvino: str = ""  # kinds of OpenVINO file (v1.1 only; serving/openvino_export.py)
    schedule: ScheduleConfig = dataclasses.field(
        default_factory=lambda: ScheduleConfig(keep_checkpoint_max=0))

    # Counts of pieces, windows or answers: below 1 a window never advances (--doc_stride=0
    # looped for ever) or nothing is predicted.
    COUNTS = ("doc_stride", "max_query_length", "max_answer_length", "n_best_size",
              "start_n_top", "end_n_top")

    def __post_init__(self):
        super().__post_init__()
        for name in self.COUNTS:
            check_at_least(self, name, 1)

    def validate(self, config: AlbertConfig) -> None:
        if not (self.do_train or self.do_predict or self.export_dir):
            raise UsageError("At least one of `do_train`, `do_predict` or `export_dir` must be "
                             "True.")
        if self.do_train and not self.train_file:
            raise UsageError("If `do_train` is True, then `train_file` must be specified.")
        if self.tflite:
            parse_tflite_kinds(self.tflite)
            if not self.export_dir:
                raise UsageError("--tflite needs --export_dir (the files go to "
                                 "<export_dir>/tflite/<version>)")
            if self.version_2_with_negative:
                raise UsageError("--tflite: SQuAD v2's beam-search head has no TFLite export "
                                 "(v1.1 models only)")
        for flag in ("onnx", "openvino"):
            if getattr(self, flag):
                parse_runtime_kinds(getattr(self, flag), f"--{flag}")
                if not self.export_dir:
                    raise UsageError(f"--{flag} needs --export_dir (the files go to "
                                     f"<export_dir>/{flag}/<version>)")
                if self.version_2_with_negative:
                    raise UsageError(f"--{flag}: SQuAD v2's beam-search head has no ids-in "
                                     "export to convert (v1.1 models only)")
        if self.do_predict and not (self.predict_file and self.predict_feature_file and
                                    self.predict_feature_left_file):
            raise UsageError("If `do_predict` is True, then `predict_file`, "
                             "`predict_feature_file` and `predict_feature_left_file` must be "
                             "specified.")
        if self.max_seq_length > config.max_position_embeddings:
            raise UsageError(f"Cannot use sequence length {self.max_seq_length} because the "
                             f"ALBERT model was only trained up to sequence length "
                             f"{config.max_position_embeddings} (max_position_embeddings)")
        if self.max_seq_length <= self.max_query_length + 3:
            raise UsageError(f"The max_seq_length ({self.max_seq_length}) must be greater than "
                             f"max_query_length ({self.max_query_length}) + 3")
