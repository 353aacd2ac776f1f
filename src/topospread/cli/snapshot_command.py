"""``topospread snapshot``: what the scheduler reads from a live cluster, as one file.

The client library is imported only when the command runs, so ``--help`` stays fast.
Exit status: 0 written, 2 bad input or a cluster that cannot be read (one line each).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from topospread.cli.options import kubeconfig_options
from topospread.cli.shared import exit_with_error
from topospread.errors import InputError, TopospreadError

__all__ = ["snapshot_command"]


@click.command("snapshot")
@click.option(
    "--output-file",
    "-o",
    "output_file",
    required=True,
    metavar="FILE",
    help="Where to write the kind: List (YAML, or JSON for a .json name); - for stdout.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["yaml", "json"]),
    default=None,
    help="Output format (default: from the file name, else YAML).",
)
@click.option(
    "--anonymize",
    is_flag=True,
    help="Replace names, namespaces, label values and images consistently; drop "
    "annotations, environment and addresses. Scheduling decisions stay the same.",
)
@kubeconfig_options
def snapshot_command(
    output_file: str,
    output_format: str | None,
    anonymize: bool,
    kubeconfig: Path | None,
    context: str | None,
) -> None:
    """Write what the scheduler reads from the cluster as one kind: List file.

    explain --cluster, audit, rebalance --cluster and lint --cluster read the result, and
    a simulate scenario through its cluster.files; attach it to a bug report, with
    --anonymize when names are private. Read-only.
    """
    try:
        _snapshot(output_file, output_format, anonymize, kubeconfig, context)
    except TopospreadError as exc:
        exit_with_error(exc)


def _snapshot(
    output_file: str,
    output_format: str | None,
    anonymize: bool,
    kubeconfig: Path | None,
    context: str | None,
) -> None:
    from topospread.client.live import read_live
    from topospread.client.snapshot import render_snapshot, write_output

    fmt = output_format or ("json" if output_file.lower().endswith(".json") else "yaml")
    target = None if output_file == "-" else Path(output_file)
    if target is not None:
        _check_writable(target)
    read = read_live(kubeconfig, context)
    for note in read.notes:
        click.echo(f"note: {note}", err=True)
    data = render_snapshot(read, fmt=fmt, anonymize=anonymize)
    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    write_output(target, data)
    counts = ", ".join(f"{n} {k}" for k, n in _kind_counts(read.items).items())
    click.echo(f"wrote {target}: {counts}", err=True)


def _kind_counts(items: tuple[dict[str, Any], ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        kind = str(item.get("kind"))
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _check_writable(path: Path) -> None:
    # Checked before the (possibly long) read, so a bad target fails at once.
    import os

    if path.is_dir():
        raise InputError(str(path), message="is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(str(path), message="its folder does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(str(path), message="its folder is not writable")
