"""The command-line programs: one module per top-level script, holding its flags and `main`.

After `pip install albert-tf` they are commands (`[project.scripts]` in pyproject.toml):

    albert-create-pretraining-data  albert-run-pretraining  albert-run-classifier
    albert-run-squad  albert-run-race  albert-run-ner  albert-export-saved-model
    albert-export-checkpoints  albert-convert

In a clone, the top-level scripts (`run_classifier.py`, ...) call the same `run()`, so a
command and its script take the same flags. A module defines its flags when `run()` is called
(importing one registers nothing); `import albert_tf` quiets TensorFlow's start-up lines first
when the program is one of these (`cli.is_entry_point`).
"""

from __future__ import annotations

import sys

from albert_tf import cli

# Flags belong to the program being run (`--helpshort` lists them under sys.argv[0]).
MAIN = "__main__"


def start(doc: str, main, required=(), argv=None) -> None:
    """`cli.run(main)` with the program's help text: absl's `--help` prints the `__main__`
    module's docstring, which for an installed command is pip's generated wrapper's (none)."""
    program = sys.modules.get("__main__")
    if program is not None:
        program.__doc__ = doc
    cli.run(main, required=required, argv=argv)
