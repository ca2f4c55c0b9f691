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
