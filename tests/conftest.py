"""Shared test set-up: quiet TensorFlow, fixtures for ../shared (skipped when it is absent),
the tiny config and batch. TensorFlow's own set-up, and the fixtures that need it, are in
tests/support/tf_session.py; other helpers live in tests/support/."""

import os
import re

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# Entry points turn TensorFlow's oneDNN kernels on for x86 CPUs (`run_config.use_onednn_kernels`,
# tested in test_cli.py). The suite's entry-point processes run a few steps each, where oneDNN's
# per-shape kernel set-up costs more than it saves (the suite took 600 s with it against 570-580
# s without), so they keep TensorFlow's own default here (off on CPUs without AVX-512).
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

from albert_tf.lazy_imports import defer_keras_wrappers

# As in our scripts: `import keras` without scikit-learn (seqeval's dependency), ~1.5 s a process.
defer_keras_wrappers()

import pytest  # noqa: E402

from support.configs import TINY, tiny_config as make_tiny_config  # noqa: E402
from support.paths import DATA, FIXTURES  # noqa: E402

# Test processes on this 2-core machine: tests spread over this many pytest-xdist workers, each
# test file kept in one worker (its module fixtures are built once). `-n 0` (or `-p no:xdist`)
# runs everything in this process.
WORKERS = 2


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`python -m pytest tests` uses WORKERS processes unless `-n` says otherwise (set here
    rather than in addopts, so `-p no:xdist` still works)."""
    if (config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses") is None
            and "PYTEST_XDIST_WORKER" not in os.environ):
        config.option.numprocesses = WORKERS
        # A worker that crashes is not replaced: with loadfile scheduling a replaced worker can
        # wait forever (pytest-xdist#784), and CI then ran out of time instead of naming the test.
        if config.getoption("maxworkerrestart") is None:
            config.option.maxworkerrestart = 0
        if config.getoption("dist") == "no":
            config.option.dist = "loadfile"
            config.option.loadscopereorder = False  # SLOW_FILES' order instead


def pytest_configure(config):
    """TensorFlow's set-up and the fixtures that need it (support/tf_session.py) in every
    process that runs tests; pytest-xdist's controller runs none, so it never imports TensorFlow."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    config.pluginmanager.import_plugin("support.tf_session")


# The files that take 8 s or more (measured with --durations, 2026-11-28; the files added on
# 2026-12-05 placed by their single-process durations that day, at load 2-3), longest first, so
# that no worker is left running a long file at the end; the other files follow in collection
# order. Only a scheduling hint: a file missing here just starts later. test_serving_onnx.py
# stands for the session's shared HF export (support/hf_exports.py), whichever file makes it.
SLOW_FILES = ("test_source_export.py", "test_training_runtime.py", "test_hub_interface.py",
              "test_export_saved_model_script.py", "test_create_pretraining_data.py",
              "test_run_pretraining.py", "test_without_tensorflow_text.py",
              "test_squad_export.py", "test_paper_run.py", "test_run_classifier.py",
              "test_run_squad.py", "test_demo_next_steps.py",
              "test_serving_onnx.py", "test_serving_onnx_text.py", "test_serving_publish.py",
              "test_serving_encoder.py", "test_serving_onnx_tagger.py",
              "test_serving_openvino_text.py", "test_serving_openvino_tagger.py",
              "test_serving_wordpiece_text.py",
              "test_classification_windows.py", "test_demo_run.py", "test_text_preprocessor.py",
              "test_models_encoder.py", "test_serving_tflite.py",
              "test_classification_text_classifier.py", "test_serving_lite.py",
              "test_token_classifier_api.py", "test_classification_task.py",
              "test_keras_native.py", "test_classification_multi_label.py",
              "test_classification_export.py", "test_entry_point_errors.py",
              "test_optimization.py", "test_run_ner.py",
              "test_training_loop.py", "test_race_export.py", "test_serving_predictor.py",
              "test_commands.py", "test_serving_preprocessing.py", "test_models_base.py",
              "test_classification_files_task.py", "test_export_checkpoints.py", "test_cli.py",
              "test_serving_saved_model.py", "test_run_race.py", "test_parallel.py",
              "test_weights_tf1_checkpoint.py", "test_text_classifier_keras.py",
              "test_beam_pipeline.py", "test_text_wordpiece.py", "test_pretraining_task.py",
              "test_serving_bad_inputs.py", "test_training_health.py")


def pytest_collection_modifyitems(config, items):
    if "PYTEST_XDIST_WORKER" in os.environ:  # every worker sorts alike: the same collection
        rank = {name: i for i, name in enumerate(SLOW_FILES)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# .ci/run installs every extra and sets ALBERT_TF_CI=1: there a test skipped for want of one
# (its reason names the extra, "pip install -e .[test]") fails, so CI never skips it silently.
_EXTRA = re.compile(r"\[(?:beam|test|paper|onnx|openvino|onnx,openvino|search)\]")


def _fail_skips_for_extras(report):
    if os.environ.get("ALBERT_TF_CI") and report.skipped and _EXTRA.search(str(report.longrepr)):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which installs every extra: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_skips_for_extras(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skips_for_extras(outcome.get_result())


def _require(path):
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    return path


@pytest.fixture(scope="session")
def fixtures_dir():
    return _require(FIXTURES)


@pytest.fixture(scope="session")
def data_dir():
    return _require(DATA)


@pytest.fixture(scope="session")
def spm_model(fixtures_dir):
    return str(fixtures_dir / "spm" / "spm.model")


@pytest.fixture(scope="session")
def pretrained_folder(tmp_path_factory, spm_model):
    """A tiny pretraining output_dir with spread weights (support.released_model), read only:
    the fill-mask and embeddings tests share it."""
    from support.released_model import write_model_folder

    return write_model_folder(tmp_path_factory.mktemp("pretrained"), spm_model, spread_seed=5)


@pytest.fixture()
def tiny_config():
    """support.configs.TINY as an AlbertConfig (with overrides: support.configs.tiny_config)."""
    return make_tiny_config()


@pytest.fixture()
def tiny_batch():
    """Two rows of 12 tokens (the second padded after 9), with what every head reads besides
    the encoder inputs: `masked_lm_positions` (pretrainer) and `p_mask` (SQuAD v2)."""
    import numpy as np

    batch, length = 2, 12
    rng = np.random.default_rng(0)
    mask = np.ones((batch, length), "int32")
    mask[1, 9:] = 0
    p_mask = np.zeros((batch, length), "int32")
    p_mask[:, 1:4] = 1
    p_mask[1, 9:] = 1
    return {"input_ids": rng.integers(5, TINY["vocab_size"], (batch, length)).astype("int32"),
            "input_mask": mask,
            "segment_ids": (np.arange(length) >= 6).astype("int32")[None].repeat(batch, 0),
            "masked_lm_positions": np.array([[1, 2, 0], [3, 7, 0]], "int32"),
            "p_mask": p_mask}
