"""``topospread rebalance``: evictions that bring spread back within maxSkew.

A dry run by default (files or a live cluster, read-only); ``--apply`` carries the plan out
on a live cluster (:mod:`topospread.cli.rebalance_apply`), holding a Lease for the whole
run. Exit status: 0 balanced (or nothing to do), 1 the plan cannot reach balance or
``--apply`` stopped (a lost Lease included), 2 bad input, 3 another process holds the
Lease and ``--no-wait-for-lease`` was given.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from topospread.cli.console import OutputConsole
from topospread.cli.options import html_option, output_option
from topospread.cli.render_rebalance import rebalance_html, render_plan
from topospread.cli.shared import (
    EXIT_FINDINGS,
    reports_errors,
    require_workload,
    settle_loaded_objects,
)
from topospread.engine.audit import Scope, parse_label_selector, parse_workload_name
from topospread.engine.rebalance import RebalanceOptions, plan_rebalance
from topospread.framework.config.types import SchedulerConfiguration
from topospread.io import load_configuration
from topospread.io.manifests import load_audit_objects, read_documents
from topospread.model.workloads import ManifestObject

__all__ = ["EXIT_LEASE_HELD", "EXIT_NOT_BALANCED", "rebalance_command"]

EXIT_NOT_BALANCED = EXIT_FINDINGS
"""The plan cannot reach balance, or ``--apply`` stopped."""
EXIT_LEASE_HELD = 3
"""``--apply --no-wait-for-lease`` while another process holds the Lease."""


def _raw_items(data: Any) -> list[Any]:
    if isinstance(data, list):
        return [i for d in data for i in _raw_items(d)]
    if isinstance(data, dict) and str(data.get("kind", "")).endswith("List"):
        return _raw_items(data.get("items") or [])
    return [data]


def _load_files(paths: Sequence[Path]) -> tuple[list[ManifestObject], list[str], frozenset[str]]:
    from topospread.cli.rebalance_apply import local_storage_pods

    objects, notes = load_audit_objects(str(p) for p in paths)
    raw: list[Any] = []
    for path in paths:
        if str(path) == "-":
            continue  # standard input was consumed by the loader; volumes are not re-read
        for document in read_documents(str(path)):
            raw.extend(_raw_items(document.data))
    return objects, notes, local_storage_pods(raw)


def _read_live(
    kubeconfig: Path | None, context: str | None
) -> tuple[list[ManifestObject], list[str], frozenset[str], str]:
    from topospread.cli.rebalance_apply import local_storage_pods
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
    return (
        [obj for _, obj in decoded.objects],
        list(read.notes),
        local_storage_pods(read.items),
        read.namespace,
    )


# -- the command ----------------------------------------------------------------------------


@click.command("rebalance")
@click.argument("workload", required=False, metavar="[WORKLOAD]")
@click.option(
    "--cluster",
    "cluster_files",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="A cluster capture (kubectl get -o yaml): the plan is only simulated.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="KubeSchedulerConfiguration (profiles, default constraints); upstream defaults "
    "if omitted.",
)
@click.option("-n", "--namespace", "namespaces", multiple=True, help="Only this namespace.")
@click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace (default for files).")
@click.option("-l", "--selector", default=None, help="Label selector on the workloads.")
@click.option("--include-soft", is_flag=True, help="Also balance ScheduleAnyway constraints.")
@click.option(
    "--allow-local-storage", is_flag=True, help="Pods with emptyDir/hostPath may be evicted."
)
@click.option("--max-evictions", type=click.IntRange(min=0), default=None, help="In total.")
@click.option("--max-per-node", type=click.IntRange(min=1), default=None, help="Per node.")
@click.option(
    "--max-per-namespace", type=click.IntRange(min=1), default=None, help="Per namespace."
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Evictions per batch (--apply waits for their replacements between batches).",
)
@output_option("text", "json")
@html_option("page with before and after pictures")
@click.option(
    "--apply", "do_apply", is_flag=True, help="Evict on the live cluster (not a dry run)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds to wait for a batch's replacements.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=1),
    default=None,
    help="With --apply: run again every SECONDS, holding the Lease throughout.",
)
@click.option(
    "--lease-namespace",
    default="kube-system",
    show_default=True,
    help="With --apply: the namespace of the Lease only one --apply holds at a time.",
)
@click.option("--lease-name", default="topospread-rebalance", show_default=True)
@click.option(
    "--lease-duration",
    type=click.FloatRange(min=1),
    default=15.0,
    show_default=True,
    help="Seconds another process waits after the holder's last renewal before taking the Lease.",
)
@click.option(
    "--renew-deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds the holder keeps trying to renew before it stops evicting.",
)
@click.option(
    "--retry-period",
    type=click.FloatRange(min=0, min_open=True),
    default=2.0,
    show_default=True,
    help="Seconds between renewals (and between tries while waiting).",
)
@click.option(
    "--wait-for-lease/--no-wait-for-lease",
    default=True,
    show_default=True,
    help="While another process holds the Lease: wait for it, or exit with status 3.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="The live cluster of this kubeconfig (default without --cluster: $KUBECONFIG, "
    "~/.kube/config, in-cluster).",
)
@click.option("--context", default=None, metavar="NAME", help="The kubeconfig context.")
@reports_errors
def rebalance_command(
    workload: str | None,
    cluster_files: Sequence[Path],
    config_file: Path | None,
    namespaces: Sequence[str],
    all_namespaces: bool,
    selector: str | None,
    include_soft: bool,
    allow_local_storage: bool,
    max_evictions: int | None,
    max_per_node: int | None,
    max_per_namespace: int | None,
    batch_size: int,
    output: str,
    html_path: Path | None,
    do_apply: bool,
    timeout: float,
    interval: float | None,
    lease_namespace: str,
    lease_name: str,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
    wait_for_lease: bool,
    kubeconfig: Path | None,
    context: str | None,
) -> None:
    """Plan evictions that bring spread back within maxSkew (a dry run unless --apply).

    Each step is simulated: the controller recreates the evicted pod and the real
    scheduling cycle places the replacement. WORKLOAD is `deployment/web` or a name.
    """
    live = not cluster_files
    if not live and (kubeconfig is not None or context is not None or do_apply):
        raise click.UsageError(
            "--cluster plans on files only; --kubeconfig, --context and --apply are for a "
            "live cluster"
        )
    if interval is not None and not do_apply:
        raise click.UsageError("--interval repeats --apply rounds: give --apply too")
    if all_namespaces and namespaces:
        raise click.UsageError("-A and -n cannot be combined")
    if do_apply:
        from topospread.client.leaderelection import check_timing

        problem = check_timing(lease_duration, renew_deadline, retry_period)
        if problem is not None:
            # client-go's NewLeaderElector refuses the same durations, in these words.
            raise click.UsageError(
                f"--lease-duration {lease_duration:g}, --renew-deadline {renew_deadline:g}, "
                f"--retry-period {retry_period:g}: {problem}"
            )
    kind, name = parse_workload_name(workload) if workload else (None, None)
    scope = Scope(
        namespaces=frozenset(namespaces) if namespaces else None,
        selector=parse_label_selector(selector) if selector else None,
        kind=kind,
        name=name,
    )
    configuration = load_configuration(config_file)
    configuration_notes: list[str] = []
    if live and config_file is None:
        # The profiles the cluster's schedulers publish (deploy/scheduler/config.yaml).
        from topospread.cli.live import live_configuration

        configuration, configuration_notes = live_configuration(None, kubeconfig, context)
    options = RebalanceOptions(
        include_soft,
        allow_local_storage,
        frozenset(),
        max_evictions,
        max_per_node,
        max_per_namespace,
        batch_size,
    )

    def scoped(context_namespace: str) -> Scope:
        if live and not namespaces and not all_namespaces:
            # kubectl's default scope: the context's namespace; -A for all of them.
            return Scope(frozenset({context_namespace}), scope.selector, scope.kind, scope.name)
        return scope

    if do_apply:
        _apply(
            kubeconfig,
            context,
            configuration,
            scoped,
            options,
            output,
            timeout,
            interval,
            workload,
            _LeaseSettings(
                lease_namespace,
                lease_name,
                lease_duration,
                renew_deadline,
                retry_period,
                wait_for_lease,
            ),
        )
        return
    if live:
        objects, notes, local, context_namespace = _read_live(kubeconfig, context)
        notes = [*configuration_notes, *notes]
        scope = scoped(context_namespace)
    else:
        objects, notes, local = _load_files(cluster_files)
    options = RebalanceOptions(
        include_soft,
        allow_local_storage,
        local,
        max_evictions,
        max_per_node,
        max_per_namespace,
        batch_size,
    )
    plan = plan_rebalance(objects, configuration, scope, options)
    for note in (*notes, *plan.notes):
        click.echo(f"note: {note}", err=True)
    require_workload(workload, plan.before.workloads)
    if html_path is not None:
        from topospread.cli.render_html import write_html

        try:
            write_html(rebalance_html(plan), html_path)
        except OSError as exc:
            raise click.FileError(str(html_path), hint=exc.strerror or str(exc)) from exc
        click.echo(f"wrote {html_path}", err=True)
    if output == "json":
        click.echo(json.dumps(plan.to_json(), indent=2))
    else:
        render_plan(plan, OutputConsole(highlight=False, soft_wrap=True))
    if not plan.converged:
        raise SystemExit(EXIT_NOT_BALANCED)


@dataclass(frozen=True)
class _LeaseSettings:
    namespace: str
    name: str
    duration: float
    renew_deadline: float
    retry_period: float
    wait: bool


def _apply(
    kubeconfig: Path | None,
    context: str | None,
    configuration: SchedulerConfiguration,
    scoped: Callable[[str], Scope],
    options: RebalanceOptions,
    output: str,
    timeout: float,
    interval: float | None,
    workload: str | None,
    settings: _LeaseSettings,
) -> None:
    """Hold the Lease for the whole run (client-go leader election, renewed on its own
    thread) and evict only while holding it; a second process waits for it."""
    from topospread.cli.rebalance_apply import apply_rebalance
    from topospread.client.config import connect
    from topospread.client.leaderelection import LeaderElector, LeaseRecord
    from topospread.errors import Forbidden, Unauthorized

    connection = connect(kubeconfig, context)
    scope = scoped(connection.namespace)

    def echo(line: str) -> None:
        click.echo(line, err=output == "json")

    def read() -> tuple[list[ManifestObject], frozenset[str]]:
        objects, _, local, _ = _read_live(kubeconfig, context)
        return objects, local

    # kube-scheduler's identity: the host name and a UUID (one per process).
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    elector = LeaderElector(
        connection.transport,
        namespace=settings.namespace,
        name=settings.name,
        identity=identity,
        lease_duration=settings.duration,
        renew_deadline=settings.renew_deadline,
        retry_period=settings.retry_period,
    )

    def held(record: LeaseRecord) -> None:
        click.echo(
            f"lease {elector.lease} is held by {record.holder} (acquired "
            f"{record.acquire_time or '?'}, leaseDurationSeconds "
            f"{record.lease_duration_seconds}): another rebalance --apply is running; "
            + ("waiting for it" if settings.wait else "not waiting (--no-wait-for-lease)"),
            err=True,
        )

    try:
        fatal = (Forbidden, Unauthorized)
        if not elector.acquire(wait=settings.wait, on_held=held, fatal=fatal):
            raise SystemExit(EXIT_LEASE_HELD)
        click.echo(f"holding lease {elector.lease} as {identity}", err=True)
        elector.start_renewing()
        while True:
            result = apply_rebalance(
                connection,
                read,
                configuration,
                scope,
                options,
                lease=elector,
                timeout=timeout,
                echo=echo,
            )
            if result.rounds:
                # A WORKLOAD that names nothing was planned nothing, and so evicted nothing.
                require_workload(workload, result.rounds[0].plan.before.workloads)
            _report_apply(result, output)
            if interval is None:
                if not result.converged:
                    raise SystemExit(EXIT_NOT_BALANCED)
                return
            until = time.monotonic() + interval
            while elector.leading() and time.monotonic() < until:
                time.sleep(min(settings.retry_period, max(0.0, until - time.monotonic())))
            if not elector.leading():
                click.echo(f"stopped: {elector.why_not_leading()}", err=True)
                raise SystemExit(EXIT_NOT_BALANCED)
    except KeyboardInterrupt:
        # Interrupted between or during rounds: what was evicted stays evicted, its
        # controllers recreate the pods; the Lease is released below.
        echo("interrupted")
        raise SystemExit(130) from None
    finally:
        # client-go's ReleaseOnCancel: a waiting process takes over at its next retry.
        elector.stop(release=True)
        connection.close()


def _report_apply(result: Any, output: str) -> None:
    if output == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if result.converged:
        click.echo(f"balanced: {result.evictions} eviction(s) in {len(result.rounds)} round(s)")
    else:
        click.echo(f"not balanced after {result.evictions} eviction(s): {result.reason}")
