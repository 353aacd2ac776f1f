"""The ``topospread`` command line (click and rich, both plain dependencies)."""

from __future__ import annotations

import sys

__all__ = ["kubectl_main", "main"]


def main(prog_name: str = "topospread") -> None:
    """Entry point of the ``topospread`` console script."""
    try:
        import click  # noqa: F401
        import rich  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        sys.stderr.write(
            f"topospread: the command line needs {exc.name}, a dependency of topospread that "
            "is missing from this environment; reinstall with: pip install topospread\n"
        )
        raise SystemExit(2) from None
    from topospread.cli.lazy import lazy_cli

    lazy_cli(prog_name=prog_name)


def kubectl_main() -> None:
    """Entry point of ``kubectl-topospread``: kubectl runs it for ``kubectl topospread ...``
    (its plugin mechanism: an executable named ``kubectl-NAME`` on PATH), so usage lines
    name the command the user typed."""
    main(prog_name="kubectl topospread")
