"""The run's PNG figures (matplotlib, the optional `[paper]` extra): Figure 1's two panels and bar
charts of the tables. Without matplotlib every function returns None and one notice is printed;
the JSON and the report are written all the same."""

from __future__ import annotations

import os

NOTICE = ("[paper] matplotlib is not installed: PNG figures skipped (pip install -e \".[paper]\" "
          "or pip install matplotlib); results.json and report.md are complete without them")
_notified = []


def _pyplot(printer=print):
    """matplotlib.pyplot on the file-only Agg backend, or None (with the notice, once)."""
    try:
        import matplotlib  # optional dependency: only the figures need it

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if not _notified:
            printer(NOTICE)
            _notified.append(True)
        return None
    return plt


def _save(fig, plt, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    os.replace(tmp, path)
    return path


def figure1(curves: dict, path: str, printer=print) -> str | None:
    """Two panels, as the paper's Figure 1: per layer, the L2 distance and the cosine similarity
    between its input and output embeddings, one line per model."""
    plt = _pyplot(printer)
    if plt is None:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, curve in curves.items():
        left.plot(curve["layers"], curve["l2_distance"], marker="o", label=name)
        right.plot(curve["layers"], curve["cosine_similarity"], marker="o", label=name)
    left.set(title="L2 distance", xlabel="layer", ylabel="mean ||out - in||")
    right.set(title="Cosine similarity", xlabel="layer", ylabel="mean cos(in, out)")
    for axis in (left, right):
        axis.grid(alpha=0.3)
        axis.legend()
        axis.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle("Input vs output embedding of each layer (cf. the ALBERT paper's Figure 1)")
    return _save(fig, plt, path)


def accuracy_bars(rows: list, title: str, path: str, metrics=("mlm_accuracy", "nsp_accuracy",
                                                              "sop_accuracy"),
                  with_parameters: bool = True, printer=print) -> str | None:
    """Grouped bars of the held-out accuracies per row, and the parameter counts beside them."""
    plt = _pyplot(printer)
    if plt is None:
        return None
    labels = [str(r["row"]) for r in rows]
    if not with_parameters:
        fig, left = plt.subplots(figsize=(7, 3.8))
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8),
                                          gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(metrics)
    for k, metric in enumerate(metrics):
        xs = [i + (k - (len(metrics) - 1) / 2) * width for i in range(len(rows))]
        left.bar(xs, [100 * r[metric] for r in rows], width,
                 label=metric.replace("_accuracy", "").upper())
    left.axhline(50, color="gray", linewidth=0.8, linestyle="--")
    left.set_xticks(range(len(rows)), labels, rotation=15)
    left.set(ylabel="held-out accuracy (%)", title=title)
    left.legend()
    if not with_parameters:
        return _save(fig, plt, path)
    right.bar(range(len(rows)), [r["parameters"] / 1e6 for r in rows], color="tab:gray")
    right.set_xticks(range(len(rows)), labels, rotation=15)
    right.set(ylabel="parameters (M)", title="parameters")
    return _save(fig, plt, path)


def speed_bars(rows: list, path: str, printer=print) -> str | None:
    plt = _pyplot(printer)
    if plt is None:
        return None
    fig, axis = plt.subplots(figsize=(8, 3.8))
    axis.bar(range(len(rows)), [r["speedup"] or 0.0 for r in rows])
    axis.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
    axis.set_xticks(range(len(rows)), [r["model"] for r in rows], rotation=30, ha="right")
    axis.set(ylabel="training speed vs not-shared", title="Relative training speed (steps/s)")
    return _save(fig, plt, path)


def write_all(results: dict, output_dir: str, printer=print) -> list[str]:
    """Every figure of a paper run; returns the paths written (empty without matplotlib)."""
    smooth = results["layer_smoothness"]
    curves = {k: v for k, v in smooth.items() if isinstance(v, dict) and "layers" in v}
    made = [
        figure1(curves, os.path.join(output_dir, "figure1_layer_smoothness.png"), printer),
        accuracy_bars(results["inter_sentence"]["rows"], "Table 5: inter-sentence loss",
                      os.path.join(output_dir, "table5_inter_sentence.png"),
                      with_parameters=False, printer=printer),
        accuracy_bars(results["sharing"]["rows"], "Table 4: cross-layer sharing",
                      os.path.join(output_dir, "table4_sharing.png"), printer=printer),
        accuracy_bars(results["embedding_size"]["rows"], "Table 3: embedding size E",
                      os.path.join(output_dir, "table3_embedding_size.png"), printer=printer),
        speed_bars(results["speed"]["rows"], os.path.join(output_dir, "table2_speed.png"),
                   printer),
    ]
    return [path for path in made if path]
