"""The paper run's plan: every section of the paper, each distinct model once, sizes that
follow H; its command line's errors."""

import subprocess
import sys

import pytest

from albert_tf.errors import UsageError
from albert_tf.paper.plan import (OBJECTIVES, SECTIONS, SHARING, ModelSpec, PaperOptions,
                                  build_plan, figure_models, speed_baseline)
from support.paths import REPO


def _options(**changes):
    return PaperOptions.create(quick=True, input_file="text.txt", output_dir="out", **changes)


def test_the_plan_has_every_section_in_the_papers_row_order():
    options = _options()
    plan = build_plan(options)
    assert tuple(plan.sections) == SECTIONS
    assert [label for label, _ in plan.rows("inter_sentence")] == list(OBJECTIVES)
    assert [label for label, _ in plan.rows("sharing")] == list(SHARING)
    sizes = [spec.embedding_size for _, spec in plan.rows("embedding_size")]
    assert sizes == sorted(options.embedding_sizes) and 3 <= len(sizes) <= 4
    assert options.embedding_size in sizes and options.hidden_size in sizes


def test_models_shared_between_sections_are_trained_once():
    options = _options()
    plan = build_plan(options)
    names = [spec.name for spec in plan.models]
    assert len(names) == len(set(names))
    base = ModelSpec("sop", "all", options.embedding_size)
    assert sum(spec == base for spec in plan.models) == 1
    assert base in [s for _, s in plan.rows("inter_sentence")]
    assert base in [s for _, s in plan.rows("sharing")]
    assert base in [s for _, s in plan.rows("embedding_size")]
    every = {spec for rows in plan.sections.values() for _, spec in rows}
    assert every == set(plan.models)
    assert set(figure_models(options).values()) <= every and speed_baseline(options) in every


def test_the_objectives_read_their_own_records():
    assert ModelSpec("nsp", "all", 8).data_kind == "nsp"
    assert ModelSpec("sop", "all", 8).data_kind == "sop"
    none = ModelSpec("none", "all", 8)
    assert none.data_kind == "sop" and none.sentence_order_loss_weight == 0.0
    assert ModelSpec("sop", "all", 8).sentence_order_loss_weight == 1.0


def test_the_full_size_run_adds_not_shared_rows_to_table_3():
    options = PaperOptions.create(input_file="t", output_dir="o")
    assert options.hidden_size == 768 and options.embedding_sizes == (64, 128, 256, 768)
    shares = {spec.share for _, spec in build_plan(options).rows("embedding_size")}
    assert shares == {"all", "none"}


def test_a_new_hidden_size_scales_heads_ffn_and_the_e_grid():
    options = _options(hidden_size=256)
    assert (options.num_attention_heads, options.intermediate_size) == (4, 1024)
    assert options.embedding_sizes == (32, 64, 128, 256) and options.embedding_size == 64
    assert _options(hidden_size=256, num_attention_heads=8).num_attention_heads == 8


def test_bad_values_are_one_usage_error_naming_the_flags():
    with pytest.raises(UsageError, match="--steps.*--heldout_fraction"):
        _options(steps=0, heldout_fraction=0.9)
    with pytest.raises(UsageError, match="--input_file is required"):
        PaperOptions.create(quick=True, output_dir="out")
    with pytest.raises(UsageError, match="not a multiple"):
        _options(hidden_size=100, num_attention_heads=3)


def test_the_command_line_fails_with_one_error_line(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "albert_tf.paper", *args], cwd=REPO,
                              capture_output=True, text=True, timeout=300)

    bad = run(f"--input_file={tmp_path / 'x.txt'}", f"--output_dir={tmp_path / 'out'}", "--quick",
              "--steps=0", "--embedding_sizes=8,16")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines()[-1] == "error: --steps must be at least 1, got 0"
    missing = run("--quick")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1].startswith("error: missing required flags")
    assert not (tmp_path / "out").exists()
