"""The ``topospread`` command line (needs the ``cli`` extra: click and rich)."""

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
            f"topospread: the command line needs {exc.name}; "
            "install it with: pip install 'topospread[cli]'\n"
        )
        raise SystemExit(2) from None
    from topospread.cli.lazy import lazy_cli

    lazy_cli(prog_name="topospread")
