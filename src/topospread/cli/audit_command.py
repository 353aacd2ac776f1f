"""``topospread audit`` and ``topospread lint``: spread findings as a CI gate.

Exit status: 0 when no finding is at or above ``--fail-on`` (default ``error``), 1 when
one is, 2 for bad input (:func:`topospread.cli.shared.reports_errors`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console

from topospread.cli.console import text_console
from topospread.cli.options import html_option, output_option
from topospread.cli.render_audit import render_audit, render_lint, sarif, write_audit_html
from topospread.cli.rules import (
    UNSERVED_RULE,
    allowed_topology_keys,
    disabled_rules,
    enabled_rules,
    fails,
)
from topospread.cli.shared import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    reports_errors,
    require_workload,
)
from topospread.engine.audit import (
    Finding,
    Scope,
    audit,
    lint,
    parse_domains,
    parse_label_selector,
    parse_workload_name,
    rank_findings,
)
from topospread.framework.config.types import SchedulerConfiguration
from topospread.io import load_cluster, load_configuration
from topospread.io.manifests import load_audit_objects, read_lint_objects
from topospread.io.pools import load_instance_types, load_node_pools
from topospread.model.objects import Node
from topospread.model.pools import NodePool, is_pool_template
from topospread.model.workloads import ManifestObject

__all__ = ["EXIT_FINDINGS", "audit_command", "lint_command", "report_audit"]

_FAIL_ON = ("error", "warning", "info", "none")


def _console() -> Console:
    # Piped or captured output: wide enough for the findings table.
    return text_console(160, soft_wrap=False)


_fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(_FAIL_ON),
    default="error",
    show_default=True,
    help="Exit 1 when a finding at or above this severity exists (none: never).",
)
_disable_option = click.option(
    "--disable",
    "disable",
    multiple=True,
    metavar="RULE",
    help="Leave out a rule (repeatable, or comma-separated).",
)
_enable_option = click.option(
    "--enable",
    "enable",
    multiple=True,
    metavar="RULE",
    help="Report an opt-in policy rule, e.g. zone-and-hostname-spread (repeatable).",
)
_allowed_keys_option = click.option(
    "--allowed-topology-keys",
    "allowed_keys",
    default=None,
    metavar="KEY,...",
    help="The only topology keys constraints may use (others: topology-key-not-allowed).",
)
_pools_option = click.option(
    "--node-pools",
    "pool_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Node pools an autoscaler grows (template Nodes annotated "
    "autoscaling.topospread.dev/pool, or karpenter.sh/v1 NodePools): enables the pool rules.",
)
_instance_types_option = click.option(
    "--instance-types",
    "instance_types_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Instance types for Karpenter NodePools (the KWOK provider's instance_types.json).",
)


def _pools(
    pool_files: Sequence[Path], instance_types_file: Path | None, templates: Sequence[Node]
) -> tuple[NodePool, ...]:
    types = load_instance_types(instance_types_file) if instance_types_file else ()
    return load_node_pools(pool_files, templates, types)


_config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="KubeSchedulerConfiguration (its default constraints); upstream defaults if omitted.",
)


@click.command("audit")
@click.argument("workload", required=False, metavar="[WORKLOAD]")
@click.option(
    "--cluster",
    "cluster_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="kubectl get -o yaml capture: Nodes, Pods, Deployments, ReplicaSets, "
    "StatefulSets... (repeatable; - reads standard input).",
)
@_config_option
@click.option("-n", "--namespace", "namespaces", multiple=True, help="Only this namespace.")
@click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace (default for files).")
@click.option("-l", "--selector", default=None, help="Label selector on the workloads.")
@output_option("text", "json")
@html_option("report")
@_fail_on_option
@_disable_option
@_enable_option
@_allowed_keys_option
@_pools_option
@_instance_types_option
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Audit the live cluster of this kubeconfig (default without "
    "--cluster: $KUBECONFIG, ~/.kube/config, in-cluster).",
)
@click.option(
    "--context",
    default=None,
    metavar="NAME",
    help="The kubeconfig context to audit (default: current-context).",
)
@reports_errors
def audit_command(
    workload: str | None,
    kubeconfig: Path | None,
    context: str | None,
    cluster_files: Sequence[Path],
    config_file: Path | None,
    namespaces: Sequence[str],
    all_namespaces: bool,
    selector: str | None,
    output: str,
    html_path: Path | None,
    fail_on: str,
    disable: Sequence[str],
    enable: Sequence[str],
    allowed_keys: str | None,
    pool_files: Sequence[Path],
    instance_types_file: Path | None,
) -> None:
    """Audit every workload's spread: counts as the scheduler counts them, and findings.

    WORKLOAD is `deployment/web`, `statefulset/db` or a bare name.
    """
    live = not cluster_files
    if not live and (kubeconfig is not None or context is not None):
        raise click.UsageError(
            "--kubeconfig and --context audit a live cluster; "
            "--cluster audits files: give one or the other"
        )
    if all_namespaces and namespaces:
        raise click.UsageError("-A and -n cannot be combined")
    disabled = disabled_rules(disable)
    kind, name = parse_workload_name(workload) if workload else (None, None)
    scope = Scope(
        namespaces=frozenset(namespaces) if namespaces else None,
        selector=parse_label_selector(selector) if selector else None,
        kind=kind,
        name=name,
    )
    configuration = load_configuration(config_file)
    if live:
        from topospread.cli.live import audit_objects_from_cluster

        objects, notes, context_namespace = audit_objects_from_cluster(kubeconfig, context)
        if config_file is None:
            # The profiles the cluster's schedulers publish (deploy/scheduler/config.yaml).
            from topospread.cli.live import live_configuration

            configuration, config_notes = live_configuration(None, kubeconfig, context)
            notes = [*notes, *config_notes]
        if not namespaces and not all_namespaces:
            # kubectl's default scope: the context's namespace; -A for all of them.
            scope = Scope(frozenset({context_namespace}), scope.selector, scope.kind, scope.name)
    else:
        objects, notes = load_audit_objects(str(p) for p in cluster_files)
    unserved: list[Finding] = []
    if live:
        # Pending pods that no scheduler profile known to the live read serves.
        from topospread.cli.live import unserved_pending_findings

        if UNSERVED_RULE not in disabled:
            unserved = unserved_pending_findings(objects, configuration, scope)
    report_audit(
        objects,
        notes,
        configuration,
        scope,
        disabled,
        output,
        html_path,
        fail_on,
        workload=workload,
        extra_findings=unserved,
        enabled=enabled_rules(enable),
        allowed_keys=allowed_topology_keys(allowed_keys),
        pools=_pools(
            pool_files,
            instance_types_file,
            [o for o in objects if isinstance(o, Node) and is_pool_template(o)],
        ),
    )


def report_audit(
    objects: Sequence[ManifestObject],
    notes: Sequence[str],
    configuration: SchedulerConfiguration,
    scope: Scope,
    disabled: frozenset[str],
    output: str,
    html_path: Path | None,
    fail_on: str,
    *,
    workload: str | None = None,
    extra_findings: Sequence[Finding] = (),
    enabled: frozenset[str] = frozenset(),
    allowed_keys: frozenset[str] | None = None,
    pools: Sequence[NodePool] = (),
) -> None:
    """Audit decoded objects (from files, or a live cluster) and print, write and exit as
    ``audit`` does: the part of the command that does not depend on where objects came from.
    ``extra_findings`` (the live read's own rules) join the report's."""
    report = audit(
        objects,
        configuration,
        scope,
        disabled=disabled,
        enabled=enabled,
        allowed_keys=allowed_keys,
        pools=pools,
    )
    if extra_findings:
        report = replace(report, findings=tuple(rank_findings([*report.findings, *extra_findings])))
    # The reading's own notes (skipped kinds, where the profiles came from) are the
    # report's too: stderr, JSON and HTML alike.
    report = replace(report, notes=(*notes, *report.notes))
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    require_workload(workload, report.workloads)
    if not report.workloads and scope.namespaces:
        # kubectl get's words for an empty namespace (a misspelt -n among the causes).
        where = ", ".join(sorted(scope.namespaces))
        plural = "s" if len(scope.namespaces) > 1 else ""
        click.echo(f"note: No resources found in {where} namespace{plural}.", err=True)
    if html_path is not None:
        try:
            write_audit_html(report, html_path)
        except OSError as exc:
            raise click.FileError(str(html_path), hint=exc.strerror or str(exc)) from exc
        click.echo(f"wrote {html_path}", err=True)
    if output == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        render_audit(report, _console())
    if fails(report.findings, fail_on):
        raise SystemExit(EXIT_FINDINGS)


@click.command("lint")
@click.argument("files", nargs=-1, required=True, metavar="FILE...|-")
@click.option(
    "--domains",
    default=None,
    metavar="KEY=N,...",
    help="Domains per topology key, e.g. zone=3,hostname=12 (zone, hostname, region or "
    "full keys): enables the domain-dependent rules.",
)
@click.option(
    "--cluster",
    "cluster_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="A cluster capture whose nodes enable the domain- and node-dependent rules.",
)
@_config_option
@output_option("text", "json", "sarif")
@_fail_on_option
@_disable_option
@_enable_option
@_allowed_keys_option
@_pools_option
@_instance_types_option
@reports_errors
def lint_command(
    files: Sequence[str],
    domains: str | None,
    cluster_files: Sequence[Path],
    config_file: Path | None,
    output: str,
    fail_on: str,
    disable: Sequence[str],
    enable: Sequence[str],
    allowed_keys: str | None,
    pool_files: Sequence[Path],
    instance_types_file: Path | None,
) -> None:
    """Lint manifests (Deployments, StatefulSets, ReplicaSets, Jobs, CronJobs, Pods) before
    they are applied; `-` reads standard input (Helm or kustomize output)."""
    disabled = disabled_rules(disable)
    sizes = parse_domains(domains) if domains else None
    cluster = None
    notes: list[str] = []
    if cluster_files:
        cluster, cluster_notes = load_cluster(cluster_files)
        notes.extend(cluster_notes)
    if pool_files and cluster is None:
        raise click.UsageError("--node-pools needs --cluster (the nodes the pools add to)")
    pools = _pools(pool_files, instance_types_file, cluster.node_templates if cluster else ())
    configuration = load_configuration(config_file)
    read = read_lint_objects(files)
    report = lint(
        read.items,
        configuration,
        domains=sizes,
        cluster=cluster,
        disabled=disabled,
        enabled=enabled_rules(enable),
        allowed_keys=allowed_topology_keys(allowed_keys),
        pools=pools,
    )
    # An unreadable file is reported beside the others' findings, not instead of them.
    report = replace(report, notes=(*read.notes, *notes, *report.notes), errors=tuple(read.errors))
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for error in report.errors:
        click.echo(error, err=True)
    if output == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif output == "sarif":
        click.echo(json.dumps(sarif(report), indent=2))
    else:
        render_lint(report, _console())
    if report.errors:
        raise SystemExit(EXIT_INPUT)
    if fails(report.findings, fail_on):
        raise SystemExit(EXIT_FINDINGS)
