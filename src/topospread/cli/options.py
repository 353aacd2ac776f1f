"""Options several commands share, declared once so that they read the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["html_option", "kube_options", "kubeconfig_options", "output_option"]

F = TypeVar("F", bound=Callable[..., Any])


def output_option(*formats: str) -> Callable[[F], F]:
    """``--output/-o`` with ``formats`` (the first is the default)."""
    described = {
        ("text", "json"): "Human-readable text or the JSON documented in the README.",
        ("text", "json", "sarif"): "Text, JSON, or SARIF 2.1.0 for code-scanning UIs.",
    }
    return click.option(
        "--output",
        "-o",
        type=click.Choice(list(formats)),
        default=formats[0],
        show_default=True,
        help=described.get(formats, "Output format."),
    )


def html_option(what: str) -> Callable[[F], F]:
    """``--html FILE``: also write a self-contained HTML page; ``what`` says what it shows."""
    return click.option(
        "--html",
        "html_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="FILE",
        help=f"Also write a self-contained HTML {what} to FILE.",
    )


def kubeconfig_options(command: F) -> F:
    """``--kubeconfig`` and ``--context``, as kubectl spells them."""
    command = click.option(
        "--context",
        "context",
        default=None,
        metavar="NAME",
        help="The kubeconfig context to use (default: current-context).",
    )(command)
    command = click.option(
        "--kubeconfig",
        "kubeconfig",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="FILE",
        help="Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster).",
    )(command)
    return command


def kube_options(command: F) -> F:
    """:func:`kubeconfig_options` and ``-n/--namespace``, as kubectl spells them."""
    command = click.option(
        "--namespace",
        "-n",
        "namespace",
        default=None,
        metavar="NS",
        help="Namespace of the pod (default: the context's namespace).",
    )(command)
    return kubeconfig_options(command)
