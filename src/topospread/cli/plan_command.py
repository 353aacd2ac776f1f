"""``topospread plan``: the fewest nodes per pool that hold workloads through failures."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console

from topospread.cli.console import OutputConsole
from topospread.cli.options import output_option
from topospread.cli.shared import EXIT_FINDINGS, exit_with_error
from topospread.engine.plan import PlanResult, plan_capacity
from topospread.engine.sim.scenario import MAX_REPLICAS
from topospread.errors import FieldError, InputError, TopospreadError
from topospread.io import load_cluster, load_configuration
from topospread.io.manifests import load_audit_objects
from topospread.io.pools import load_instance_types, load_node_pools
from topospread.model.objects import Deployment, ReplicaSet, StatefulSet

__all__ = ["plan_command"]

EXIT_INFEASIBLE = EXIT_FINDINGS
"""No plan meets the policies within the pools' limits."""


@click.command("plan")
@click.argument("workload_files", nargs=-1, required=True, metavar="WORKLOAD_FILE...")
@click.option(
    "--node-pools",
    "pool_files",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Node pools: template Nodes annotated autoscaling.topospread.dev/pool, or "
    "karpenter.sh/v1 NodePools (repeatable).",
)
@click.option(
    "--instance-types",
    "instance_types_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Instance types for Karpenter NodePools (the KWOK provider's instance_types.json).",
)
@click.option(
    "--cluster",
    "cluster_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Existing nodes and pods the workloads join (repeatable).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="KubeSchedulerConfiguration; upstream defaults if omitted.",
)
@click.option(
    "--survive",
    multiple=True,
    metavar="POLICY",
    help="zone-loss (a zone unreachable, as the node lifecycle controller handles it), "
    "zone-removal, N-nodes (e.g. 2-nodes), rollout (maxSurge); repeatable.",
)
@click.option("--runs", type=int, default=1, show_default=True, help="Runs over random ties.")
@click.option(
    "--confidence",
    type=float,
    default=1.0,
    show_default=True,
    help="Share of runs that must succeed, in (0, 1].",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of run 0's ties.")
@output_option("text", "json")
def plan_command(
    workload_files: Sequence[str],
    pool_files: Sequence[Path],
    instance_types_file: Path | None,
    cluster_files: Sequence[Path],
    config_file: Path | None,
    survive: Sequence[str],
    runs: int,
    confidence: float,
    seed: int,
    output: str,
) -> None:
    """The smallest node count per pool (and zone) such that every pod of the workloads
    schedules with every DoNotSchedule constraint held, through the failure policies, in
    at least --confidence of --runs runs over random tie-breaks."""
    try:
        # Every cheap check before any run starts.
        if runs < 1:
            raise InputError("", message=f"--runs {runs}: must be at least 1")
        if not 0 < confidence <= 1:
            raise InputError("", message=f"--confidence {confidence}: must be in (0, 1]")
        configuration = load_configuration(config_file)
        types = load_instance_types(instance_types_file) if instance_types_file else ()
        cluster = load_cluster(cluster_files)[0] if cluster_files else None
        pools = load_node_pools(
            pool_files, cluster.node_templates if cluster is not None else (), types
        )
        objects, notes = load_audit_objects(workload_files)
        workloads = [o for o in objects if isinstance(o, Deployment | StatefulSet | ReplicaSet)]
        if not workloads:
            raise InputError(
                ", ".join(workload_files),
                message="no workloads (Deployments, StatefulSets or ReplicaSets) to plan for",
            )
        too_large = [
            FieldError.invalid(
                f"{type(w).__name__} {w.metadata.namespace}/{w.metadata.name}: spec.replicas",
                w.replicas,
                f"must be at most {MAX_REPLICAS:,} (plan places every replica)",
            )
            for w in workloads
            if w.replicas is not None and w.replicas > MAX_REPLICAS
        ]
        if too_large:
            raise InputError(", ".join(workload_files), too_large)
        result = plan_capacity(
            workloads,
            pools,
            configuration,
            cluster,
            survive=survive,
            runs=runs,
            confidence=confidence,
            seed=seed,
        )
    except TopospreadError as exc:
        exit_with_error(exc)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if output == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        _render(result, OutputConsole(highlight=False, soft_wrap=True, width=200))
    if not result.feasible:
        sys.exit(EXIT_INFEASIBLE)


def _render(result: PlanResult, console: Console, indent: str = "") -> None:
    if not result.feasible:
        console.print(f"{indent}[bold red]No plan[/bold red]: {result.binding}")
        return
    console.print(
        f"{indent}[bold]Plan: {result.total} node(s)[/bold]  "
        f"({result.succeeded}/{result.runs} runs succeed, confidence {result.confidence:g})"
    )
    for count in result.counts:
        if count.nodes:
            shape = f" {count.instance_type}" if count.instance_type else ""
            console.print(
                f"{indent}  {count.pool:24} {count.zone or '(no zone)':16}{shape}  {count.nodes}"
            )
    proof = (
        "proven optimal: it meets the lower bound"
        if result.optimal
        else "a local minimum (one node fewer fails)"
    )
    console.print(f"{indent}  lower bound {result.lower_bound}: {proof}")
    console.print(f"{indent}  binds: {result.binding}")
    console.print(f"{indent}  margin: {result.margin} more pod(s) of the largest workload fit")
    for note in result.notes:
        console.print(f"{indent}  note: {note}")
    if result.all_zones is not None:
        console.print(f"{indent}With a node in every zone:")
        _render(result.all_zones, console, indent + "  ")
