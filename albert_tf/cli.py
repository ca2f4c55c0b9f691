"""absl flags every entry point shares: the original's TPU flags and the TF2 runtime flags.

Scripts call these with their own `__name__`, so `--helpshort` lists the flags as theirs.
"""

from __future__ import annotations

import sys

from absl import flags


def _owner(module_name: str) -> str:
    # absl names a script's own module after sys.argv[0]; use that name for `--helpshort`.
    return sys.argv[0] if module_name == "__main__" else module_name


def define_tpu_flags(module_name: str, flag_values=flags.FLAGS) -> None:
    """The original's TPU flags (same names and defaults)."""
    kw = dict(module_name=_owner(module_name), flag_values=flag_values)
    flags.DEFINE_bool("use_tpu", False, "Whether to use a TPU (implies --distribution_strategy=tpu).", **kw)
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use.", **kw)
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU.", **kw)
    flags.DEFINE_string("gcp_project", None, "GCP project of the Cloud TPU.", **kw)
    flags.DEFINE_string("master", None, "TensorFlow master URL.", **kw)
    flags.DEFINE_integer("num_tpu_cores", 8, "Number of TPU cores (the TPU strategy counts them "
                         "itself).", **kw)
    flags.DEFINE_integer("iterations_per_loop", 1000, "TPU host-loop size (accepted; the TF2 loop "
                         "runs one step per call).", **kw)


def define_runtime_flags(module_name: str, flag_values=flags.FLAGS) -> None:
    """Ours: strategy, precision, XLA, accumulation, logging (`RuntimeConfig`'s fields)."""
    kw = dict(module_name=_owner(module_name), flag_values=flag_values)
    flags.DEFINE_enum("distribution_strategy", "one_device",
                      ["one_device", "mirrored", "multi_worker_mirrored", "tpu"],
                      "tf.distribute strategy.", **kw)
    flags.DEFINE_enum("mixed_precision", "none", ["none", "bf16", "fp16"],
                      "Compute precision (fp16 uses dynamic loss scaling).", **kw)
    flags.DEFINE_bool("jit_compile", False, "Compile the forward and backward pass with XLA.", **kw)
    flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per update (each "
                         "replica batch is split into this many).", **kw)
    flags.DEFINE_integer("log_every_steps", 100, "Log (and write summaries) every this many "
                         "steps.", **kw)


def runtime_config_from_flags(values=flags.FLAGS):
    """The shared `RuntimeConfig` from the flags above (`--use_tpu` means the TPU strategy)."""
    from albert_tf.training import RuntimeConfig

    return RuntimeConfig.from_options(values)
