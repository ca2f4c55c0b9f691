"""The step-memory estimate (albert_tf.training.memory): a batch that cannot fit is refused
before the first step with one line naming --train_batch_size and
--gradient_accumulation_steps."""

import pytest

from albert_tf.config import AlbertConfig
from albert_tf.training import memory

BASE = AlbertConfig(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12,
                    num_attention_heads=12, intermediate_size=3072)


def test_estimate_grows_with_the_batch_and_shrinks_with_accumulation():
    small = memory.step_bytes(BASE, 32, 128)
    assert 1 * memory.GB < small < 8 * memory.GB
    assert memory.step_bytes(BASE, 4096, 512) > 100 * small
    assert memory.step_bytes(BASE, 4096, 512, accumulation=64) < \
        memory.step_bytes(BASE, 4096, 512) / 10


def test_refusal_names_the_flags():
    with pytest.raises(memory.StepMemoryError, match="--train_batch_size=4096") as caught:
        memory.check_step_fits(BASE, 4096, 512, available=24 * memory.GB)
    message = str(caught.value)
    assert "--train_batch_size=4096" in message and "--gradient_accumulation_steps=1" in message
    assert "24.0 GB available" in message and "\n" not in message
    assert memory.check_step_fits(BASE, 8, 128, available=24 * memory.GB) > 0


def test_skip_by_environment_and_unknown_memory(monkeypatch):
    monkeypatch.setenv("ALBERT_TF_SKIP_MEMORY_CHECK", "1")
    assert memory.check_step_fits(BASE, 4096, 512, available=memory.GB) > memory.GB
    monkeypatch.delenv("ALBERT_TF_SKIP_MEMORY_CHECK")
    assert memory.available_bytes() is None or memory.available_bytes() > 0
