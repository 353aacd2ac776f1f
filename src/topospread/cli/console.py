"""The console of a command's text output (rich), apart from the helpers every command
imports: ``topospread scheduler`` and the webhook print no tables and do not import rich."""

from __future__ import annotations

import os
import sys

from rich.console import Console

from topospread.cli.shared import EXIT_BROKEN_PIPE

__all__ = ["OutputConsole", "text_console"]


class OutputConsole(Console):
    """rich's Console for standard output, exiting :data:`EXIT_BROKEN_PIPE` when the pipe
    closes (rich's own choice is 1)."""

    def on_broken_pipe(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_BROKEN_PIPE)


def text_console(piped_width: int, *, soft_wrap: bool = True) -> Console:
    """The console for a command's text output: the terminal's width, or ``piped_width``
    when output is piped or captured (wide enough that tables keep whole names)."""
    console = OutputConsole(highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal:
        console = OutputConsole(highlight=False, soft_wrap=soft_wrap, width=piped_width)
    return console
