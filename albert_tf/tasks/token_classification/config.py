"""run_ner.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.run_config import (DEFAULT_ALPHA, DEFAULT_TEMPERATURE, STEP_FLAG_NAMES,
                                  ScheduleConfig, SplitFiles, TextTaskConfig, check_distillation,
                                  check_doc_stride, window_stride)

# The flags of run_ner.py (types and help in `cli_flags.FLAG_TABLE`, defaults from the config).
NER_FLAGS = """
    albert_config_file vocab_file spm_model_file output_dir cached_dir init_checkpoint
    do_lower_case max_seq_length doc_stride do_train do_eval do_predict train_batch_size
    eval_batch_size predict_batch_size learning_rate train_step warmup_step
    save_checkpoints_steps keep_checkpoint_max optimizer export_dir tflite onnx openvino
    shuffle_buffer seed
    train_file dev_file test_file label_list num_hidden_layers distill_from distill_temperature
    distill_alpha lora_rank lora_word_rank"""


@dataclasses.dataclass
class NerRunConfig(TextTaskConfig, SplitFiles):
    """run_classifier.py's conventions (flag names, schedule, outputs) for tagged sentences.

    `max_seq_length` counts pieces with [CLS] and [SEP]; a sentence with more pieces is split
    into windows `doc_stride` pieces apart (unset: half a window), and each word is tagged from
    the window where it has the most context on both sides.
    """

    FLAG_NAMES = STEP_FLAG_NAMES

    max_seq_length: int = 128
    doc_stride: int | None = None
    label_list: str | None = None
    cached_dir: str | None = None
    tflite: str = ""  # kinds of TFLite file written beside the export
    onnx: str = ""  # kinds of ONNX file (serving/onnx_export.py)
    openvino: str = ""  # kinds of OpenVINO file (serving/openvino_export.py)
    shuffle_buffer: int = 1000
    seed: int | None = None
    distill_from: str | None = None  # a teacher tagger's folder (tasks/distill.py)
    distill_temperature: float = DEFAULT_TEMPERATURE
    distill_alpha: float = DEFAULT_ALPHA
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)

    def __post_init__(self):
        super().__post_init__()
        check_doc_stride(self.doc_stride, self.max_seq_length)
        check_distillation(self)

    @property
    def stride(self) -> int:
        """`doc_stride`, or half of the `max_seq_length - 2` pieces a window holds."""
        return window_stride(self.doc_stride, self.max_seq_length)
