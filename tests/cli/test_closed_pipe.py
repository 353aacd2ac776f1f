"""Output to a reader that went away (``topospread ... | head -1``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "--example", "one-constraint"),  # rich's console
        ("simulate", "--list"),  # click.echo
    ],
    ids=["rich", "click"],
)
def test_a_closed_pipe_exits_141_not_the_findings_status(args: tuple[str, ...]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from topospread.cli import main; main()", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr
