"""Helpers of the bad-input tests (issue 27): a call run as an entry point runs it, in process."""

import pytest


def one_error_line(call, capsys) -> str:
    """Runs `call()` as the `main` of an entry point (`cli.run`), in this process; asserts that it
    ends with exit status != 0 and exactly one `error: ...` line on stderr (no traceback), and
    returns that line."""
    from albert_tf import cli

    def main(argv):
        del argv
        call()

    capsys.readouterr()
    with pytest.raises(SystemExit, match=r"^[12]$") as ended:
        cli.run(main, argv=["prog"])
    assert ended.value.code not in (0, None)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]
