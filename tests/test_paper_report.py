"""results.json's sections, report.md beside the paper's numbers, and the PNGs (or their notice
when matplotlib is absent) from made-up scores: no model is trained here."""

import json
import sys

import pytest

from albert_tf.paper import paper_numbers, plots, report
from albert_tf.paper.plan import PaperOptions, build_plan

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _inputs(tmp_path, sop_on_nsp=0.70, nsp_on_sop=0.50):
    options = PaperOptions.create(quick=True, input_file="text.txt", output_dir=str(tmp_path))
    plan = build_plan(options)
    scores, trained, timed = {}, {}, {}
    for index, spec in enumerate(plan.models):
        scores[spec.name] = {"mlm_accuracy": 0.3, "nsp_accuracy": 0.6, "sop_accuracy": 0.6,
                             "parameters": 1000 * (index + 1), "embedding_parameters": 500,
                             "heldout_examples": {"sop": 1024, "nsp": 1024}}
        trained[spec.name] = {"steps_per_second": 2.0 + index}
        timed[spec.name] = {"steps_per_second": 3.0 + index, "rounds": [3.0 + index]}
    scores["sop-share_all-E32"]["nsp_accuracy"] = sop_on_nsp
    scores["nsp-share_all-E32"]["sop_accuracy"] = nsp_on_sop
    curve = {"layers": [1, 2], "l2_distance": [3.0, 1.0], "cosine_similarity": [0.5, 0.9],
             "angle_degrees": [60.0, 25.0], "tokens": 10}
    data = {"vocab_size": 8000, "train_documents": 9, "train_lines": 90}
    return options, plan, data, trained, scores, timed, {"all-shared": curve, "not-shared": curve}


def _results(tmp_path, **kw):
    options, plan, data, trained, scores, timed, curves = _inputs(tmp_path, **kw)
    return report.build_results(options, plan, data, trained, scores, timed, curves, 16, 12.0)


def test_results_have_every_section_and_the_papers_numbers(tmp_path):
    results = _results(tmp_path)
    for section in report.SECTIONS:
        assert section in results
    rows = {r["row"]: r for r in results["inter_sentence"]["rows"]}
    assert list(rows) == ["none", "nsp", "sop"]
    assert rows["sop"]["paper"] == paper_numbers.TABLE5["sop"]
    assert [r["row"] for r in results["sharing"]["rows"]] == ["all", "attention", "ffn", "none"]
    assert results["sharing"]["rows"][0]["paper"]["E=128"]["params_m"] == 12
    e_rows = results["embedding_size"]["rows"]
    assert [r["embedding_size"] for r in e_rows] == [16, 32, 128]
    assert [r["paper"]["E"] for r in e_rows] == [64, 128, 768]
    speed = results["speed"]
    assert speed["baseline"] == "sop-share_none-E32"
    rows = {r["model"]: r for r in speed["rows"]}
    assert rows[speed["baseline"]]["speedup"] == 1.0
    assert rows["sop-share_all-E32"]["logged_steps_per_second"] == 4.0
    assert set(results["layer_smoothness"]) >= {"all-shared", "not-shared", "smoothness"}
    json.dumps(results)  # serializable as it is


@pytest.mark.parametrize("sop_on_nsp, holds", [(0.70, True), (0.52, False)])
def test_the_table_5_pattern_and_its_margin(tmp_path, sop_on_nsp, holds):
    pattern = _results(tmp_path, sop_on_nsp=sop_on_nsp)["inter_sentence"]["pattern"]
    assert pattern["holds"] is holds
    assert pattern["margin"] == pytest.approx(sop_on_nsp - 0.50)
    assert pattern["required_margin"] == report.PATTERN_MARGIN
    assert pattern["margin_standard_error"] == pytest.approx(
        ((sop_on_nsp * (1 - sop_on_nsp) + 0.25) / 1024) ** 0.5)
    text = report.render(_results(tmp_path, sop_on_nsp=sop_on_nsp))
    assert ("did not appear" in text) is not holds
    every = pattern["every_sop_trained_model_nsp_accuracy"]
    assert len(every) == 6 and every["sop-share_all-E32"] == sop_on_nsp
    assert "NSP accuracy of all 6 SOP-trained models" in text


def test_the_report_renders_every_table_beside_the_paper(tmp_path):
    results = _results(tmp_path)
    results["figures"] = [str(tmp_path / "figure1_layer_smoothness.png")]
    text = report.render(results)
    for title in ("Table 5", "Table 4", "Table 3", "Table 2", "Figure 1"):
        assert f"## {title}" in text
    assert "| sop | 30.0 | 70.0 | 60.0 | 54.0 | 78.9 | 86.5 |" in text
    assert "**holds**" in text and "Scale: ours: H=128" in text and "16 GB" in text
    assert "![figure1_layer_smoothness.png](figure1_layer_smoothness.png)" in text


def test_figures_are_pngs(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (pip install -e '.[test]')")
    results = _results(tmp_path)
    written = plots.write_all(results, str(tmp_path))
    assert len(written) == 5
    for path in written:
        with open(path, "rb") as f:
            assert f.read(8) == PNG_MAGIC


def test_without_matplotlib_pngs_are_skipped_with_one_notice(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    monkeypatch.setattr(plots, "_notified", [])
    results = _results(tmp_path)
    results["figures"] = plots.write_all(results, str(tmp_path))
    paths = report.write(results, str(tmp_path))
    assert results["figures"] == [] and not list(tmp_path.glob("*.png"))
    out = capsys.readouterr().out
    assert out.count("matplotlib is not installed") == 1 and len(out.strip().splitlines()) == 1
    written = json.loads(open(paths["json"]).read())
    assert written["figures"] == [] and "## Table 5" in open(paths["report"]).read()


def test_a_model_at_chance_on_its_own_task_is_marked(tmp_path):
    # 0.517 on 1024 balanced held-out pairs (the SOP model) is within 2 standard errors
    # (3.1 points) of 50 %; 0.60 is not.
    options, plan, data, trained, scores, timed, curves = _inputs(tmp_path)
    scores["sop-share_all-E32"]["sop_accuracy"] = 0.517
    results = report.build_results(options, plan, data, trained, scores, timed, curves, 16, 1.0)
    own = results["inter_sentence"]["own_task"]
    assert own == {"learned": {"nsp": True, "sop": False}, "comparable": False,
                   "notes": own["notes"]}
    assert results["models"]["sop-share_all-E32"]["own_task"]["learned"] is False
    assert results["models"]["sop-share_none-E32"]["own_task"]["learned"] is True
    assert results["models"]["none-share_all-E32"]["own_task"] is None
    text = report.render(results)
    assert "| sop (own task at chance) | 30.0 |" in text
    assert "**Not comparable:**" in text and "51.7 % on held-out SOP" in text
    assert "needs more than 800 steps" in text
    assert "**Not comparable:**" not in report.render(_results(tmp_path))


def test_the_training_curve_says_from_which_step_a_task_was_learned():
    from albert_tf.paper import health

    # 40 steps of 32 pairs a point: chance + 2 standard errors is 52.8 %.
    curve = [(40, 0.50), (80, 0.62), (120, 0.51), (160, 0.60), (200, 0.64)]
    assert health.learned_from_step(curve, 40 * 32) == 160
    assert health.learned_from_step(curve[:3], 40 * 32) is None
    found = {"objective": "sop", "heldout_accuracy": 0.51, "heldout_examples": 1024,
             "steps": 200, "training_accuracy_last": 0.64,
             "training_cleared_chance_from_step": 160}
    assert "cleared chance only from step 160" in health.describe("m", found)
