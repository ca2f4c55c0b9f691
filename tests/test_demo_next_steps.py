"""docs/demo.md's next steps, run as written (not only parsed) against the session's small demo
folder (support/demo_folder.py), in a folder where `albert_demo/` is that demo's: each command
of ours in the page's "Next steps" shell block, its Python block, and the Python call the demo
prints last. They exit 0 and end with their closing summary (the gist, no JSON dump)."""

from __future__ import annotations

import csv
import json
import re
import shlex

import pytest

from albert_tf.demo.run import next_steps
from support.demo_folder import FOLDER, shared_demo
from support.entry_points import run_entry_point
from support.paths import REPO

PAGE = REPO / "docs" / "demo.md"
SECTION = "## Next steps with the demo's models"
SENTENCE = "Return the absolute value of a number."


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    return shared_demo(tmp_path_factory)


@pytest.fixture()
def workspace(demo, tmp_path, monkeypatch):
    """A folder holding albert_demo/ (the session's, linked) as the user's would."""
    (tmp_path / FOLDER).symlink_to(demo["root"] / FOLDER, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _blocks(lang: str) -> list:
    text = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[1]
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _commands(block: str) -> list:
    lines = block.replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.strip() and not line.startswith("#")]


def _labels(demo) -> set:
    with open(demo["root"] / FOLDER / "corpus" / "task" / "train.tsv", encoding="utf-8") as f:
        return {row["label"] for row in csv.DictReader(f, delimiter="\t")}


def test_the_pages_commands_run_as_written(demo, workspace):
    commands = _commands(_blocks("bash")[0])
    assert [c[0] for c in commands] == ["docker", "python", "python", "python"]
    ran = {}
    for command in commands[1:]:
        args = command[1:]
        script, argv = (args[0], args[1:]) if args[0] != "-m" else ("-m", args[1:])
        done = run_entry_point(script, argv)
        assert done.returncode == 0, (command, done.stderr[-3000:])
        ran[args[0] if args[0] != "-m" else args[1]] = done.stdout.splitlines()
    # export: the gist names each SavedModel it wrote, then the fresh-process check
    export = ran["export_saved_model.py"]
    assert export[0].startswith("exported ") and export[0].endswith(" to demo_exports:")
    assert export[1:-1] == [f"  {name:<13}  {workspace / 'demo_exports' / name / '1'}"
                            for name in ("encoder", "preprocessing", "classifier")], export
    assert export[-1].startswith("each checked in a fresh process against the Keras model")
    # fine-tuning without --max_seq_length: the pretrained folder's 128 positions, not 512
    task = workspace / "out" / "demo_task"
    assert ran["run_classifier.py"][0] == (f"model folder: out/demo_task "
                                           "(--init_checkpoint=out/demo_task alone serves it)")
    assert re.fullmatch(r"best eval_accuracy \d\.\d{4} at step 300 \(out/demo_task/"
                        r"eval_results.json\)", ran["run_classifier.py"][1]), ran
    key = json.loads((task / "tsv_train.tf_record.key.json").read_text())
    assert key["key"]["max_seq_length"] == 128
    assert (workspace / "demo_hf" / "config.json").is_file()


def test_the_pages_python_block_and_the_demos_last_call_run(demo, workspace):
    labels = _labels(demo)
    namespace = {}
    exec(compile(_blocks("python")[0], f"{PAGE.name}:python", "exec"), namespace)
    assert namespace["names"][0] in labels and namespace["probabilities"].shape == (1, 2)
    assert set(namespace["classifier"].label_names) == labels
    # the closing line of the demo: python -c "<code>"
    line = next_steps(demo["options"], SENTENCE).splitlines()[-1]
    python, flag, code = shlex.split(line)
    assert (python, flag) == ("python", "-c")
    printed = []
    exec(compile(code, "<demo's last line>", "exec"), {"print": printed.append})
    assert len(printed) == 1 and len(printed[0]) == 1 and printed[0][0] in labels
