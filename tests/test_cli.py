import dataclasses
import os
import re
import sys
import textwrap
import types

import pytest
from absl import flags

from albert_tf import cli, run_config
from albert_tf.tasks.embeddings.config import EmbeddingsRunConfig
from support.entry_points import console_env, run_entry_point, run_process
from support.paths import REPO


def _values(*argv):
    values = flags.FlagValues()
    cli.define_tpu_flags("test_module", values)
    cli.define_runtime_flags("test_module", values)
    values(["prog", *argv])
    return values


def test_original_tpu_defaults_and_runtime_config():
    values = _values()
    assert (values.use_tpu, values.num_tpu_cores, values.iterations_per_loop) == (False, 8, 1000)
    config = cli.runtime_config_from_flags(values)
    assert (config.distribution_strategy, config.mixed_precision, config.jit_compile) == ("one_device", "none", False)


def test_use_tpu_selects_the_tpu_strategy():
    config = cli.runtime_config_from_flags(_values("--use_tpu", "--tpu_name=pod", "--mixed_precision=bf16",
                                                   "--gradient_accumulation_steps=4"))
    assert (config.distribution_strategy, config.tpu_name, config.mixed_precision,
            config.gradient_accumulation_steps) == ("tpu", "pod", "bf16", 4)


def test_flags_belong_to_the_calling_script():
    values = flags.FlagValues()
    cli.define_tpu_flags("my_script", values)
    assert "use_tpu" in {f.name for f in values.get_flags_for_module("my_script")}


SCRIPT = """
import sys
from absl import flags
from albert_tf import cli
from albert_tf.errors import InputError
flags.DEFINE_string("data_file", None, "a file")
def main(argv):
{body}
cli.run(main, required=["data_file"])
"""


def _script(body, folder) -> str:
    """A script whose main(argv) has `body`, through cli.run."""
    path = os.path.join(folder, "script.py")
    with open(path, "w") as handle:
        handle.write(SCRIPT.format(body=textwrap.indent(body, "    ")))
    return path


@pytest.fixture()
def run_main(tmp_path):
    """Runs such a script in-process (a fresh flag set per call): the CompletedProcess."""
    return lambda body, *argv, env=None: run_entry_point(_script(body, tmp_path), argv, env=env)


def test_a_new_users_console_shows_one_error_line_and_no_tensorflow_start_up(tmp_path):
    """A real process (the point here): TensorFlow loads inside main, as in every script, and
    prints none of its C++ start-up lines; our error is the one line, exit status 1."""
    body = "import tensorflow\nraise InputError('data.tsv:3: empty text_a (column 1)')"
    result = run_process(_script(body, tmp_path), ["--data_file=x"], env=console_env(), timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: data.tsv:3: empty text_a (column 1)"]


SCRIPTS = ("run_classifier.py", "run_pretraining.py", "run_squad.py", "run_race.py",
           "export_saved_model.py", "export_checkpoints.py")
# Runs a script (argv[1:]) in a real process, then says whether TensorFlow was imported.
LOADED = ("import runpy, sys\nsys.argv = sys.argv[1:]\ntry:\n"
          "    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit as e:\n"
          "    print('exit', e.code)\nprint('tensorflow loaded:', 'tensorflow' in sys.modules)\n")


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_answers_before_tensorflow_loads(script):
    result = run_process("-c", [LOADED, script, "--helpshort"], timeout=120)
    assert "Try --helpfull to get a list of all flags." in result.stdout, result.stderr[-2000:]
    assert result.stdout.splitlines()[-2:] == ["exit 0", "tensorflow loaded: False"], \
        result.stderr[-2000:]


# Every program a user runs: the top-level scripts, the `python -m` commands; the installed
# `albert-*` commands run the same `run()` as a script (checked against pyproject.toml below).
PROGRAMS = [(script, []) for script in cli.ENTRY_POINTS] + [
    ("-m", [module]) for module in ("albert_tf.demo", "albert_tf.paper", "albert_tf.paper.layers",
                                    "albert_tf.weights", "albert_tf.convert", "albert_tf.train_spm",
                                    "albert_tf.train_vocab", "albert_tf.evaluate_squad",
                                    "albert_tf.smoke", "albert_tf.fill_mask", "albert_tf.search")]


@pytest.mark.parametrize("script,argv", PROGRAMS, ids=[s if s != "-m" else a[0] for s, a in PROGRAMS])
def test_help_exits_0(script, argv):
    # absl's help flags exit 1, which our scripts use for bad input (two use argparse).
    argparse = argv in (["albert_tf.evaluate_squad"], ["albert_tf.smoke"])
    for asked in ("--help",) if argparse else ("--help", "--helpfull"):
        result = run_entry_point(script, [*argv, asked])
        assert result.returncode == 0, (asked, result.stderr[-2000:])
        assert "--" in result.stdout and "Traceback" not in result.stderr


def test_every_installed_command_runs_a_script_tested_above():
    text = (REPO / "pyproject.toml").read_text()
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    commands = dict(re.findall(r'^(albert-[\w-]+) = "albert_tf\.entry_points\.(\w+):run"', section,
                               re.MULTILINE))
    assert len(commands) == 10, section
    for command, module in commands.items():
        if module == "convert":  # `python -m albert_tf.weights`, tested above
            continue
        script = (REPO / f"{module}.py").read_text()
        assert f"{module}.run()" in script and f"{module}.py" in cli.ENTRY_POINTS, command


def test_a_missing_flag_answers_before_tensorflow_loads():
    result = run_process("-c", [LOADED, "run_squad.py", "--do_train"], timeout=120)
    assert result.stderr.strip().splitlines() == ["error: missing required flag: --output_dir"]
    assert result.stdout.splitlines() == ["exit 2", "tensorflow loaded: False"]


def test_package_and_config_imports_leave_tensorflow_unloaded():
    code = ("import sys, albert_tf, albert_tf.cli, albert_tf.run_config, albert_tf.evaluate_squad\n"
            "import albert_tf.tasks.squad.config, albert_tf.tasks.race.config\n"
            "import albert_tf.tasks.pretraining.config, albert_tf.tasks.classification.config\n"
            "import albert_tf.tasks.embeddings.config\n"
            "print('tensorflow' in sys.modules)")
    assert run_process("-c", [code], timeout=120).stdout.strip() == "False"


def test_our_errors_are_one_line_and_exit_1(run_main):
    result = run_main("raise InputError('data.tsv:3: empty text_a (column 1)')",
                       "--data_file=x")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: data.tsv:3: empty text_a (column 1)"]


def test_a_missing_file_names_the_path(run_main):
    result = run_main("open(flags.FLAGS.data_file)", "--data_file=/no/such/file.txt")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: /no/such/file.txt: No such file or directory"]


def test_flag_errors_are_one_line_and_exit_2(run_main):
    result = run_main("pass")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: missing required flag: --data_file"]
    result = run_main("pass", "--data_file=x", "--no_such_flag=1")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "no_such_flag" in result.stderr


def test_traceback_on_request_and_for_bugs(run_main):
    body = "raise InputError('bad line')"
    for detail in ({"argv": ["--verbosity=1"]}, {"env": {"ALBERT_TF_TRACEBACK": "1"}}):
        result = run_main(body, "--data_file=x", *detail.get("argv", []), env=detail.get("env"))
        assert result.returncode == 1 and "Traceback" in result.stderr
    bug = run_main("[][1]", "--data_file=x")  # not ours: a bug keeps its traceback
    assert bug.returncode == 1 and "IndexError" in bug.stderr and "Traceback" in bug.stderr


def test_nested_run_config_from_flat_flags():
    from albert_tf.tasks.classification.config import GlueRunConfig

    config = cli.config_from_flags(GlueRunConfig, {
        "task_name": "mrpc", "train_step": 7, "warmup_step": 2, "train_batch_size": 4,
        "use_tpu": True, "mixed_precision": "bf16", "unrelated_flag": 1})
    assert config.task_name == "mrpc"
    assert (config.schedule.num_train_steps, config.schedule.num_warmup_steps,
            config.schedule.train_batch_size, config.schedule.eval_batch_size) == (7, 2, 4, 8)
    assert (config.runtime.distribution_strategy, config.runtime.mixed_precision) == ("tpu", "bf16")


def test_run_embeddings_config_builds_on_the_fields_every_run_has():
    """run_embeddings.py's config takes output_dir .. do_eval from `RunBasics`, as `RunConfig`
    does, and its flags take their defaults from it: the values the script spelled out itself
    before (here by hand), every one kept."""
    basics = ["output_dir", "albert_config_file", "init_checkpoint", "do_train", "do_eval"]
    assert [f.name for f in dataclasses.fields(run_config.RunBasics)] == basics
    assert [f.name for f in dataclasses.fields(run_config.RunConfig)][:5] == basics
    assert cli.config_defaults(EmbeddingsRunConfig) == {
        "output_dir": None, "albert_config_file": None, "init_checkpoint": None,
        "do_train": False, "do_eval": False, "train_file": None, "dev_file": None,
        "spm_model_file": None, "vocab_file": None, "do_lower_case": None, "pooling": None,
        "embedding_loss": "contrastive", "temperature": 0.05, "score_range": None,
        "max_seq_length": None, "train_batch_size": 32, "learning_rate": 2e-5,
        "num_train_epochs": 1.0, "seed": 12345}


def test_onednn_kernels_are_asked_for_before_tensorflow_starts(monkeypatch):
    """TensorFlow reads TF_ENABLE_ONEDNN_OPTS once, at its import: every entry point sets it first
    on x86 (1.65x to 2.4x faster CPU training steps where TensorFlow leaves oneDNN off), never
    over the user's value, and not once TensorFlow is running (too late to matter)."""
    monkeypatch.setattr(run_config.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    monkeypatch.setitem(sys.modules, "tensorflow",
                        sys.modules.get("tensorflow", types.ModuleType("tensorflow")))
    run_config.use_onednn_kernels()  # TensorFlow already imported
    assert "TF_ENABLE_ONEDNN_OPTS" not in os.environ
    monkeypatch.delitem(sys.modules, "tensorflow")
    run_config.use_onednn_kernels()
    assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "1"
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    run_config.use_onednn_kernels()
    assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "0"
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS")
    monkeypatch.setattr(run_config.platform, "machine", lambda: "aarch64")
    run_config.use_onednn_kernels()  # TensorFlow's own choice stands on other CPUs
    assert "TF_ENABLE_ONEDNN_OPTS" not in os.environ
