"""The ``topospread`` group as the console script sees it: commands are imported on use.

``topospread --help`` and ``--version`` need only the command names and their one-line
summaries, so they do not import the commands module (and with it NumPy, the simulator,
the renderers and the cluster client): that keeps them under 150 ms. Any command is
looked up in :mod:`topospread.cli.commands` when it is invoked. ``SUMMARIES`` must match
the commands there; ``tests/cli/test_lazy_help.py`` checks that it does.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

from topospread import KUBERNETES_VERSION, __version__

__all__ = ["SUMMARIES", "lazy_cli"]

SUMMARIES: Final[dict[str, str]] = {
    "audit": "Audit every workload's spread: counts as the scheduler counts them, and findings.",
    "examples": "List the bundled examples (run one with `topospread explain --example NAME`).",
    "explain": "Explain one scheduling attempt: every node's verdict, the spread arithmetic, "
    "scores.",
    "lint": "Lint manifests (Deployments, StatefulSets, ReplicaSets, Jobs, CronJobs, Pods) "
    "before they are applied; `-` reads standard input (Helm or kustomize output).",
    "plan": "The smallest node count per pool (and zone) such that every pod of the workloads "
    "schedules with every DoNotSchedule constraint held, through the failure policies, in at "
    "least --confidence of --runs runs over random tie-breaks.",
    "rebalance": "Plan evictions that bring spread back within maxSkew (a dry run unless --apply).",
    "scheduler": "Schedule the pods of a live cluster as kube-scheduler v1.37.1 would.",
    "simulate": "Run a what-if SCENARIO (a file, or a bundled name; default: the story).",
    "snapshot": "Write what the scheduler reads from the cluster as one kind: List file.",
    "webhook": "Serve a ValidatingAdmissionWebhook at /validate: lint's findings on Deployments, "
    "StatefulSets, ReplicaSets, DaemonSets, Jobs, CronJobs and Pods as warnings or denials.",
}
"""Each command's name and the first paragraph of its help, as ``--help`` lists them."""

MODULES: Final[dict[str, tuple[str, str]]] = {
    "audit": ("audit_command", "audit_command"),
    "examples": ("examples_command", "examples_command"),
    "explain": ("explain_command", "explain_command"),
    "lint": ("audit_command", "lint_command"),
    "plan": ("plan_command", "plan_command"),
    "rebalance": ("rebalance_command", "rebalance_command"),
    "scheduler": ("scheduler_command", "scheduler_command"),
    "simulate": ("simulate_command", "simulate_command"),
    "snapshot": ("snapshot_command", "snapshot_command"),
    "webhook": ("webhook_command", "webhook_command"),
}
"""Where each command lives (module of :mod:`topospread.cli`, attribute): a command run
imports its own module only (``topospread scheduler`` starts without the renderers and the
simulator, 0.2 s less)."""


def _real_group() -> click.Group:
    from topospread.cli.commands import cli

    return cli


def _short_help(text: str, limit: int) -> str:
    """The first sentence, cut at a word boundary with ``...`` past ``limit`` characters,
    as click's listing shortens help (its helper is deprecated from click 8.5)."""
    first = text.split(". ", 1)[0].rstrip(".")
    if len(first) <= limit:
        return first
    words: list[str] = []
    for word in first.split():
        if len(" ".join([*words, word])) > limit - 3:
            break
        words.append(word)
    return " ".join(words) + "..."


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(SUMMARIES) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in MODULES:
            module, attribute = MODULES[cmd_name]
            command: click.Command = getattr(
                importlib.import_module(f"topospread.cli.{module}"), attribute
            )
            return command
        return _real_group().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = sorted(SUMMARIES)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, _short_help(SUMMARIES[name], limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _make() -> click.Group:
    @click.group(
        cls=_LazyGroup,
        context_settings={
            "help_option_names": ["-h", "--help"],
            "auto_envvar_prefix": "TOPOSPREAD",
        },
    )
    @click.version_option(
        __version__, message=f"%(prog)s %(version)s (kube-scheduler {KUBERNETES_VERSION})"
    )
    def cli() -> None:
        pass

    # The same help text as the real group's docstring.
    cli.help = (
        "Kubernetes Pod Topology Spread: where pods land, why one is Pending, how to keep spread."
    )

    return cli


lazy_cli: Final[Any] = _make()
"""The console script's group; the same commands as ``topospread.cli.commands.cli``."""
