"""run_embeddings.py's run config (TensorFlow-free: the script takes its flags' defaults from it
before TensorFlow starts)."""

from __future__ import annotations

import dataclasses

from albert_tf.run_config import RunBasics


@dataclasses.dataclass
class EmbeddingsRunConfig(RunBasics):
    """`RunBasics` (`--init_checkpoint` and `--output_dir` are required: `run.run_embeddings`
    says so), the pair files, the tokenizer (None: the model folder's) and the training."""

    train_file: str | None = None
    dev_file: str | None = None
    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool | None = None
    pooling: str | None = None
    embedding_loss: str = "contrastive"
    temperature: float = 0.05
    score_range: str | None = None
    max_seq_length: int | None = None
    train_batch_size: int = 32
    learning_rate: float = 2e-5
    num_train_epochs: float = 1.0
    seed: int = 12345
