"""What every command shares: exit statuses, the one-line error report, the console.

Command modules import this module and :mod:`topospread.cli.options`; neither imports a
command module, so the commands stand side by side with no import between them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence, Sized
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from topospread.errors import InputError, TopospreadError, UnsupportedError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FINDINGS",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "exit_with_error",
    "refuse_stdin_twice",
    "report_error",
    "reports_errors",
    "require_workload",
    "settle_loaded_objects",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FINDINGS = 1
"""A command found what it checks for: audit's and lint's findings at ``--fail-on``, a
rebalance plan that cannot balance, a capacity plan that is infeasible."""
EXIT_INPUT = 2
"""Bad input: options, files, configuration, an unreachable cluster."""

EXIT_INTERNAL = 70
"""An internal error: a bug, in topospread or in a plugin (sysexits' EX_SOFTWARE)."""

EXIT_BROKEN_PIPE = 141
"""The reader of standard output went away before the output ended (``| head -1``): 128 +
SIGPIPE, as a shell reports a command that SIGPIPE ended. Not 1, which says findings or a
Pending pod."""


def report_error(exc: TopospreadError) -> None:
    """Report ``exc`` on stderr: one line per problem of an :class:`InputError`."""
    if isinstance(exc, InputError):
        for line in exc.lines():
            click.echo(line, err=True)
    else:
        click.echo(str(exc), err=True)


def exit_with_error(exc: TopospreadError) -> NoReturn:
    """:func:`report_error`, then exit with :data:`EXIT_INPUT`."""
    report_error(exc)
    sys.exit(EXIT_INPUT)


def reports_errors(command: F) -> F:
    """Turn our exceptions into one readable message on stderr and exit status 2 (an
    :class:`UnsupportedError` is worded ``SOURCE: unsupported: MESSAGE``)."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except UnsupportedError as exc:
            where = f"{exc.source}: " if exc.source else ""
            click.echo(f"{where}unsupported: {exc.message}", err=True)
            sys.exit(EXIT_INPUT)
        except TopospreadError as exc:
            exit_with_error(exc)

    return wrapper  # type: ignore[return-value]


def refuse_stdin_twice(inputs: Mapping[str, Path | Sequence[Path] | None]) -> None:
    """Standard input (``-``) can be read once: given to two options (or twice to one),
    the second would read nothing."""
    from topospread.io.reader import STDIN  # not at import: every command's --help loads this

    readers = [
        option
        for option, value in inputs.items()
        for path in (value if isinstance(value, list | tuple) else [value])
        if path is not None and str(path) == STDIN
    ]
    if len(readers) > 1:
        raise click.UsageError(
            f"standard input (-) is given {len(readers)} times ({', '.join(readers)}); "
            "it can be read once"
        )


def require_workload(workload: str | None, workloads: Sized) -> None:
    """Refuse a WORKLOAD argument that names no workload in scope (``workloads``: those
    the audit found), as ``audit`` and ``rebalance`` do: bad input, exit status 2, rather
    than a report about nothing."""
    if workload and not len(workloads):
        raise InputError("", message=f"no workload {workload!r} in scope")


def settle_loaded_objects() -> None:
    """Move everything loaded so far out of the cyclic garbage collector's sight.

    A one-shot command holds millions of acyclic objects from its input until it exits;
    each full collection would walk them all again (a 50,000-pod explain spent two thirds
    of its cycle there). Frozen objects are still freed by reference counting.
    """
    import gc

    gc.freeze()
