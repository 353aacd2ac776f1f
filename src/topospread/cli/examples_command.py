"""``topospread examples``: the bundled examples, one a line."""

from __future__ import annotations

import click

from topospread.cli import examples as bundled

__all__ = ["examples_command"]


@click.command("examples")
def examples_command() -> None:
    """List the bundled examples (run one with `topospread explain --example NAME`)."""
    for example in bundled.all_examples():
        click.echo(f"{example.name:32} {example.summary}")
