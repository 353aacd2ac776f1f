"""Live fixtures of the scheduler tests: a scheduler running in this process.

``run_scheduler`` starts a :class:`SchedulerApp` against a control plane with one profile
under a unique schedulerName (so it takes only its own pods in the shared cluster) and
stops it at the end of the test; ``watch_process=True`` reads its pod watch in a watch
process, as ``topospread scheduler`` does by default on 2 or more cores.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from topospread.client.config import connect
from topospread.client.watch_process import WatchProcessTransport
from topospread.client.write_process import ConnectionSettings
from topospread.scheduler.app import SchedulerApp
from topospread.scheduler.informer import StreamingTransport
from topospread.scheduler.options import options_from_document
from topospread.testing.scheduling import wait_for

RunScheduler = Callable[..., SchedulerApp]


def scheduler_options(scheduler_name: str, **extra: Any):
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
        **extra,
    }
    return options_from_document(document, "test-config")


@pytest.fixture
def run_scheduler() -> Iterator[RunScheduler]:
    apps: list[SchedulerApp] = []
    transports: list[StreamingTransport] = []
    watch_processes: list[WatchProcessTransport] = []

    def start(
        kubeconfig: Path,
        scheduler_name: str,
        *,
        transport: StreamingTransport | None = None,
        watch_list: bool = False,
        watch_process: bool = False,
        **extra: Any,
    ) -> SchedulerApp:
        transport = transport or connect(kubeconfig).transport
        transports.append(transport)
        pod_transport = None
        if watch_process:
            pod_transport = WatchProcessTransport(
                transport, ConnectionSettings(str(kubeconfig)), drop_managed_fields=True
            )
            watch_processes.append(pod_transport)
        app = SchedulerApp(
            transport,
            scheduler_options(scheduler_name, **extra),
            port=None,
            bind_address="127.0.0.1",
            seed=1,
            watch_list=watch_list,
            pod_transport=pod_transport,
        )
        apps.append(app)
        app.start()
        wait_for(lambda: app.state == "leader", 60, what="the scheduler to sync")
        return app

    yield start
    for app in apps:
        app.stop(drain_timeout=10)
    for watches in watch_processes:
        watches.close()
    # Closed here, not left to the garbage collector: an unclosed TLS socket warns in
    # whichever later test collects it.
    for used in transports:
        close = getattr(used, "close", None)
        if close is not None:
            close()


@pytest.fixture
def scheduler_name() -> str:
    return f"topospread-{secrets.token_hex(3)}"
