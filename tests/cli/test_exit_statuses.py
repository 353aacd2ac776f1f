"""Exit statuses beyond 0, 1 and 2: a reader that went away, an internal error."""

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


def test_an_internal_error_keeps_its_traceback_and_exits_70_not_the_findings_status() -> None:
    # A Filter that raises stands for any bug: explain's engine made to fail.
    program = (
        "import topospread.engine.explain as engine\n"
        "def failing(*args, **kwargs):\n"
        "    raise RuntimeError('boom in filter')\n"
        "engine.explain = failing\n"
        "from topospread.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, "explain", "--example", "one-constraint"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 70
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "topospread: internal error: RuntimeError: boom in filter (a bug in topospread or in a "
        "plugin; the traceback above is for a report)"
    )
