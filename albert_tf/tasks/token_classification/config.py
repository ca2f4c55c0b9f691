"""run_ner.py's run config (TensorFlow-free: the script checks its flags before TF starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.run_config import (ClassifierTaskConfig, ScheduleConfig, SplitFiles,
                                  check_distillation, check_doc_stride)

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
class NerRunConfig(ClassifierTaskConfig, SplitFiles):
    """run_classifier.py's conventions (flag names, schedule, outputs: `ClassifierTaskConfig`)
    for tagged sentences.

    `max_seq_length` counts pieces with [CLS] and [SEP]; a sentence with more pieces is split
    into windows `doc_stride` pieces apart (unset: half a window), and each word is tagged from
    the window where it has the most context on both sides.
    """

    max_seq_length: int = 128
    label_list: str | None = None
    shuffle_buffer: int = 1000  # run_classifier.py keeps the original's 100
    schedule: ScheduleConfig = dataclasses.field(default_factory=ScheduleConfig)

    def __post_init__(self):
        super().__post_init__()
        check_doc_stride(self.doc_stride, self.max_seq_length)
        check_distillation(self)
