"""Which models the paper run trains, at which size (TensorFlow-free: the script checks its flags
and prints its plan before TensorFlow starts).

The paper's ablations (arXiv 1909.11942) vary one thing at a time around ALBERT's default
(all-shared, SOP, E=128 for H=768):
- Table 5, `inter_sentence`: no inter-sentence loss (MLM alone) / NSP / SOP;
- Table 4, `sharing`: all-shared / shared-attention / shared-FFN / not-shared;
- Table 3, `embedding_size`: E on a grid up to H (all-shared; the full-size run adds not-shared).
Models whose settings coincide are trained once (SOP + all-shared + default E appears in all three).
"""

from __future__ import annotations

import dataclasses

from albert_tf.errors import UsageError
from albert_tf.run_config import RuntimeConfig

OBJECTIVES = ("none", "nsp", "sop")  # Table 5's rows, in the paper's order
SHARING = ("all", "attention", "ffn", "none")  # Table 4's rows
SECTIONS = ("inter_sentence", "sharing", "embedding_size")


@dataclasses.dataclass
class PaperOptions:
    """Everything a paper run depends on. `quick()` and `full()` are the two presets."""

    input_file: str = ""
    output_dir: str = ""
    quick: bool = False
    # Tokenizer: the user's, or a SentencePiece model trained on the training documents.
    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool = True
    vocab_size: int = 30000
    # Data.
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    dupe_factor: int = 5
    heldout_fraction: float = 0.1
    max_heldout_examples: int = 4096
    num_workers: int = 0
    # Model (ALBERT-base's shape by default).
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    embedding_size: int = 128
    embedding_sizes: tuple = (64, 128, 256, 768)
    embedding_sharing: tuple = ("all", "none")  # Table 3 has both halves
    # Training (each model).
    steps: int = 10000
    train_batch_size: int = 256
    learning_rate: float = 0.00176
    optimizer: str = "lamb"
    warmup_fraction: float = 0.1
    eval_batch_size: int = 64
    speed_rounds: int = 7  # Table 2's timing: rounds of 10 steps per model, in turns
    seed: int = 12345
    runtime: RuntimeConfig = dataclasses.field(default_factory=RuntimeConfig)

    @classmethod
    def quick_preset(cls, **changes) -> "PaperOptions":
        """Minutes on a laptop's CPU: H=128, 4 layers, 64-token sequences, 800 steps of 32
        (in our trials the sentence-pair heads stayed at chance with a few hundred steps; eight
        models of 800 steps keep the whole run near 20 minutes on 2 cores)."""
        values = dict(quick=True, vocab_size=8000, max_seq_length=64, max_predictions_per_seq=10,
                      dupe_factor=3, max_heldout_examples=1024, hidden_size=128,
                      num_hidden_layers=4, num_attention_heads=2, intermediate_size=512,
                      embedding_size=32, embedding_sizes=(16, 32, 128),
                      embedding_sharing=("all",), steps=800, train_batch_size=32,
                      learning_rate=0.01, speed_rounds=3)
        values.update(changes)
        return cls(**values)

    @classmethod
    def create(cls, quick: bool = False, **changes) -> "PaperOptions":
        """The preset with the given changes (None values are left out). A new `hidden_size`
        without heads, FFN width or E grid scales those with it (heads of 64, FFN 4H, E grid
        H/8..H with default H/4), as the paper's shapes do."""
        changes = {k: v for k, v in changes.items() if v is not None}
        hidden = changes.get("hidden_size")
        if hidden:
            changes.setdefault("num_attention_heads", max(1, hidden // 64))
            changes.setdefault("intermediate_size", 4 * hidden)
            grid = tuple(sorted({max(1, hidden // 8), max(1, hidden // 4), max(1, hidden // 2),
                                 hidden}))
            changes.setdefault("embedding_sizes", grid)
            changes.setdefault("embedding_size", max(1, hidden // 4))
        options = cls.quick_preset(**changes) if quick else cls(**changes)
        options.validate()
        return options

    def validate(self) -> None:
        problems = []
        if not self.input_file:
            problems.append("--input_file is required")
        if not self.output_dir:
            problems.append("--output_dir is required")
        for name in ("steps", "train_batch_size", "hidden_size", "num_hidden_layers",
                     "num_attention_heads", "intermediate_size", "embedding_size",
                     "max_seq_length", "max_predictions_per_seq", "dupe_factor", "vocab_size"):
            if int(getattr(self, name)) < 1:
                problems.append(f"--{name} must be at least 1, got {getattr(self, name)}")
        if self.hidden_size % max(1, self.num_attention_heads):
            problems.append(f"--hidden_size={self.hidden_size} is not a multiple of "
                            f"--num_attention_heads={self.num_attention_heads}")
        if not 0.0 < self.heldout_fraction < 0.5:
            problems.append(f"--heldout_fraction must be in (0, 0.5), got {self.heldout_fraction}")
        if not self.embedding_sizes or any(int(e) < 1 for e in self.embedding_sizes):
            problems.append(f"--embedding_sizes must be positive integers, got "
                            f"{self.embedding_sizes}")
        if problems:
            raise UsageError("; ".join(problems))

    def model_settings(self) -> dict:
        """The settings every model's training depends on (a folder trained with others is
        refused rather than silently mixed)."""
        names = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                 "max_seq_length", "max_predictions_per_seq", "steps", "train_batch_size",
                 "learning_rate", "optimizer", "warmup_fraction", "seed")
        return {n: getattr(self, n) for n in names}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """One model to train: its inter-sentence objective, sharing mode and embedding size."""

    objective: str  # none | nsp | sop
    share: str  # all | attention | ffn | none
    embedding_size: int

    @property
    def name(self) -> str:
        return f"{self.objective}-share_{self.share}-E{self.embedding_size}"

    @property
    def data_kind(self) -> str:
        """The training records: NSP's for NSP, SOP's otherwise (MLM alone ignores the label)."""
        return "nsp" if self.objective == "nsp" else "sop"

    @property
    def sentence_order_loss_weight(self) -> float:
        return 0.0 if self.objective == "none" else 1.0


@dataclasses.dataclass
class Plan:
    """`sections[name]` = [(row label, ModelSpec)] in the paper's row order; `models` = every
    distinct model once, in training order."""

    sections: dict
    models: list

    def rows(self, section: str):
        return self.sections[section]


def build_plan(options: PaperOptions) -> Plan:
    base_e = options.embedding_size
    sections = {
        "inter_sentence": [(o, ModelSpec(o, "all", base_e)) for o in OBJECTIVES],
        "sharing": [(s, ModelSpec("sop", s, base_e)) for s in SHARING],
        "embedding_size": [(f"E={e} {s}-shared" if s == "all" else f"E={e} not-shared",
                            ModelSpec("sop", s, int(e)))
                           for s in options.embedding_sharing
                           for e in sorted({int(e) for e in options.embedding_sizes})],
    }
    models = []
    for section in SECTIONS:
        for _, spec in sections[section]:
            if spec not in models:
                models.append(spec)
    return Plan(sections, models)


def figure_models(options: PaperOptions) -> dict:
    """Figure 1's two models: ALBERT (all-shared) and BERT-style (not-shared), both SOP at the
    default E."""
    return {"all-shared": ModelSpec("sop", "all", options.embedding_size),
            "not-shared": ModelSpec("sop", "none", options.embedding_size)}


def speed_baseline(options: PaperOptions) -> ModelSpec:
    """Table 2's speedups are relative to one model; ours to the not-shared one (BERT-style)."""
    return ModelSpec("sop", "none", options.embedding_size)
