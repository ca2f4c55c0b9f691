"""The flags a script defines and their defaults, as its `--helpshort` lists them."""

import re

from support.entry_points import run_entry_point


def script_flag_defaults(script: str) -> dict:
    """{flag name: default as a Python value (None when it has none)} of REPO/script."""
    text = run_entry_point(script, ["--helpshort"]).stdout
    found = {}
    for block in re.split(r"\n  --", text)[1:]:
        match = re.match(r"(\[no\])?(\w+):", block)
        if match is None:
            continue
        shown = re.search(r"\(default: '([^']*)'\)", block)
        value = shown.group(1) if shown else None
        if value is not None:
            if match.group(1):
                value = value == "true"
            elif "(an integer)" in block:
                value = int(value)
            elif "(a number)" in block:
                value = float(value)
        found[match.group(2)] = value
    return found
