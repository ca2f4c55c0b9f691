"""tensorflow-text is optional: no install requirement where it has no wheel, and in a Python
where `tensorflow_text` cannot be imported the scripts train, evaluate, predict and export (ids
signatures only, with a one-line notice), or refuse an explicit raw-text request with one
`error:` line. The scripts run in subprocesses whose PYTHONPATH starts with a `tensorflow_text`
package that raises ModuleNotFoundError, as a missing install does."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf
from packaging.markers import default_environment
from packaging.requirements import Requirement

from support.configs import GLUE_TINY
from support.paths import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

INSTALL = "pip install tensorflow-text"
NO_WHEEL = {"win32": dict(sys_platform="win32", platform_system="Windows", os_name="nt",
                          platform_machine="AMD64"),
            "linux-aarch64": dict(sys_platform="linux", platform_system="Linux",
                                  platform_machine="aarch64")}
LINUX_X86 = dict(sys_platform="linux", platform_system="Linux", platform_machine="x86_64")


def _required(lines, environment):
    env = {**default_environment(), **environment}
    names = []
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(env):
            names.append(requirement.name)
    return names


def _metadata_requirements():
    if tomllib is None:
        pytest.skip("reading pyproject.toml needs Python 3.11 (tomllib)")
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = [line.split("#")[0].strip()
                    for line in (REPO / "requirements.txt").read_text("utf-8").splitlines()]
    return {"pyproject": project["dependencies"],
            "requirements.txt": [line for line in requirements if line]}


@pytest.mark.parametrize("platform", sorted(NO_WHEEL))
def test_no_dependency_requires_tensorflow_text_where_it_has_no_wheel(platform):
    for source, lines in _metadata_requirements().items():
        required = _required(lines, NO_WHEEL[platform])
        assert "tensorflow-text" not in required, source
        assert "tensorflow" in required, source
        assert "tensorflow-text" in _required(lines, LINUX_X86), source


@pytest.fixture(scope="module")
def no_text_env(tmp_path_factory):
    shim = tmp_path_factory.mktemp("no_tensorflow_text")
    (shim / "tensorflow_text").mkdir()
    (shim / "tensorflow_text" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'tensorflow_text'\", "
        "name='tensorflow_text')\n")
    path = os.pathsep.join(p for p in (str(shim), str(REPO), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")


def _ner_files(data_dir, folder):
    btc = data_dir / "ner" / "btc"
    if not btc.exists():
        return None
    blocks = btc.joinpath("train.conll").read_text("utf-8").strip().split("\n\n")
    (folder / "train.conll").write_text("\n\n".join(blocks[:40]) + "\n", "utf-8")
    (folder / "dev.conll").write_text("\n\n".join(blocks[40:60]) + "\n", "utf-8")
    return folder


@pytest.fixture(scope="module")
def runs(no_text_env, data_dir, spm_model, tmp_path_factory):
    """Every command of this file, run in one process without tensorflow_text (one TensorFlow
    start-up instead of five): {name: result}, and the run's folder."""
    root = tmp_path_factory.mktemp("no_text")
    config = root / "albert_config.json"
    config.write_text(json.dumps(GLUE_TINY))
    output = root / "output"
    import_code = ("import albert_tf, albert_tf.text, albert_tf.serving.preprocessing, "
                   "albert_tf.tasks.classification.export, albert_tf.tasks.squad.export\n"
                   "from albert_tf.text import optional, AlbertPreprocessor\n"
                   "assert not optional.available()\n"
                   "try:\n    AlbertPreprocessor(%r, 16)\nexcept ImportError as e:\n    print(e)\n"
                   % str(spm_model))
    export = [f"--init_checkpoint={output}", f"--albert_config_file={config}",
              "--max_seq_length=32"]
    commands = [
        ("import", "-c", [import_code]),
        ("mrpc", "run_classifier.py", [
            f"--data_dir={data_dir / 'glue'}", "--task_name=MRPC", f"--albert_config_file={config}",
            f"--spm_model_file={spm_model}", f"--output_dir={output}", "--max_seq_length=32",
            "--do_train", "--do_eval", "--do_predict", f"--export_dir={root / 'export'}",
            "--threshold_to_export=0.0", "--train_step=4", "--save_checkpoints_steps=2",
            "--train_batch_size=8", "--eval_batch_size=64", "--predict_batch_size=64",
            "--seed=1"]),
        ("export", "export_saved_model.py", [*export, f"--export_dir={root / 'exports'}",
                                             "--json"]),
        ("refused", "export_saved_model.py", [*export, f"--export_dir={root / 'refused'}",
                                              f"--spm_model_file={spm_model}"]),
    ]
    ner = _ner_files(data_dir, root)
    if ner is not None:
        commands.append(("ner", "run_ner.py", [
            f"--train_file={ner / 'train.conll'}", f"--dev_file={ner / 'dev.conll'}",
            f"--test_file={ner / 'dev.conll'}", f"--albert_config_file={config}",
            f"--spm_model_file={spm_model}", f"--output_dir={root / 'ner_output'}",
            "--max_seq_length=32", "--do_train", "--do_eval", "--do_predict",
            f"--export_dir={root / 'ner_export'}", "--train_step=2", "--save_checkpoints_steps=2",
            "--train_batch_size=8", "--eval_batch_size=32", "--predict_batch_size=32"]))
    request = root / "request.json"
    request.write_text(json.dumps([[name, script, [str(a) for a in argv]]
                                   for name, script, argv in commands]), "utf-8")
    done = subprocess.run([sys.executable, str(REPO / "tests" / "support" / "no_text_runs.py"),
                           str(request), str(root / "results.json")], env=no_text_env,
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results.json").read_text("utf-8"))
    return {name: subprocess.CompletedProcess([name], r["returncode"], r["stdout"], r["stderr"])
            for name, r in results.items()}, root


def test_import_works_and_the_in_graph_tokenizer_says_how_to_install(runs):
    done = runs[0]["import"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert INSTALL in done.stdout and "SentencePiece" in done.stdout


@pytest.fixture(scope="module")
def mrpc_run(runs):
    results, root = runs
    return root, root / "albert_config.json", results["mrpc"]


def test_run_classifier_fine_tunes_evaluates_predicts_and_exports(mrpc_run):
    root, _, done = mrpc_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    notices = [line for line in done.stderr.splitlines() if INSTALL in line]
    assert len(notices) == 1 and "serve_text" in notices[0]
    output = root / "output"
    assert "eval_accuracy" in (output / "eval_results.txt").read_text()
    assert (output / "test_results.tsv").exists()
    # Loaded here (tensorflow-text installed or not): the ids signature, no serve_text.
    export = tf.saved_model.load(str(root / "export" / "1"))
    assert set(export.signatures) == {"serving_default"}


def test_evaluations_go_to_tensorboard_beside_the_training_scalars(mrpc_run):
    root, _, done = mrpc_run
    assert done.returncode == 0, done.stderr[-3000:]
    output = root / "output"

    def scalars(folder):
        found = {}
        for name in os.listdir(folder):
            if name.startswith("events.out.tfevents"):
                for event in tf.compat.v1.train.summary_iterator(str(folder / name)):
                    for value in event.summary.value:
                        found.setdefault(value.tag, []).append(event.step)
        return found

    training, evaluation = scalars(output), scalars(output / "eval")
    assert "loss" in training and "learning_rate" in training
    assert evaluation["eval_accuracy"] == [2, 4] and evaluation["eval_loss"] == [2, 4]


def test_export_saved_model_writes_the_encoder(runs):
    done = runs[0]["export"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert os.path.isdir(result["encoder"]) and os.path.isdir(result["classifier"])
    assert "preprocessing" not in result
    assert set(tf.saved_model.load(result["encoder"]).signatures) == {"serving_default",
                                                                      "tokens"}


def test_an_explicit_raw_text_request_is_one_error_line(runs):
    results, root = runs
    done = results["refused"]
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --spm_model_file") and INSTALL in lines[0]
    assert not (root / "refused").exists()


def test_run_ner_trains_evaluates_predicts_and_exports(runs, data_dir):
    results, root = runs
    if "ner" not in results:
        pytest.skip(f"needs {data_dir / 'ner' / 'btc'}")
    done = results["ner"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    notices = [line for line in done.stderr.splitlines() if INSTALL in line]
    assert len(notices) == 1 and "serve_text" in notices[0]
    assert (root / "ner_output" / "test_predictions.conll").exists()
    export = tf.saved_model.load(str(root / "ner_export" / "1"))
    assert set(export.signatures) == {"serving_default"}
