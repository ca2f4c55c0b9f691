"""Parameter counts of built models: the released sizes and the paper's ALBERT-base ablations.

`python -m albert_tf.param_counts` prints the table (models are built, weights counted; the
weights get shapes but no values, so even xxlarge takes well under a second).
"""

from __future__ import annotations

import threading

import keras
import numpy as np

from albert_tf.config import AlbertConfig, preset
from albert_tf.models import AlbertModel

# Paper (arXiv 1909.11942) Table 3 and Table 4: ALBERT-base shape, counts in millions.
PAPER_TABLE3 = {  # embedding_size: (not-shared, all-shared)
    64: (87, 10), 128: (89, 12), 256: (93, 16), 768: (108, 31)}
PAPER_TABLE4 = {  # embedding_size: (all-shared, shared-FFN, shared-attention, not-shared)
    768: (31, 57, 83, 108), 128: (12, 38, 64, 89)}


def count_params(model) -> int:
    return int(sum(np.prod(w.shape) for w in model.weights))


def encoder_params(config: AlbertConfig, pooler: bool = True) -> int:
    """Weights of a built `AlbertModel`; `pooler=False` leaves out the [H,H] pooler.

    The paper's ablation tables count without the pooler (its 108M for the BERT-base shape is
    109.1M with it), so those rows are compared pooler-excluded.
    """
    model = _built_without_values(config)
    total = count_params(model)
    return total if pooler else total - count_params(model.pooler)


def _built_without_values(config: AlbertConfig) -> AlbertModel:
    """An `AlbertModel` whose variables have shapes but no values: Keras defers a variable's
    initializer inside a StatelessScope, and counting needs only shapes (drawing xxlarge's 223M
    random values took minutes). Keras lists deferred variables for the next scope to initialize,
    per thread: built in a thread of its own, the list ends with the thread."""
    built = {}

    def build():
        try:
            with keras.StatelessScope(initialize_variables=False):
                built["model"] = AlbertModel(config)
        except BaseException as error:  # re-raised in the caller's thread
            built["error"] = error

    thread = threading.Thread(target=build, name="albert_tf-param-count")
    thread.start()
    thread.join()
    if "error" in built:
        raise built["error"]
    return built["model"]


def ablation_config(embedding_size: int, share_parameters: str) -> AlbertConfig:
    return preset("albert_base_v2", embedding_size=embedding_size, share_parameters=share_parameters)


RELEASED = ("base", "large", "xlarge", "xxlarge")


def table_rows(released=RELEASED, ablations: bool = True):
    """(name, params with pooler, params without pooler, paper figure in millions or None)."""
    rows = []

    def add(name, config, paper):
        rows.append((name, encoder_params(config), encoder_params(config, pooler=False), paper))

    for size in released:
        add(f"albert_{size} (released)", preset(f"albert_{size}_v2"), None)
    if not ablations:
        return rows
    for e, (not_shared, all_shared) in PAPER_TABLE3.items():
        add(f"base E={e} not-shared (Table 3)", ablation_config(e, "none"), not_shared)
        add(f"base E={e} all-shared (Table 3)", ablation_config(e, "all"), all_shared)
    for e, (_, ffn, attention, _) in PAPER_TABLE4.items():
        add(f"base E={e} shared-FFN (Table 4)", ablation_config(e, "ffn"), ffn)
        add(f"base E={e} shared-attention (Table 4)", ablation_config(e, "attention"), attention)
    return rows


def main(released=RELEASED, ablations: bool = True):
    print(f"{'model':40s} {'with pooler':>13s} {'w/o pooler':>13s} {'paper (M)':>10s}")
    for name, count, no_pooler, paper in table_rows(released, ablations):
        print(f"{name:40s} {count:13,d} {no_pooler:13,d} {'' if paper is None else paper:>10}")


if __name__ == "__main__":
    main()
