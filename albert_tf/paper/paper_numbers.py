"""The ALBERT paper's own numbers (Lan et al., ICLR 2020, arXiv:1909.11942v6), for the report.

Models: ALBERT-base shape (H=768, 12 layers), trained 125k steps, batch 4096, sequences of 512,
on BookCorpus + English Wikipedia (16 GB). `avg` is the paper's downstream average (SQuAD 1.1,
SQuAD 2.0, MNLI, SST-2, RACE; each SQuAD counts the mean of its EM and F1); parameters in millions
(the encoder without the pooler, which `albert_tf.param_counts` reproduces).
"""

from __future__ import annotations

CITATION = "Lan et al., ALBERT (ICLR 2020, arXiv:1909.11942v6)"
SCALE = ("ALBERT-base shape (H=768, 12 layers, E=128 unless varied), 125,000 steps of 4,096 "
         "sequences of 512 tokens on BookCorpus + English Wikipedia (about 16 GB of text)")

# Table 5: intrinsic accuracies (%) on the held-out MLM, NSP and SOP data, and the downstream
# average, for each inter-sentence loss (ALBERT-base, all-shared, E=128).
TABLE5 = {
    "none": {"mlm": 54.9, "nsp": 52.4, "sop": 53.3, "avg": 79.0},
    "nsp": {"mlm": 54.5, "nsp": 90.5, "sop": 52.0, "avg": 79.2},
    "sop": {"mlm": 54.0, "nsp": 78.9, "sop": 86.5, "avg": 80.1},
}

# Table 4: cross-layer sharing (ALBERT-base), for E=768 and E=128. The E=128 shared-FFN average
# is left out: it could not be double-checked against the paper's text here.
TABLE4 = {
    768: {"all": {"params_m": 31, "avg": 79.8}, "attention": {"params_m": 83, "avg": 81.6},
          "ffn": {"params_m": 57, "avg": 79.5}, "none": {"params_m": 108, "avg": 82.3}},
    128: {"all": {"params_m": 12, "avg": 80.1}, "attention": {"params_m": 64, "avg": 81.7},
          "ffn": {"params_m": 38, "avg": None}, "none": {"params_m": 89, "avg": 81.6}},
}
TABLE4_DEFAULT_E = 128  # ALBERT's own E: the block our default-E rows are set beside

# Table 3: embedding size E (ALBERT-base), not-shared and all-shared.
TABLE3 = {
    "none": {64: {"params_m": 87, "avg": 81.3}, 128: {"params_m": 89, "avg": 81.7},
             256: {"params_m": 93, "avg": 81.8}, 768: {"params_m": 108, "avg": 82.3}},
    "all": {64: {"params_m": 10, "avg": 79.0}, 128: {"params_m": 12, "avg": 80.1},
            256: {"params_m": 16, "avg": 79.6}, 768: {"params_m": 31, "avg": 79.8}},
}

# Table 2's "Speedup": training throughput relative to BERT-large (same hardware and steps).
TABLE2_SPEEDUP = {"BERT-base": 4.7, "BERT-large": 1.0, "ALBERT-base": 5.6, "ALBERT-large": 1.7,
                  "ALBERT-xlarge": 0.6, "ALBERT-xxlarge": 0.3}

# Figure 1: per-layer L2 distance and cosine similarity between each layer's input and output
# embeddings, BERT-large vs ALBERT-large (24 layers). The paper gives curves, not a table.
FIGURE1 = ("ALBERT's layer-to-layer transitions are much smoother than BERT's (its curves "
           "oscillate less from layer to layer), and they do not converge to 0 even after 24 "
           "layers: weight sharing stabilizes the network's parameters.")


def paper_e(e: int, default_e: int, hidden_size: int, grid) -> int | None:
    """The paper's E that our E stands for, by its role: E=H ↔ 768, the default ↔ 128, one
    below the default ↔ 64, one between the default and H ↔ 256 (None for any other)."""
    if e == hidden_size:
        return 768
    if e == default_e:
        return 128
    below = sorted(g for g in set(grid) if g < default_e)
    between = sorted(g for g in set(grid) if default_e < g < hidden_size)
    if below and e == below[-1]:
        return 64
    if between and e == between[0]:
        return 256
    return None
