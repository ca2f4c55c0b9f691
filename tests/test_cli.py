from absl import flags

from albert_tf import cli


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


def _run_main(body, *argv, env=None):
    """Runs a script whose main(argv) has `body`, through cli.run; returns the process."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys
        from absl import flags
        from albert_tf import cli
        from albert_tf.errors import InputError
        flags.DEFINE_string("data_file", None, "a file")
        def main(argv):
        {body}
        cli.run(main, required=["data_file"])
    """).format(body=textwrap.indent(body, "    "))
    console = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}  # a user's
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=120, env={**console, **(env or {})})


def test_our_errors_are_one_line_and_exit_1():
    result = _run_main("raise InputError('data.tsv:3: empty text_a (column 1)')",
                       "--data_file=x")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: data.tsv:3: empty text_a (column 1)"]


def test_a_missing_file_names_the_path():
    result = _run_main("open(flags.FLAGS.data_file)", "--data_file=/no/such/file.txt")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: /no/such/file.txt: No such file or directory"]


def test_flag_errors_are_one_line_and_exit_2():
    result = _run_main("pass")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: missing required flag: --data_file"]
    result = _run_main("pass", "--data_file=x", "--no_such_flag=1")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "no_such_flag" in result.stderr


def test_traceback_on_request_and_for_bugs():
    body = "raise InputError('bad line')"
    for detail in ({"argv": ["--verbosity=1"]}, {"env": {"ALBERT_TF_TRACEBACK": "1"}}):
        result = _run_main(body, "--data_file=x", *detail.get("argv", []), env=detail.get("env"))
        assert result.returncode == 1 and "Traceback" in result.stderr
    bug = _run_main("[][1]", "--data_file=x")  # not ours: a bug keeps its traceback
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
