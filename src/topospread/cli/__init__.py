"""The ``topospread`` command line (click and rich, both plain dependencies)."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
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

    lazy_cli(prog_name="topospread")
