"""What every entry point shares: the original's TPU flags, the TF2 runtime flags, flags → nested
run configs, a quiet console and one `error: ...` line for every error a user can act on.

A script is its flags and one call; it imports its TensorFlow-heavy task module inside `main`, so
`--help` and a flag error answer before TensorFlow starts (~4 s):

    ...define its flags (its run config module is TensorFlow-free)...
    def main(argv): from ... import run_glue; run_glue(cli.config_from_flags(GlueRunConfig))
    if __name__ == "__main__": cli.run(main, required=["data_dir", ...])

Every function here reads the flag set at call time (`flags.FLAGS` by default), so tests can run
a script in-process with a fresh `FlagValues` each time.

`--verbosity=1` (or ALBERT_TF_TRACEBACK=1) shows tracebacks and TensorFlow's own log lines.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import pkgutil
import re
import sys
import typing

from absl import app, flags
from absl import logging as absl_logging

from albert_tf.cli_flags import FLAG_TABLE
from albert_tf.errors import AlbertError
from albert_tf.run_config import RuntimeConfig, dataclass_from_flat, use_onednn_kernels

TRACEBACK_ENV = "ALBERT_TF_TRACEBACK"


def _owner(module_name: str) -> str:
    # absl names a script's own module after sys.argv[0]; use that name for `--helpshort`.
    return sys.argv[0] if module_name == "__main__" else module_name


def _flag_set(flag_values):
    # Looked up per call (never bound as a default argument), so a test's fresh set is used.
    return flags.FLAGS if flag_values is None else flag_values


def define_tpu_flags(module_name: str, flag_values=None) -> None:
    """The original's TPU flags (same names and defaults)."""
    kw = dict(module_name=_owner(module_name), flag_values=_flag_set(flag_values))
    flags.DEFINE_bool("use_tpu", False, "Whether to use a TPU (implies --distribution_strategy=tpu).", **kw)
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use.", **kw)
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU.", **kw)
    flags.DEFINE_string("gcp_project", None, "GCP project of the Cloud TPU.", **kw)
    flags.DEFINE_string("master", None, "TensorFlow master URL.", **kw)
    flags.DEFINE_integer("num_tpu_cores", 8, "Number of TPU cores (accepted; the TPU strategy "
                         "counts them itself).", **kw)
    flags.DEFINE_integer("iterations_per_loop", 1000, "TPU host-loop size (accepted; the TF2 loop "
                         "runs one step per call).", **kw)


def define_runtime_flags(module_name: str, flag_values=None) -> None:
    """Ours: strategy, precision, XLA, accumulation, logging (`RuntimeConfig`'s fields)."""
    kw = dict(module_name=_owner(module_name), flag_values=_flag_set(flag_values))
    flags.DEFINE_enum("distribution_strategy", "one_device",
                      ["one_device", "mirrored", "multi_worker_mirrored", "tpu"],
                      "tf.distribute strategy.", **kw)
    flags.DEFINE_enum("mixed_precision", "none", ["none", "bf16", "fp16"],
                      "Compute precision (fp16 uses dynamic loss scaling).", **kw)
    flags.DEFINE_bool("jit_compile", False, "Compile the forward and backward pass with XLA.", **kw)
    flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per update (each "
                         "replica batch is split into this many).", **kw)
    flags.DEFINE_bool("recompute", False, "Recompute each pass of the shared layer in the "
                      "backward step instead of keeping its activations: a step's memory "
                      "for about a third more compute (docs/distributed.md); needs a config "
                      "without dropout in its layers.", **kw)
    flags.DEFINE_integer("log_every_steps", 100, "Log (and write summaries) every this many "
                         "steps.", **kw)


def config_defaults(cls) -> dict:
    """{flag name: default} of a run config dataclass, nested `runtime`/`schedule` included."""
    renames = getattr(cls, "FLAG_NAMES", {})
    hints = typing.get_type_hints(cls)
    found = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        if field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:
            value = None if field.default is dataclasses.MISSING else field.default
        if dataclasses.is_dataclass(hints.get(field.name)):
            found.update({renames.get(k, k): v for k, v in dataclasses.asdict(value).items()})
        else:
            found[renames.get(field.name, field.name)] = value
    return found


def define_flags(module_name: str, names: str, config=None, defaults=None, runtime=False,
                 flag_values=None) -> None:
    """Defines the flags `names` (whitespace-separated) with the type and help of
    `cli_flags.FLAG_TABLE`; a default comes from `defaults`, else from the run config class
    `config` (so a flag's default and the library's agree), else None. `runtime=True` adds the
    original's TPU flags and our runtime flags. `flag_values`: `flags.FLAGS` when left out."""
    flag_values = _flag_set(flag_values)
    merged = {**(config_defaults(config) if config is not None else {}), **(defaults or {})}
    kw = dict(module_name=_owner(module_name), flag_values=flag_values)
    for name in names.split():
        kind, help_text = FLAG_TABLE[name]
        default = merged.get(name)
        if isinstance(kind, tuple):
            flags.DEFINE_enum(name, default, list(kind), help_text, **kw)
        else:
            getattr(flags, f"DEFINE_{kind}")(name, default, help_text, **kw)
    if runtime:
        define_tpu_flags(module_name, flag_values)
        define_runtime_flags(module_name, flag_values)


def runtime_config_from_flags(values=None):
    """The shared `RuntimeConfig` from the flags above (`--use_tpu` means the TPU strategy)."""
    return config_from_flags(RuntimeConfig, values)


def config_from_flags(cls, values=None):
    """An instance of the dataclass `cls` from flag values (absl FLAGS when left out, or a plain
    mapping of flag names to values): see `dataclass_from_flat`. From absl flags, a config
    with a `flags_given` field learns which flags the command line named."""
    values = _flag_set(values)
    if isinstance(values, flags.FlagValues):
        given = frozenset(name for name in values if values[name].present)
        values = {name: values[name].value for name in values}
        values.setdefault("flags_given", given)
    return dataclass_from_flat(cls, values)


# ---------------------------------------------------------------------------- console and errors

def _wants_detail(argv) -> bool:
    if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
        return True
    for arg in argv[1:]:
        if arg.startswith(("--verbosity=", "-v=")):
            try:
                return int(arg.split("=", 1)[1]) >= 1
            except ValueError:
                return False
    return False


# The top-level scripts: `<module>.py` for each program in albert_tf/entry_points (listed, not
# imported), so a new task's script needs no line here; `albert-convert` has none (its clone
# form is `python -m albert_tf.weights`).
ENTRY_POINTS = tuple(sorted(
    f"{module.name}.py" for module in pkgutil.iter_modules(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry_points")])
    if module.name != "convert"))
COMMAND_PREFIX = "albert-"  # the installed commands (pyproject.toml's [project.scripts])


def is_entry_point(argv=None) -> bool:
    """Whether this process is one of our scripts, an installed `albert-*` command or
    `python -m albert_tf.<module>`."""
    argv = sys.argv if argv is None else argv
    program = argv[0] if argv else ""
    name = os.path.basename(program)
    # While `python -m albert_tf.x` imports the package, argv[0] is still "-m".
    return (program == "-m" or name in ENTRY_POINTS or name.startswith(COMMAND_PREFIX) or
            f"{os.sep}albert_tf{os.sep}" in program)


class _SilencedLoader:
    """Runs TensorFlow's package code with file descriptor 2 sent to /dev/null: its C++ start-up
    lines are written there, below Python's sys.stderr."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            with open(os.devnull, "w") as devnull:
                os.dup2(devnull.fileno(), 2)
                self._loader.exec_module(module)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            module.__loader__ = module.__spec__.loader = self._loader


class _QuietTensorFlowImport:
    """A one-shot import hook: whenever TensorFlow is first imported (by a task module, keras,
    ...), its package code runs through `_SilencedLoader`."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _SilencedLoader(spec.loader)
        return spec


def quiet_tensorflow(argv=None) -> None:
    """For a new user's console: TensorFlow's first import, whenever it comes, prints none of its
    C++ start-up lines (oneDNN, CUDA probing), and its C++ log stays below errors, unless the
    user asked for detail (`--verbosity=1`, ALBERT_TF_TRACEBACK=1). Imports nothing itself, so
    a script still answers `--help` or a flag error before TensorFlow loads. Call it before
    TensorFlow is imported; a no-op after."""
    argv = sys.argv if argv is None else argv
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    if _wants_detail(argv) or "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if not any(isinstance(finder, _QuietTensorFlowImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _QuietTensorFlowImport())


def describe_error(error: BaseException) -> str | None:
    """One line for an error a user can act on; None for anything else (a bug: traceback)."""
    if isinstance(error, AlbertError):
        return str(error)
    if isinstance(error, flags.Error):
        return str(error)
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    if isinstance(error, OSError) and getattr(error, "filename", None):
        return f"{error.filename}: {error.strerror or error}"
    if "tensorflow" in sys.modules:
        # Only when TensorFlow is already loaded: importing it here would cost a clean run ~4 s.
        from albert_tf.tf_errors import describe_tf_error

        return describe_tf_error(error)
    return None


def _print_error(message: str) -> None:
    text = " ".join(line.strip() for line in str(message).splitlines() if line.strip())
    print(f"error: {text}", file=sys.stderr, flush=True)


class _OwnInfoOnly:
    """absl log filter: INFO lines from albert_tf (progress, results), not from TensorFlow's
    internals (saver timings, signature renames); warnings and errors from anyone."""

    def filter(self, record) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        path = record.pathname.replace("\\", "/")
        return not any(f"/{name}/" in path for name in ("tensorflow", "keras", "tf_keras"))


def _quiet_python_loggers() -> None:
    for name in ("tensorflow", "keras", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)
    handler = absl_logging.get_absl_handler()
    if not any(isinstance(f, _OwnInfoOnly) for f in handler.filters):  # once per process
        handler.addFilter(_OwnInfoOnly())


_MISSING = re.compile(r"Flag --(\w+) must have a value other than None")


def _flag_error_message(error) -> str:
    missing = _MISSING.findall(str(error))
    if missing:
        names = ", ".join(f"--{name}" for name in missing)
        return f"missing required flag{'s' if len(missing) > 1 else ''}: {names}"
    return str(error)


def _parse_flags(argv):
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        _print_error(_flag_error_message(error))
        sys.exit(2)
    except SystemExit as done:
        # absl's --help/--helpshort/--helpfull/--helpxml print and exit 1 while parsing; our
        # exit status 1 means bad input, so a help that was asked for ends with 0.
        if done.code == 1:
            sys.exit(0)
        raise


def run(main, required=(), argv=None) -> None:
    """`absl.app.run(main)` with our console: a flag error or one of our errors ends the process
    with one `error: ...` line on stderr and exit status 1 (2 for flags); `--verbosity=1` (or
    ALBERT_TF_TRACEBACK=1) lets the traceback through instead."""
    argv = sys.argv if argv is None else argv
    quiet_tensorflow(argv)
    use_onednn_kernels()
    if required:
        flags.mark_flags_as_required(list(required), flag_values=flags.FLAGS)
    detail = _wants_detail(argv)

    def guarded(args):
        if not detail:
            _quiet_python_loggers()
        try:
            return main(args)
        except (SystemExit, app.UsageError):
            raise
        except BaseException as error:  # noqa: B902 - every error gets one line or a traceback
            message = describe_error(error)
            if message is None or detail:
                raise
            _print_error(message)
            sys.exit(1)

    def usage_guarded(args):
        try:
            return guarded(args)
        except app.UsageError as error:
            if detail:
                raise
            _print_error(str(error))
            sys.exit(2)

    app.run(usage_guarded, argv=argv, flags_parser=_parse_flags)
