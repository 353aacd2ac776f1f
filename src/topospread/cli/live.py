"""What the commands read from a live cluster: a pod to explain (with its autoscaler's
pools), audit's and rebalance's objects, a scenario's start, the published scheduler
profiles, and the live audit's own rule.

The client library is imported only when one of these actually talks to a server, so
``--help`` stays fast. Commands import this module; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from topospread.cli.rules import UNSERVED_RULE
from topospread.cli.shared import settle_loaded_objects
from topospread.errors import ClusterError, UnsupportedError
from topospread.framework.config.types import SchedulerConfiguration

if TYPE_CHECKING:
    from topospread.engine.audit import Finding, Scope
    from topospread.engine.autoscale import ScaleUp
    from topospread.engine.explain import Explanation
    from topospread.engine.sim.scenario import Scenario
    from topospread.model.workloads import ManifestObject

__all__ = [
    "UNSERVED_RULE",
    "audit_objects_from_cluster",
    "explain_live_pod",
    "explain_live_pod_with_pools",
    "live_configuration",
    "scenario_from_cluster",
    "unserved_pending_findings",
]


def live_configuration(
    config_file: Path | None, kubeconfig: Path | None, context: str | None
) -> tuple[SchedulerConfiguration, list[str]]:
    """The scheduler profiles for a live command: ``--config`` when given; otherwise those
    the cluster publishes (ConfigMaps labelled ``topospread.dev/scheduler-config=true``,
    see :mod:`topospread.client.schedulers`) beside upstream's default profile. The notes
    name where each profile came from."""
    from topospread.io import load_configuration

    if config_file is not None:
        return load_configuration(config_file), []
    from topospread.client.config import connect
    from topospread.client.schedulers import discover_schedulers

    connection = connect(kubeconfig, context)
    try:
        found = discover_schedulers(connection.transport)
    finally:
        connection.close()
    notes = [
        f"scheduler profiles from {source}: {', '.join(names)}" for source, names in found.sources
    ]
    return found.configuration, [*notes, *found.notes]


def unserved_pending_findings(
    objects: Sequence[ManifestObject], configuration: SchedulerConfiguration, scope: Scope
) -> list[Finding]:
    """An error per workload in ``scope`` with Pending pods whose ``schedulerName`` no
    profile of ``configuration`` serves: no scheduler that topospread knows of will ever
    place them (kube-scheduler ignores pods of other names), so they stay Pending."""
    from topospread.engine.audit import Finding, Severity
    from topospread.engine.audit.workloads import group_workloads

    served = {p.scheduler_name for p in configuration.profiles}
    known = ", ".join(f'"{name}"' for name in sorted(served))
    workloads, _ = group_workloads(objects)
    findings: list[Finding] = []
    for w in workloads:
        if w.excluded or not scope.includes(w):
            continue
        unserved = [p for p in w.pending if p.scheduler_name not in served]
        if not unserved:
            continue
        name = unserved[0].scheduler_name
        findings.append(
            Finding(
                UNSERVED_RULE,
                Severity.ERROR,
                w.ref,
                f"{w.pod_spec_path}.schedulerName",
                f'{len(unserved)} pod(s) Pending with schedulerName "{name}", which no known '
                f"scheduler profile serves ({known}): no scheduler will place them",
                f'run a scheduler with a profile "{name}" and publish its configuration in a '
                f"ConfigMap labelled topospread.dev/scheduler-config=true (or pass its "
                f"--config), or set schedulerName to a served profile",
            )
        )
    return findings


def explain_live_pod(
    target: str,
    namespace: str | None,
    kubeconfig: Path | None,
    context: str | None,
    configuration: SchedulerConfiguration,
    tie_break: str,
    seed: int,
) -> tuple[Explanation, list[str]]:
    """Read the cluster behind the kubeconfig and explain one of its pods."""
    from topospread.client.objects import read_pod_and_cluster
    from topospread.engine.explain import explain

    try:
        question = read_pod_and_cluster(target, namespace, kubeconfig, context)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    settle_loaded_objects()
    try:
        result = explain(
            question.cluster, question.pod, configuration, tie_break=tie_break, seed=seed
        )
    except UnsupportedError as exc:
        raise exc.named(question.source) from None
    return result, list(question.notes)


def explain_live_pod_with_pools(
    target: str,
    namespace: str | None,
    kubeconfig: Path | None,
    context: str | None,
    configuration: SchedulerConfiguration,
    pool_files: Sequence[Path],
    instance_types_file: Path | None,
    autoscaler: str | None,
    expander: str,
    seed: int,
) -> tuple[Explanation, ScaleUp, list[str]]:
    """Explain a pod of the live cluster with its autoscaler's pools: Cluster Autoscaler's
    node groups from its status ConfigMap (templates from the groups' nodes, or from
    ``--node-pools`` for groups at zero), or Karpenter's NodePools (with
    ``--instance-types``), and what a scale-up would do."""
    from topospread.client.autoscaling import read_autoscaling
    from topospread.client.config import connect
    from topospread.client.objects import read_pod_and_cluster
    from topospread.engine.autoscale import plan_scale_up
    from topospread.io.pools import load_instance_types, load_node_pools
    from topospread.model.pools import cluster_autoscaler_pools, karpenter_pools

    try:
        question = read_pod_and_cluster(target, namespace, kubeconfig, context)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    connection = connect(kubeconfig, context)
    try:
        live = read_autoscaling(connection.transport)
    finally:
        connection.close()
    types = load_instance_types(instance_types_file) if instance_types_file else ()
    given = load_node_pools(pool_files, (), types) if pool_files else ()
    file_templates = tuple(p for p in given if p.source == "template")
    pools = [p for p in given if p.source == "karpenter"]
    notes = list(question.notes)
    wants = autoscaler or (
        "cluster-autoscaler" if live.cluster_autoscaler_status is not None
        else "karpenter" if live.nodepools else None
    )  # fmt: skip
    if wants == "cluster-autoscaler":
        if live.cluster_autoscaler_status is None:
            raise ClusterError(
                f"{live.source}: not found: no Cluster Autoscaler status (it writes it with "
                "--write-status-configmap, the default); give --node-pools instead"
            )
        pools.extend(
            cluster_autoscaler_pools(
                live.cluster_autoscaler_status, question.cluster.nodes, file_templates, live.source
            )
        )
        notes.append(f"node groups from {live.source}: {', '.join(p.name for p in pools)}")
    elif wants == "karpenter":
        if live.nodepools:
            if not types:
                raise click.UsageError(
                    "the cluster's Karpenter NodePools need --instance-types (the instance "
                    "types its cloud provider offers, as the KWOK provider's JSON)"
                )
            pools.extend(karpenter_pools(live.nodepools, types, f"{connection.server}: nodepools"))
            notes.append(f"Karpenter NodePools: {', '.join(p.name for p in pools)}")
        pools.extend(file_templates)
    else:
        pools.extend(file_templates)
    if not pools:
        raise ClusterError(
            f"{connection.server}: no node pools: no Cluster Autoscaler status "
            "(configmap kube-system/cluster-autoscaler-status) and no Karpenter NodePools; "
            "give --node-pools"
        )
    settle_loaded_objects()
    try:
        scale_up = plan_scale_up(
            question.cluster,
            question.pod,
            question.cluster.pending_pods,
            pools,
            configuration,
            autoscaler=wants or "cluster-autoscaler",
            expander=expander,
            seed=seed,
        )
    except UnsupportedError as exc:
        raise exc.named(question.source) from None
    return scale_up.today, scale_up, notes


def scenario_from_cluster(
    scenario: Path | None, kubeconfig: Path | None, context: str | None
) -> Scenario:
    """A scenario starting from the live cluster (its own cluster section joins it)."""
    from topospread.client.live import read_live
    from topospread.io.scenarios import load_scenario

    read = read_live(kubeconfig, context)
    for note in read.notes:
        click.echo(f"note: {note}", err=True)
    return load_scenario(scenario, starting_objects=read.items, starting_source=read.source)


def audit_objects_from_cluster(
    kubeconfig: Path | None, context: str | None
) -> tuple[list[ManifestObject], list[str], str]:
    """Workloads, pods and nodes of the live cluster for ``audit``; with the notes and the
    context's namespace (the default scope, as kubectl's)."""
    from topospread.client.live import read_live
    from topospread.client.source import AUDIT_RESOURCES
    from topospread.io.loader import paused_gc
    from topospread.model.workloads import decode_manifests

    read = read_live(kubeconfig, context, resources=AUDIT_RESOURCES)
    with paused_gc():
        decoded = decode_manifests(
            [{"apiVersion": "v1", "kind": "List", "items": list(read.items)}], read.source
        )
    settle_loaded_objects()
    notes = [
        *read.notes,
        *(f"{read.source}: skipped {s} (kind not audited)" for s in decoded.skipped),
    ]
    return [obj for _, obj in decoded.objects], notes, read.namespace
