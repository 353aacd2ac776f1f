"""The ``topospread`` group: it only assembles the commands, one module each.

Each command module checks its options, calls one library function and renders the
result, over the shared helpers of :mod:`topospread.cli.shared` (exit statuses, error
reporting, the console) and :mod:`topospread.cli.options`; no command module imports
another, nor this one. The console script starts from :mod:`topospread.cli.lazy`, which
imports this module only when a command runs.
"""

from __future__ import annotations

import click

from topospread import KUBERNETES_VERSION, __version__
from topospread.cli.audit_command import audit_command, lint_command
from topospread.cli.examples_command import examples_command
from topospread.cli.explain_command import explain_command
from topospread.cli.plan_command import plan_command
from topospread.cli.rebalance_command import rebalance_command
from topospread.cli.scheduler_command import scheduler_command
from topospread.cli.simulate_command import simulate_command
from topospread.cli.snapshot_command import snapshot_command
from topospread.cli.webhook_command import webhook_command

__all__ = ["cli"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "TOPOSPREAD"}
)
@click.version_option(
    __version__, message=f"%(prog)s %(version)s (kube-scheduler {KUBERNETES_VERSION})"
)
def cli() -> None:
    """Kubernetes Pod Topology Spread: where pods land, why one is Pending, how to keep spread."""


for _command in (
    explain_command,
    snapshot_command,
    examples_command,
    simulate_command,
    audit_command,
    lint_command,
    scheduler_command,
    rebalance_command,
    webhook_command,
    plan_command,
):
    cli.add_command(_command)
