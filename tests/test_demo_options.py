"""The demo's settings: the fast default against --full (the longer run of before), and bf16
pretraining only where the CPU multiplies bfloat16 natively (its /proc/cpuinfo flags)."""

from __future__ import annotations

import dataclasses

from albert_tf.demo import options
from albert_tf.demo.options import DemoOptions, cpu_has_bf16, full_options

AVX512 = "fpu vme sse sse2 avx avx2 fma avx512f avx512bw avx512vl"


def test_bf16_only_where_the_cpu_has_it(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    for flags, native in ((AVX512, False), (AVX512 + " avx512_bf16", True),
                          (AVX512 + " amx_tile amx_bf16", True), ("fpu sse2 avx2 fma", False)):
        cpuinfo.write_text(f"processor\t: 0\nmodel name\t: x\nflags\t\t: {flags}\n\n")
        assert cpu_has_bf16(str(cpuinfo)) is native, flags
    assert cpu_has_bf16(str(tmp_path / "missing")) is False  # no /proc (macOS, Windows)


def test_the_fast_default_and_full(monkeypatch):
    monkeypatch.setattr(options, "cpu_has_bf16", lambda: False)
    fast, full = DemoOptions(), full_options()
    assert fast.pretrain_precision == "none"  # no native bf16 here: float32
    monkeypatch.setattr(options, "cpu_has_bf16", lambda: True)
    assert DemoOptions().pretrain_precision == "bf16"
    assert full_options().pretrain_precision == "none"
    assert (full.pretrain.num_train_steps, full.finetune.num_train_steps,
            full.num_hidden_layers) == (800, 300, 6)  # the run of before, unchanged
    assert (full.pretrain.learning_rate, full.finetune.learning_rate) == (2e-3, 1e-4)
    assert (fast.pretrain.num_train_steps, fast.finetune.num_train_steps,
            fast.num_hidden_layers) == (options.FAST_PRETRAIN_STEPS, options.FAST_FINETUNE_STEPS,
                                        options.FAST_LAYERS)
    # less pretraining arithmetic: steps x passes of the shared block
    assert fast.pretrain.num_train_steps * fast.num_hidden_layers < \
        full.pretrain.num_train_steps * full.num_hidden_layers
    # everything else (corpus, vocabulary, records, model shape) is the same run
    same = {f.name for f in dataclasses.fields(DemoOptions)} - {
        "pretrain", "finetune", "pretrain_precision", "num_hidden_layers"}
    assert all(getattr(fast, name) == getattr(full, name) for name in same)
