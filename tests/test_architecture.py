"""The package's shape, read from its source (no import): one-way layers, no import circles,
imports at the top of modules (the few inside functions say why), and the alias modules that keep
old documented paths working are used by nobody inside the package."""

import ast
import pathlib
import re

import pytest

from support.paths import REPO

PACKAGE = REPO / "albert_tf"

# Lowest first. A module may import its own layer or lower ones (ARCHITECTURE.md draws this).
LAYERS = [
    ("base", ["errors", "tf_errors", "io_utils", "config", "run_config", "cli_flags", "labels",
              "lazy_imports"]),
    ("tokenizers", ["tokenization", "text"]),
    ("model", ["layers", "models", "optimization", "param_counts"]),
    ("weights", ["weights"]),
    ("data", ["data", "pretraining_data"]),
    ("training", ["training"]),
    ("serving", ["serving"]),
    ("tasks", ["tasks"]),
    ("applications", ["source_export", "demo", "cli", "entry_points", "evaluate_squad",
                      "train_spm", "train_vocab", "smoke", "paper", "fill_mask", "search"]),
]
# Old paths kept for users (README); nothing inside the package imports them.
ALIASES = ["checkpoint", "convert", "export", "lite"]
MAX_IMPORTS_IN_FUNCTIONS = 15


def _modules() -> dict:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def _imported(module: str, node) -> list:
    """The package modules an import statement names (relative imports resolved)."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            if not str(MODULES[module]).endswith("__init__.py"):
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        names = [name] + [f"{name}.{alias.name}" for alias in node.names]
    else:
        names = [alias.name for alias in node.names]
    return [n for n in names if n in MODULES]


def _imports():
    """(module, imported module, line, inside a function) for every package import."""
    rows = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(module, node):
                    if target != module and not module.startswith(target + "."):
                        rows.append((module, target, node.lineno, id(node) in inside))
    return rows


IMPORTS = _imports()


def _layer(module: str):
    if module.endswith(".__main__"):  # `python -m` entry points are applications
        return len(LAYERS) - 1
    top = _top(module)
    for index, (_, tops) in enumerate(LAYERS):
        if top in tops:
            return index
    return None


def test_every_module_has_a_layer():
    homeless = sorted({_top(m) for m in MODULES if m != "albert_tf" and _layer(m) is None
                       and _top(m) not in ALIASES})
    assert not homeless, f"add these to LAYERS (and ARCHITECTURE.md): {homeless}"


def test_no_import_runs_back_up():
    upward = [f"{m}:{line} imports {t}" for m, t, line, _ in IMPORTS
              if _top(m) not in ALIASES and _layer(m) is not None and _layer(t) is not None
              and _layer(t) > _layer(m)]
    assert not upward, "\n".join(upward)


def test_nothing_inside_the_package_imports_an_alias():
    users = [f"{m}:{line} imports {t}" for m, t, line, _ in IMPORTS
             if _top(t) in ALIASES and _top(m) not in ALIASES]
    assert not users, "\n".join(users)


def test_no_import_circles():
    edges = {m: set() for m in MODULES}
    for m, t, _, _ in IMPORTS:
        if not str(MODULES[t]).endswith("__init__.py"):
            edges[m].add(t)
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, circles


def test_imports_inside_functions_are_few_and_say_why():
    inner = [(m, line) for m, _, line, inside in IMPORTS if inside]
    unique = sorted(set(inner))
    assert len(unique) <= MAX_IMPORTS_IN_FUNCTIONS, "\n".join(f"{m}:{line}" for m, line in unique)
    silent = []
    for module, line in unique:
        lines = MODULES[module].read_text(encoding="utf-8").splitlines()
        nearby = lines[max(0, line - 3):line]
        if not any(re.search(r"#\s*\S", text) for text in nearby):
            silent.append(f"{module}:{line}")
    assert not silent, "an import inside a function needs a comment saying why: " + ", ".join(silent)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.count(".") >= 1))
def test_module_is_short(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{MODULES[module]} has {lines} lines: does it hold two things?"
