"""``topospread scheduler``: run topospread as a scheduler of a live cluster.

Started as kube-scheduler is: ``--config FILE`` (a KubeSchedulerConfiguration v1: profiles,
leaderElection, clientConnection, backoff, percentageOfNodesToScore) and ``--kubeconfig``
overriding ``clientConnection.kubeconfig``. The scheduler package is imported only when
the command runs, so ``--help`` stays fast. Exit status: 0 after a clean SIGTERM drain,
1 when the Lease was lost, 2 for a bad configuration or an unreachable cluster.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from topospread.cli.shared import EXIT_INPUT, exit_with_error, report_error
from topospread.errors import InputError, TopospreadError

if TYPE_CHECKING:
    from topospread.scheduler.informer import StreamingTransport

__all__ = ["scheduler_command"]


@click.command("scheduler")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); upstream defaults without.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Overrides clientConnection.kubeconfig (both empty: the in-cluster service "
    "account, as kube-scheduler).",
)
@click.option(
    "--bind-address",
    default="0.0.0.0",
    show_default=True,
    help="Address of /healthz, /readyz, /livez and /metrics.",
)
@click.option(
    "--port",
    default=10251,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of those endpoints (plain HTTP); 0 turns them off.",
)
@click.option(
    "--pod-max-in-unschedulable-pods-duration",
    "max_unschedulable",
    default="5m",
    show_default=True,
    help="How long a pod may wait as unschedulable before a retry.",
)
@click.option(
    "--bind-workers",
    default=None,
    type=click.IntRange(1, 256),
    help="Binding cycles under way at once; the scheduling loop waits while twice this "
    "many are in flight. Default: 64 with a write process, 16 without.",
)
@click.option(
    "--write-processes",
    default=None,
    type=click.IntRange(0, 16),
    help="Processes that send the binds, status patches, deletions and Events, so that "
    "their HTTP work runs beside the scheduling loop instead of sharing its GIL; 0 sends "
    "them from the scheduler process. Default: 1 where the process may use 2 or more "
    "cores, else 0.",
)
@click.option(
    "--watch-process/--no-watch-process",
    default=None,
    help="Read the pod informer's watch (a line per bind) in a process of its own, whose "
    "lines come over a pipe in batches, instead of in the scheduling process. Default: "
    "with a write process; on 2 cores it took a tenth of the scheduling process's CPU "
    "(BENCHMARKS.md).",
)
@click.option(
    "--cpu-affinity",
    type=click.Choice(["auto", "off"]),
    default="auto",
    show_default=True,
    help="auto: where the process may use 4 or more cores, the scheduler and each write "
    "process keep to a core of their own (the highest ones), which made a 16-core host "
    "1.5 times faster end to end; off: the kernel places their threads.",
)
@click.option(
    "--watch-list/--no-watch-list",
    default=False,
    show_default=True,
    help="Take the informers' first state as a watch-list stream (sendInitialEvents), as "
    "client-go does by default since v1.35, instead of a list; where the server refuses, "
    "list. Off by default: on 2 cores it made the first bind 0.4 s later (BENCHMARKS.md).",
)
@click.option(
    "--log-format", type=click.Choice(["json", "text"]), default="json", show_default=True
)
@click.option("-v", "--verbose", count=True, help="Debug logs (one line per bound pod).")
def scheduler_command(
    config_file: Path | None,
    kubeconfig: Path | None,
    bind_address: str,
    port: int,
    max_unschedulable: str,
    bind_workers: int | None,
    write_processes: int | None,
    watch_process: bool | None,
    cpu_affinity: str,
    watch_list: bool,
    log_format: str,
    verbose: int,
) -> None:
    """Schedule the pods of a live cluster as kube-scheduler v1.37.1 would.

    Pods opt in with spec.schedulerName (a profile's schedulerName). Runs until SIGTERM,
    then finishes in-flight binds and releases its Lease.
    """
    from topospread.client.config import connect
    from topospread.client.cpus import (
        default_write_processes,
        pin_this_process,
        plan_cores,
        usable_cores,
    )
    from topospread.client.watch_process import WatchProcessTransport
    from topospread.client.write_process import ConnectionSettings, WriteProcessTransport
    from topospread.scheduler.api import RateLimitedTransport
    from topospread.scheduler.app import SchedulerApp, configure_logging
    from topospread.scheduler.heap import HeapKeeper
    from topospread.scheduler.options import load_options, parse_duration

    try:
        duration = parse_duration(max_unschedulable)
        if duration is None or duration <= 0:
            raise InputError(
                "--pod-max-in-unschedulable-pods-duration",
                message=f"not a positive duration: {max_unschedulable}",
            )
        options = load_options(config_file, pod_max_in_unschedulable=duration)
        client = options.client_connection
        path = kubeconfig or (Path(client.kubeconfig) if client.kubeconfig else None)
        # An empty clientConnection.kubeconfig means in-cluster, as for kube-scheduler.
        connection = connect(path, kubectl_rules=False)
    except TopospreadError as exc:
        exit_with_error(exc)
    configure_logging(log_format, verbose)
    if write_processes is None:
        write_processes = default_write_processes(len(usable_cores()))
    if bind_workers is None:
        # kube-scheduler starts a goroutine per binding cycle, unbounded. With the writes
        # in a child a waiting bind thread costs the scheduling thread almost nothing: at
        # 16 (32 binds in flight) the loop waited 3.5-3.8 s of a 9.6 s run (5,000 pods on
        # 5,000 Nodes, 2 cores) for a free slot, at 64 about 1.9 s, and the run took
        # 8.2-8.4 s. 128 was faster still (7.6-8.0 s) but in a churn run bound 292 pods to
        # Nodes already deleted against 21 at 64 (BENCHMARKS.md). Without a child every
        # bind's HTTP work shares the loop's GIL, and 16 measured best there.
        bind_workers = 64 if write_processes else 16
    if watch_process is None:
        watch_process = write_processes > 0
    cores = (
        plan_cores(usable_cores(), write_processes, watch_process=watch_process)
        if cpu_affinity == "auto"
        else None
    )
    # Before any thread starts: the threads and children inherit the core. Where the
    # platform cannot pin (no sched_setaffinity), nothing is planned for the children.
    if cores is not None and not pin_this_process({cores.scheduler}):
        cores = None
    if cores is not None:
        logging.getLogger("topospread.scheduler").info(
            "cpu affinity",
            extra={
                "scheduler": cores.scheduler,
                "write_processes": list(cores.write_processes),
                "watch_process": cores.watch_process,
            },
        )
    # Binds, status patches, Events, the Lease and lists run concurrently.
    connection.transport.widen_pool(bind_workers + 16)
    writes: StreamingTransport = connection.transport
    write_process: WriteProcessTransport | None = None
    settings = ConnectionSettings(
        str(path) if path else None, kubectl_rules=False, pool_size=bind_workers + 16
    )
    if write_processes:
        writes = write_process = WriteProcessTransport(
            connection.transport,
            settings,
            processes=write_processes,
            cores=cores.write_processes if cores is not None else (),
        )
    transport = RateLimitedTransport(writes, client.qps, client.burst)
    # Leader election and the Events have clients of their own, as in kube-scheduler
    # (createClients: each its own rate limiter at the same qps and burst; the Lease's
    # requests wait behind no bind).
    lease_transport = RateLimitedTransport(connection.transport, client.qps, client.burst)
    event_transport = RateLimitedTransport(writes, client.qps, client.burst)
    # The pod informer's lists share the client's rate limiter, as its other reads do.
    pod_watches = (
        WatchProcessTransport(
            transport,
            settings,
            core=cores.watch_process if cores is not None else None,
            drop_managed_fields=True,
        )
        if watch_process
        else None
    )
    try:
        app = SchedulerApp(
            transport,
            options,
            bind_address=bind_address,
            port=port,
            bind_workers=bind_workers,
            lease_transport=lease_transport,
            event_transport=event_transport,
            heap=HeapKeeper(),
            watch_list=watch_list,
            pod_transport=pod_watches,
        )
    except OSError as exc:
        click.echo(f"cannot serve on {bind_address}:{port}: {exc.strerror or exc}", err=True)
        status = EXIT_INPUT
    except TopospreadError as exc:
        # The profiles are built here (a plugin that does not exist, its args refused).
        report_error(exc)
        status = EXIT_INPUT
    else:
        status = app.run_until_signalled()
    if pod_watches is not None:
        pod_watches.close()
    if write_process is not None:
        write_process.close()
    sys.exit(status)
