"""Settings of a pretraining-data run (the script's flags) and the objects built from them."""

from __future__ import annotations

import dataclasses
import os

from albert_tf import tokenization
from albert_tf.tokenization.settings import flag_given, resolve_do_lower_case
from albert_tf.pretraining_data import documents, instances, masking, sentence_tokens
from albert_tf.errors import UsageError


def default_num_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclasses.dataclass
class PretrainingDataOptions:
    # The original's flags, with its defaults.
    input_file: str = ""
    output_file: str = ""
    vocab_file: str | None = None
    spm_model_file: str | None = None
    input_file_mode: str = "r"
    do_lower_case: bool = True
    do_whole_word_mask: bool = True
    do_permutation: bool = False
    favor_shorter_ngram: bool = True
    random_next_sentence: bool = False
    max_seq_length: int = 512
    ngram: int = 3
    max_predictions_per_seq: int = 20
    random_seed: int = 12345
    dupe_factor: int = 40
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    # Added.
    exact_original: bool = False
    num_workers: int = 0  # 0: all cores
    undecodable_lines: str = "skip"
    max_line_bytes: int = 1_000_000
    block_bytes: int = 1 << 20
    shuffle_buffer: int = 10_000
    output_shards: int = 1
    summary_file: str = ""
    progress_interval_s: float = 10.0
    allow_empty: bool = False  # 0 instances: write empty files instead of failing
    beam_runner: str = ""  # run the streaming engine's blocks on Apache Beam (beam_pipeline)
    beam_pipeline_options: str = ""  # passed to Beam unchanged
    # The flags named on the command line (None: built in Python); see tokenization.settings.
    flags_given: frozenset | None = None

    def validate(self) -> None:
        """A `UsageError` naming every flag whose value cannot work."""
        problems = []
        if not self.input_file:
            problems.append("--input_file is required")
        if not self.output_file:
            problems.append("--output_file is required")
        if not self.vocab_file and not self.spm_model_file:
            problems.append("--vocab_file or --spm_model_file is required")
        if self.input_file_mode not in ("r", "rb"):
            problems.append(f"--input_file_mode must be 'r' or 'rb', got {self.input_file_mode!r}")
        if self.max_seq_length < 5:
            problems.append(f"--max_seq_length must be at least 5, got {self.max_seq_length}")
        if self.ngram < 1:
            problems.append(f"--ngram must be at least 1, got {self.ngram}")
        if self.max_predictions_per_seq < 1:
            problems.append(f"--max_predictions_per_seq must be at least 1, got {self.max_predictions_per_seq}")
        if self.dupe_factor < 1:
            problems.append(f"--dupe_factor must be at least 1, got {self.dupe_factor}")
        if not 0.0 <= self.masked_lm_prob <= 1.0:
            problems.append(f"--masked_lm_prob must be in [0, 1], got {self.masked_lm_prob}")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            problems.append(f"--short_seq_prob must be in [0, 1], got {self.short_seq_prob}")
        if self.undecodable_lines not in documents.UNDECODABLE_POLICIES:
            problems.append(f"--undecodable_lines must be one of {documents.UNDECODABLE_POLICIES}")
        if self.num_workers < 0:
            problems.append(f"--num_workers must be >= 0, got {self.num_workers}")
        if self.max_line_bytes < 0 or self.block_bytes < 1 or self.shuffle_buffer < 0:
            problems.append("--max_line_bytes, --block_bytes and --shuffle_buffer must be positive")
        if self.output_shards < (0 if self.beam_runner else 1):
            problems.append(f"--output_shards must be at least 1 (0 with --beam_runner: the runner "
                            f"decides), got {self.output_shards}")
        if self.beam_runner and self.exact_original:
            problems.append("--beam_runner makes the streaming mode's records; it cannot be combined "
                            "with --exact_original")
        if self.beam_runner and "," in self.output_file:
            problems.append("--beam_runner writes one --output_file (use --output_shards to split it)")
        if self.beam_pipeline_options and not self.beam_runner:
            problems.append("--beam_pipeline_options needs --beam_runner")
        if problems:
            raise UsageError("; ".join(problems))
        # The casing the vocabulary records (its tokenizer_config.json) unless the flag is given.
        self.do_lower_case = resolve_do_lower_case(
            self.do_lower_case, flag_given(self, "do_lower_case", True),
            self.spm_model_file or self.vocab_file)

    def workers(self) -> int:
        return self.num_workers or default_num_workers()

    def make_tokenizer(self) -> tokenization.FullTokenizer:
        return tokenization.FullTokenizer(vocab_file=self.vocab_file,
                                          do_lower_case=self.do_lower_case,
                                          spm_model_file=self.spm_model_file)

    def preprocess(self, line: str) -> str:
        """The original's per-line text step: preprocess_text (SP) or strip (WordPiece)."""
        if self.spm_model_file:
            return sentence_tokens.preprocess_line(line, self.do_lower_case)
        return line.strip()

    def instance_config(self) -> instances.InstanceConfig:
        return instances.InstanceConfig(max_seq_length=self.max_seq_length,
                                        short_seq_prob=self.short_seq_prob,
                                        random_next_sentence=self.random_next_sentence)

    def masking_config(self, encoder: sentence_tokens.SentenceEncoder) -> masking.MaskingConfig:
        return masking.MaskingConfig(
            cls_code=encoder.cls_code, sep_code=encoder.sep_code, mask_id=encoder.mask_id,
            replacement_ids=tuple(encoder.replacement_ids), masked_lm_prob=self.masked_lm_prob,
            max_predictions_per_seq=self.max_predictions_per_seq,
            do_whole_word_mask=self.do_whole_word_mask, do_permutation=self.do_permutation,
            replay_unused_shuffle=self.exact_original,
            full_candidate_shuffle=self.exact_original)
