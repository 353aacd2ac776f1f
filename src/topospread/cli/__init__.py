"""The ``topospread`` command line (click and rich, both plain dependencies)."""

from __future__ import annotations

import os
import sys
import traceback

__all__ = ["kubectl_main", "main"]


def single_threaded_numerics() -> None:
    """One OpenBLAS thread, unless the user chose otherwise.

    numpy's OpenBLAS starts a thread per core when numpy is imported, and they spin before
    they sleep. topospread does no linear algebra those threads could help with. On a
    16-core host, processes of ``topospread scheduler`` free to use every core burned
    2.8-3.1 CPU-s in their first second, one of them with 16 threads (its own and
    OpenBLAS's 15); pinned to one core from the start, 0.6-1.0 (BENCHMARKS.md). Only
    effective before numpy is imported, which the command line does lazily; the processes
    it starts inherit it.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(prog_name: str = "topospread") -> None:
    """Entry point of the ``topospread`` console script."""
    single_threaded_numerics()
    try:
        import click  # noqa: F401
        import rich  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        sys.stderr.write(
            f"topospread: the command line needs {exc.name}, a dependency of topospread that "
            "is missing from this environment; reinstall with: pip install topospread\n"
        )
        raise SystemExit(2) from None
    from click.utils import PacifyFlushWrapper

    from topospread.cli.lazy import lazy_cli
    from topospread.cli.shared import EXIT_BROKEN_PIPE, EXIT_INTERNAL

    try:
        lazy_cli(prog_name=prog_name)
    except SystemExit as exc:
        # click answers a closed pipe (click.echo's output to `| head -1`) by muting
        # stdout and exiting 1, topospread's status for findings or a Pending pod.
        if exc.code == 1 and isinstance(sys.stdout, PacifyFlushWrapper):
            raise SystemExit(EXIT_BROKEN_PIPE) from None
        raise
    except Exception as exc:
        # Not bad input (that is one line and exit 2) but a bug, here or in a plugin (a
        # Filter that raises): its traceback is what a report needs, and the status is
        # not 1, which says findings or a Pending pod.
        traceback.print_exc()
        sys.stderr.write(
            f"topospread: internal error: {type(exc).__name__}: {exc} (a bug in topospread "
            "or in a plugin; the traceback above is for a report)\n"
        )
        raise SystemExit(EXIT_INTERNAL) from None


def kubectl_main() -> None:
    """Entry point of ``kubectl-topospread``: kubectl runs it for ``kubectl topospread ...``
    (its plugin mechanism: an executable named ``kubectl-NAME`` on PATH), so usage lines
    name the command the user typed."""
    main(prog_name="kubectl topospread")
