"""Every fenced code block of README.md and docs/*.md, checked against the code, so a snippet that
drifts from it fails here:

- `bash`: `bash -n` parses it, and each command of ours has its flags parsed in-process against the
  flags the program defines (an unknown, renamed or mistyped flag fails; `...` and `[...]` are a
  page's elisions). Other programs (pip, docker, ...) must be in EXTERNAL.
- `python`: run, a page's blocks in order in one namespace as a notebook runs them, in a folder
  holding the files they name (FILES) and given the data they assume (INPUTS). Calls that train
  or export (seconds each) are bound against the real method's signature instead of run
  (STAND_INS), and `albert_tf.preset` gives a tiny config (ALBERT-base costs seconds here). A
  block that cannot run here carries `<!-- no-run: why -->` on the line before; the reason must
  name a test that runs those calls or what the block needs (NEEDS), and the block's own imports
  still run.
- `json`, `csv`, `tsv`: parsed; `text`: console output, not checked. Every block has a language.
- A command in a code span of a line (`python ...`, `albert-...`) is checked as a shell block's;
  a relative link must reach its file and heading.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import dataclasses
import importlib
import importlib.util
import inspect
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from absl import flags

from support.entry_points import run_entry_point
from support.paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = ("bash", "python", "json", "csv", "tsv", "text")
FENCE = re.compile(r"^( *)```(\S*)\s*$")
NO_RUN = re.compile(r"^\s*<!--\s*no-run:(.*?)-->\s*$")
# What a no-run block may need instead of naming the test that runs its calls.
NEEDS = ("TPU", "GPU", "several machines", "TF Serving", "Dataflow")
# Programs that are not ours: only `bash -n` checks their lines.
EXTERNAL = {"docker", "curl", "tensorboard", "saved_model_cli", "pip"}


@dataclasses.dataclass
class Block:
    page: str
    line: int
    lang: str
    text: str
    no_run: str | None

    @property
    def id(self):
        return f"{self.page}:{self.line}"


def read_blocks(path) -> list:
    blocks, lines = [], path.read_text(encoding="utf-8").split("\n")
    name = path.relative_to(REPO).as_posix()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, lang, start = len(match.group(1)), match.group(2), i
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = NO_RUN.match(before)
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i].lstrip())
            i += 1
        blocks.append(Block(name, start + 1, lang, "\n".join(body) + "\n",
                            marker.group(1).strip() if marker else None))
        i += 1
    return blocks


BLOCKS = [block for page in PAGES for block in read_blocks(page)]


def of(lang):
    return [pytest.param(b, id=b.id) for b in BLOCKS if b.lang == lang]


# ------------------------------------------------------------------------------- every block

def test_every_block_has_a_language_and_markers_sit_on_python_blocks():
    untagged = [b.id for b in BLOCKS if b.lang not in LANGUAGES]
    assert not untagged, f"blocks without a known language ({', '.join(LANGUAGES)}): {untagged}"
    for page in PAGES:
        markers = sum(bool(NO_RUN.match(line)) for line in page.read_text().split("\n"))
        placed = [b for b in read_blocks(page) if b.no_run is not None]
        assert markers == len(placed), f"{page.name}: a no-run marker not right before a block"
        for block in placed:
            assert block.lang == "python", f"{block.id}: no-run marks Python blocks only"
            reason = block.no_run
            tests = re.findall(r"tests/\w+\.py", reason)
            assert tests or any(need in reason for need in NEEDS), (
                f"{block.id}: say which test runs these calls (tests/...py) or what it needs "
                f"({', '.join(NEEDS)}): {reason!r}")
            for test in tests:
                assert (REPO / test).is_file(), f"{block.id}: {test} does not exist"


def test_pages_teach_the_real_module_paths():
    """The alias modules (ARCHITECTURE.md: "aliases of old documented paths") are not taught."""
    alias = re.compile(r"albert_tf\.(convert|checkpoint|lite|export)\b|from albert_tf import "
                       r"[^\n]*\bcheckpoint\b")
    found = [f"{p.name}:{n}: {line.strip()}" for p in PAGES
             for n, line in enumerate(p.read_text().split("\n"), 1) if alias.search(line)]
    assert not found, "old module paths:\n" + "\n".join(found)


def test_readme_starts_with_the_two_commands_and_stays_short():
    text = (REPO / "README.md").read_text()
    assert len(text.split("\n")) <= 250
    first = read_blocks(REPO / "README.md")[0].text
    assert "python -m albert_tf.demo" in first and "python -m pytest tests" in first


def _anchors(path) -> set:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    text = path.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_links_reach_their_page_and_heading():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


# --------------------------------------------------------------------------------- data blocks

def test_data_blocks_parse():
    for block in BLOCKS:
        if block.lang == "json":
            json.loads(block.text)
        elif block.lang in ("csv", "tsv"):
            rows = list(csv.reader(io.StringIO(block.text),
                                   delimiter="," if block.lang == "csv" else "\t",
                                   quoting=csv.QUOTE_MINIMAL if block.lang == "csv"
                                   else csv.QUOTE_NONE))
            widths = {len(row) for row in rows if row}
            assert widths == {len(rows[0])}, f"{block.id}: rows of {widths} fields"


# -------------------------------------------------------------------------------- shell blocks

def test_shell_blocks_parse(tmp_path):
    scripts = []
    for n, block in enumerate(b for b in BLOCKS if b.lang == "bash"):
        path = tmp_path / f"{n}.sh"
        path.write_text(block.text)
        scripts.append((str(path), block.id))
    done = subprocess.run(["bash", "-c", 'for f; do bash -n "$f" 2>&1 || echo "FAILED $f"; done',
                           "bash", *[s for s, _ in scripts]], capture_output=True, text=True)
    names = dict(scripts)
    failed = [names[line.split()[1]] for line in done.stdout.splitlines()
              if line.startswith("FAILED ")]
    assert not failed, f"bash -n fails on {failed}:\n{done.stdout}"


def commands(text) -> list:
    """The simple commands of a shell block as token lists (continuations joined, comments and
    `NAME=value` prefixes dropped, split at `&&`, `||`, `;` and `|`)."""
    out, pending = [], ""
    for line in text.replace("\\\n", " ").split("\n"):
        pending += line + "\n"
        try:
            tokens = shlex.split(pending, comments=True)
        except ValueError:  # a quote that goes on over the next line
            continue
        pending = ""
        command = []
        for token in tokens + [";"]:
            if token in ("&&", "||", ";", "|"):
                while command and re.match(r"^[A-Za-z_]\w*=", command[0]):
                    command.pop(0)
                if command:
                    out.append(command)
                command = []
            else:
                command.append(token)
    assert not pending, f"an unclosed quote: {pending!r}"
    return out


def arguments(tokens) -> list:
    """A page's elisions out: `...` goes, `[--flag value]` (an optional flag) is kept."""
    return [t.strip("[]") for t in tokens if t.strip("[]") and t != "..."]


def _parse_only(main, required=(), argv=None):
    """`cli.run` with nothing run: the flags parsed as the program parses them (required flags
    are not asked for, as a page leaves them out with `...`); a positional argument fails."""
    argv = sys.argv if argv is None else argv
    try:
        rest = flags.FLAGS(argv)
    except flags.Error as error:
        sys.exit(f"error: {error}")
    if rest[1:]:
        sys.exit(f"error: stray arguments {rest[1:]}")


SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
COMMANDS = SCRIPTS["scripts"]
EXTRAS = SCRIPTS["optional-dependencies"]


def script_of(command) -> list:
    """`albert-x` as the program it runs: `python x.py` or `python -m albert_tf.weights`."""
    module = COMMANDS[command].split(":")[0].rsplit(".", 1)[1]
    return ["-m", "albert_tf.weights"] if module == "convert" else [f"{module}.py"]


def check_command(tokens, monkeypatch):
    program, args = tokens[0], tokens[1:]
    if program == "timeout":
        return check_command(args[1:], monkeypatch)
    if program.startswith("albert-"):
        assert program in COMMANDS, f"no installed command {program}"
        return check_ours(script_of(program) + args, monkeypatch)
    if program == "pip":
        for arg in args:
            extra = re.match(r"^\.\[(\w+)\]$", arg)
            assert extra is None or extra.group(1) in EXTRAS, f"no extra {arg} in pyproject.toml"
            if arg.endswith(".txt"):
                assert (REPO / arg).is_file(), arg
        return None
    if program in EXTERNAL:
        return None
    assert program in ("python", "python3"), f"unknown program {program!r}: add it to EXTERNAL"
    return check_ours(args, monkeypatch)


_CHECKED = set()  # a command that several pages name is parsed once


def check_ours(args, monkeypatch):
    if tuple(args) in _CHECKED:
        return None
    _check_ours(args, monkeypatch)
    _CHECKED.add(tuple(args))
    return None


def _check_ours(args, monkeypatch):
    if args[0] == "-c":
        return compile(args[1], "<python -c>", "exec")
    if args[:2] == ["-m", "pytest"]:
        assert all((REPO / a).exists() for a in args[2:] if not a.startswith("-")), args
        return None
    if args[0] == "-m" and args[1] == "albert_tf.evaluate_squad":
        return check_evaluate_squad(arguments(args[2:]), monkeypatch)
    if args[0] == "-m":
        assert args[1].startswith("albert_tf."), f"not our module: {args[1]}"
        program, rest = ["-m", args[1]], args[2:]
        if not _has_flags(args[1]):  # e.g. param_counts: running it would cost seconds
            assert not arguments(rest), f"{args[1]} takes no arguments: {rest}"
            return None
    else:
        assert (REPO / args[0]).is_file(), f"no script {args[0]}"
        program, rest = [args[0]], args[1:]
        if args[0].startswith("bench/"):
            return check_bench_flags(args[0], arguments(rest))
    monkeypatch.setattr("albert_tf.cli.run", _parse_only)
    script, *first = program
    result = run_entry_point(script, first + arguments(rest))
    assert result.returncode == 0, f"{' '.join(program)}: {result.stderr.strip()}"
    return None


def _has_flags(module) -> bool:
    """Whether `python -m module` parses a command line (our `cli.run` or absl's `app.run`)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"no module {module}"
    if spec.submodule_search_locations:  # a package: its __main__ runs
        spec = importlib.util.find_spec(module + ".__main__")
        assert spec is not None, f"{module} is not runnable (no __main__)"
    source = Path(spec.origin).read_text(encoding="utf-8")
    return "cli.run(" in source or "app.run(" in source


def check_evaluate_squad(args, monkeypatch):
    from albert_tf import evaluate_squad

    seen = []
    monkeypatch.setattr(evaluate_squad, "evaluate_files", lambda *a: seen.append(a) or {})
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            evaluate_squad.main(args)
        except SystemExit as done:
            pytest.fail(f"evaluate_squad {args}: {err.getvalue()} {done}")
    assert seen


def check_bench_flags(script, args):
    """A benchmark's flags against the ones it defines (argparse or absl), read from its source."""
    tree = ast.parse((REPO / script).read_text())
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = getattr(node.func, "attr", "")
            if name == "add_argument":
                defined.add(str(node.args[0].value).lstrip("-"))
            elif name.startswith("DEFINE_"):
                defined.add(node.args[0].value)
                if name == "DEFINE_bool":
                    defined.add("no" + node.args[0].value)
    for arg in args:
        assert arg.startswith("--"), f"{script}: stray argument {arg}"
        assert arg[2:].split("=")[0] in defined, f"{script}: no flag {arg}"


@pytest.mark.parametrize("block", of("bash"))
def test_shell_block_flags(block, monkeypatch):
    for tokens in commands(block.text):
        check_command(tokens, monkeypatch)


# ------------------------------------------------------------------------------- Python blocks

# The files the blocks name, in the folder they run in: a released-style model folder (tiny
# random weights, the fixtures' SentencePiece model) wherever a page names ALBERT-base's.
FILES = {"albert_base": "model folder", "30k-clean.model": "spm model"}
# The data a page's blocks assume the user has.
TEXTS = ["Great phone, the battery lasts for days.", "It broke after a week.", "Does the job."]
INPUTS = {
    "train_texts": TEXTS, "train_labels": ["positive", "negative", "neutral"],
    "dev_texts": TEXTS, "dev_labels": ["positive", "negative", "neutral"],
    "texts": TEXTS, "labels": ["positive", "negative", "neutral"],
    "dev_sets": [["economy"], ["sport"], []],
    "sentences": [["Ada", "Lovelace", "visited", "London"]], "tags": [["B-PER", "I-PER", "O", "B-LOC"]],
    "dev_sentences": [["Ada", "Lovelace"]], "dev_tags": [["B-PER", "I-PER"]],
}
# Set before the block holding the key text.
BEFORE = {"validation_data=dev_dataset": lambda: {"dev_dataset": _dataset()}}


def _dataset():
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices((TEXTS, INPUTS["labels"])).batch(2)


def _tiny_preset(real):
    """`albert_tf.preset` as a tiny config (ALBERT-base takes seconds to build and run here);
    the preset's name is still looked up."""
    from albert_tf import AlbertConfig
    from support.configs import GLUE_TINY

    def preset(name, **overrides):
        real(name, **overrides)
        return AlbertConfig(**dict(GLUE_TINY, max_position_embeddings=128))
    return preset


# Classes whose calls train, export or need an exported file (5-10 s each): each call is bound
# against the real signature (a renamed method or keyword fails) and returns a sample instead.
STAND_INS = {
    "albert_tf.tasks.TextClassifier": {
        "fit": None, "evaluate": {"eval_accuracy": 1.0, "eval_loss": 0.1},
        "predict": (["positive"], np.array([[0.1, 0.2, 0.7]])), "export": "out/export/1"},
    "albert_tf.tasks.TokenClassifier": {
        "fit": None, "evaluate": {"eval_f1": 1.0}, "predict": [["B-PER", "I-PER", "O", "B-LOC"]],
        "export": "out/ner/export/1"},
    "albert_tf.serving.lite.LiteClassifier": {
        "classify": ["positive"], "predict": np.array([[0.3, 0.7]])},
    "albert_tf.serving.lite.LiteEncoder": {
        "encode": {"pooled_output": np.zeros((1, 32)), "sequence_output": np.zeros((1, 8, 32))}},
}


# Stand-in methods that run for real all the same: opening a model folder takes milliseconds,
# and a page's `from_pretrained("albert_base")` must find the folder (the snippet folder's
# albert_base/, a released layout), not fall back to or be refused as a preset.
RUN_FOR_REAL = {"from_pretrained"}


def _bind(cls, name, args, kwargs):
    """The call's arguments bound to `cls.name`'s signature: TypeError when they do not fit."""
    static = inspect.getattr_static(cls, name)  # AttributeError: no such method
    signature = inspect.signature(getattr(cls, name))
    if isinstance(static, (classmethod, staticmethod)):
        signature.bind(*args, **kwargs)
    else:
        signature.bind(None, *args, **kwargs)


class StandIn:
    """A class of STAND_INS (or one of its objects) with its methods bound, not run."""

    def __init__(self, cls, returns, instance=False):
        self._cls, self._returns, self._instance = cls, returns, instance

    def __call__(self, *args, **kwargs):
        assert not self._instance, f"{self._cls.__name__} object called"
        _bind(self._cls, "__init__", args, kwargs)
        return StandIn(self._cls, self._returns, instance=True)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if isinstance(inspect.getattr_static(self._cls, name), property):
            return self._returns[name]

        def call(*args, **kwargs):
            _bind(self._cls, name, args, kwargs)
            if name in RUN_FOR_REAL:  # opens the folder as a user's call would: a name taken
                getattr(self._cls, name)(*args, **kwargs)  # for a preset, a bad file, fail
            if name.startswith("from_"):
                return StandIn(self._cls, self._returns, instance=True)
            return self._returns[name]
        return call


@pytest.fixture(scope="module")
def snippet_folder(tmp_path_factory, spm_model):
    from support.released_model import write_model_folder

    folder = tmp_path_factory.mktemp("snippets")
    (folder / "albert_base").mkdir()
    write_model_folder(folder / "albert_base", spm_model)
    shutil.copy(spm_model, folder / "30k-clean.model")
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    return folder


def _imports_only(code):
    """The block's own `import albert_tf...` statements: a no-run block's names still exist."""
    tree = ast.parse(code)
    keep = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            and all(name.startswith("albert_tf") for name in
                    ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names]))]
    return ast.Module(body=keep, type_ignores=[])


PYTHON_PAGES = sorted({b.page for b in BLOCKS if b.lang == "python"})


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(page, snippet_folder, monkeypatch):
    for target, returns in STAND_INS.items():
        module, name = target.rsplit(".", 1)
        real = getattr(importlib.import_module(module), name)
        monkeypatch.setattr(importlib.import_module(module), name, StandIn(real, returns))
    import albert_tf

    monkeypatch.setattr(albert_tf, "preset", _tiny_preset(albert_tf.preset))
    monkeypatch.chdir(snippet_folder)
    namespace = {"__name__": "__snippet__", **INPUTS}
    for block in (b for b in BLOCKS if b.page == page and b.lang == "python"):
        code = compile(block.text, block.id, "exec")
        if block.no_run is not None:
            exec(compile(_imports_only(block.text), block.id, "exec"), {})
            continue
        for key, values in BEFORE.items():
            if key in block.text:
                namespace.update(values())
        exec(code, namespace)


# A command in a line's code span (`python ...`, `albert-...`) is checked as a block's is.
INLINE = re.compile(r"`((?:python3? (?:-m albert_tf\.|-m pytest|-c |[\w/]+\.py)|albert-[a-z])[^`]*)`")


def test_inline_commands_parse(monkeypatch):
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
            for command in INLINE.findall(line):
                try:
                    for tokens in commands(command):
                        check_command(tokens, monkeypatch)
                except (AssertionError, ValueError) as error:
                    raise AssertionError(f"{page.name}:{n}: `{command}`: {error}") from error
