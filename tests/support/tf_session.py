"""The TensorFlow set-up of every process that runs tests, as a pytest plugin: conftest.py
registers it there, and not in pytest-xdist's controller, which only hands out test files
(importing TensorFlow there held every worker back ~11 s at the start of the suite)."""

import gc

import pytest
import tensorflow as tf

from albert_tf.serving import verify
from support.serving import check_in_serving_process

# Grappler's graph rewrites off in the test processes: they optimise each traced function on its
# first call, which on the suite's tiny models costs more than it saves (a third of a 4-step
# tiny training run here). Entry points started as processes, and the shipped export check
# (`separate_check_processes`), keep TensorFlow's defaults.
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
# Two logical CPUs, set before TensorFlow starts: test_training_runtime.py runs MirroredStrategy
# over both in the test process (a process of its own paid a TensorFlow start-up for it). Ops
# without a device go to the first, as on any one-CPU machine.
tf.config.set_logical_device_configuration(tf.config.list_physical_devices("CPU")[0],
                                           [tf.config.LogicalDeviceConfiguration()] * 2)

REAL_CHECK_PROCESS = verify.run_check_process


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test file: collect its garbage, then freeze what survives, so that later full
    collections only walk objects made since. A worker's heap grows with every traced graph,
    and full collections walked all of it: TensorFlow's TFLite converter runs one per
    conversion (~1 s each late in a run, 37 s of the suite's CPU) and pytest five at exit."""
    yield
    if nextitem is None or nextitem.path != item.path:
        gc.collect()
        gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _export_checks_in_the_serving_process():
    """Every export's fresh-process check runs in the worker's serving process (one TensorFlow
    start-up per worker instead of one per export, ~10 s each here), which never builds a model
    either. Tests of the check's own process ask for `separate_check_processes`; scripts run as
    real processes use it as users do."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verify, "run_check_process", check_in_serving_process)
        yield


@pytest.fixture()
def separate_check_processes(monkeypatch):
    """The export check in a new `python -m albert_tf.serving.verify` process, as shipped."""
    monkeypatch.setattr(verify, "run_check_process", REAL_CHECK_PROCESS)
