"""Faults, each a bounded run ending with every pod bound once (or Pending for a reason).

A private control plane (no controller manager, so nothing but the test and the scheduler
writes pods; the API server's watch cache off, so that a compaction of etcd expires
watches as it would on a busy cluster's cache):

- kube-apiserver killed and restarted while binds are in flight, and a watch expired
  (resourceVersion compacted away) forcing a relist, each with the pod watch read in
  this process and in a watch process;
- pods bound by another client between the cycle and the bind (409);
- a Node deleted between the cycle and the bind;
- two replicas with leader election, each sending its writes from a write process and
  reading its pod watch in a watch process, the leader SIGKILLed: both its children exit,
  the standby takes over within leaseDuration plus a few seconds and posts its Events,
  and on SIGTERM releases the Lease.

The final check compares the API server's pods with the scheduler's cache: no pod lost,
none bound twice, none left assumed.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from topospread.client.config import Connection, connect
from topospread.client.transport import Request, Response
from topospread.scheduler.api import RateLimitedTransport
from topospread.scheduler.app import SchedulerApp
from topospread.scheduler.informer import Backoff
from topospread.testing.churn import child_pids, is_running, start_scheduler, topospread_state
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import create_all, list_pods, wait_for


@pytest.fixture(scope="module")
def plane(control_plane_binaries) -> Iterator[ControlPlane]:
    with ControlPlane(
        control_plane_binaries,
        controller_manager=False,
        extra_apiserver_args=("--watch-cache=false",),
    ) as cp:
        yield cp


@pytest.fixture(scope="module")
def kube(plane: ControlPlane) -> Iterator[Kube]:
    connection = connect(plane.admin_kubeconfig)
    yield Kube(connection)
    connection.close()


@pytest.fixture
def admin(plane: ControlPlane) -> Iterator[Connection]:
    """The test's own reads, on connections closed at its end (a socket left to the
    garbage collector would warn in whichever later test collects it)."""
    connection = connect(plane.admin_kubeconfig)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def nodes(plane: ControlPlane, kube: Kube) -> list[str]:
    names = [f"fault-n{i}" for i in range(30)]
    create_all(kube, [node(name, f"fz{i % 3}") for i, name in enumerate(names)], workers=16)
    return names


SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "f"}},
    }
]


def make_pods(namespace: str, scheduler: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    pods = []
    for i in range(start, start + count):
        item = pod(f"p{i}", namespace, {"app": "f"}, spread=SPREAD)
        item["spec"]["schedulerName"] = scheduler
        pods.append(item)
    return pods


def namespace_for(kube: Kube, name: str) -> str:
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def all_bound(admin, namespace: str, count: int) -> Callable[[], bool]:
    def check() -> bool:
        pods = list_pods(admin, namespace)
        return len(pods) == count and all(p["spec"].get("nodeName") for p in pods)

    return check


def check_final(app: SchedulerApp, admin, namespace: str, count: int) -> list[dict[str, Any]]:
    """Every pod bound, and the scheduler's cache agrees with the API server (confirmed,
    not assumed, on the same node)."""
    pods = list_pods(admin, namespace)
    assert len(pods) == count
    assert all(p["spec"].get("nodeName") for p in pods), "a pod was lost"

    def cache_agrees() -> bool:
        cache = app.scheduler.cache
        with cache.lock:
            for item in pods:
                key = f"{namespace}/{item['metadata']['name']}"
                cached = cache.pods.get(key)
                if cached is None or cached.assumed:
                    return False
                if cached.pod.node_name != item["spec"]["nodeName"]:
                    return False
        return True

    wait_for(cache_agrees, 30, 0.2, "the cache to agree with the API server")
    assert app.scheduler.queue.pods() == []
    return pods


class ScriptedTransport:
    """The scheduler's transport with a hook run before each bind is sent."""

    def __init__(self, inner, before_bind: Callable[[Request], None]) -> None:
        self.inner = inner
        self.before_bind = before_bind

    @property
    def server(self) -> str:
        return self.inner.server

    def send(self, request: Request) -> Response:
        if request.method == "POST" and request.path.endswith("/binding"):
            self.before_bind(request)
        return self.inner.send(request)

    def stream(self, request, *, read_timeout=None, on_open=None):
        return self.inner.stream(request, read_timeout=read_timeout, on_open=on_open)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("watch_process", [False, True], ids=["pods watched here", "in a child"])
def test_apiserver_killed_and_restarted_mid_run(
    plane, kube, admin, nodes, run_scheduler, scheduler_name, unique_name, watch_process
):
    namespace = namespace_for(kube, unique_name("restart"))
    transport = RateLimitedTransport(connect(plane.admin_kubeconfig).transport, 25, 5)
    app = run_scheduler(
        plane.admin_kubeconfig, scheduler_name, transport=transport, watch_process=watch_process
    )
    create_all(kube, make_pods(namespace, scheduler_name, 150), workers=16)
    wait_for(lambda: app.scheduler.scheduled >= 20, 30, 0.05, "the first binds")
    plane.restart_apiserver(down_seconds=2.0)
    wait_for(all_bound(admin, namespace, 150), 120, 0.5, "every pod bound after the restart")
    check_final(app, admin, namespace, 150)
    assert app.metrics.binds.labels("error")._value.get() >= 1  # binds failed in the outage
    assert sum(r.watches for r in app.scheduler.reflectors) > len(app.scheduler.reflectors)


@pytest.mark.parametrize("watch_process", [False, True], ids=["pods watched here", "in a child"])
def test_watch_expiry_forces_a_relist(
    plane, kube, admin, nodes, run_scheduler, scheduler_name, unique_name, watch_process
):
    namespace = namespace_for(kube, unique_name("expiry"))
    app = run_scheduler(plane.admin_kubeconfig, scheduler_name, watch_process=watch_process)
    pods_reflector = next(r for r in app.scheduler.reflectors if r.resource.plural == "pods")
    # Long enough to create pods and compact etcd before the watch is opened again.
    pods_reflector._backoff = Backoff(initial=3.0, maximum=3.0, jitter=0.0)
    lists = pods_reflector.lists
    pods_reflector.cut_watch()
    create_all(kube, make_pods(namespace, scheduler_name, 40), workers=16)
    plane.compact_etcd()
    wait_for(all_bound(admin, namespace, 40), 60, 0.5, "the pods seen by the relist to be bound")
    assert pods_reflector.lists == lists + 1
    check_final(app, admin, namespace, 40)


def test_with_watch_lists_the_state_streams_and_streams_again_after_an_expiry(
    plane, kube, admin, nodes, run_scheduler, scheduler_name, unique_name, caplog
):
    namespace = namespace_for(kube, unique_name("watchlist"))
    create_all(kube, make_pods(namespace, scheduler_name, 20), workers=16)
    with caplog.at_level(logging.WARNING, logger="topospread.scheduler.informer"):
        app = run_scheduler(plane.admin_kubeconfig, scheduler_name, watch_list=True)
        wait_for(all_bound(admin, namespace, 20), 60, 0.5, "the pods streamed at start bound")
        pods_reflector = next(r for r in app.scheduler.reflectors if r.resource.plural == "pods")
        pods_reflector._backoff = Backoff(initial=3.0, maximum=3.0, jitter=0.0)
        lists = pods_reflector.lists
        pods_reflector.cut_watch()
        create_all(kube, make_pods(namespace, scheduler_name, 40, start=20), workers=16)
        plane.compact_etcd()
        wait_for(all_bound(admin, namespace, 60), 60, 0.5, "the pods streamed again bound")
    assert pods_reflector.lists == lists + 1
    assert pods_reflector.streamed == pods_reflector.lists == 2
    assert "watch-list failed" not in caplog.text
    check_final(app, admin, namespace, 60)


def test_pods_bound_by_another_client_while_in_flight(
    plane, kube, admin, nodes, run_scheduler, scheduler_name, unique_name
):
    namespace = namespace_for(kube, unique_name("race"))
    raced: dict[str, str] = {}
    lock = threading.Lock()

    def bind_first(request: Request) -> None:
        # Every third pod is bound by "someone else" to the last node just before ours.
        body = json.loads(request.body or b"{}")
        name = body["metadata"]["name"]
        with lock:
            if int(name[1:]) % 3 or name in raced:
                return
            raced[name] = nodes[-1]
        answer = admin.transport.send(
            Request(
                "POST",
                f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
                body=json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Binding",
                        "metadata": {"name": name},
                        "target": {"kind": "Node", "name": nodes[-1]},
                    }
                ).encode(),
            )
        )
        assert answer.status == 201

    transport = ScriptedTransport(connect(plane.admin_kubeconfig).transport, bind_first)
    app = run_scheduler(plane.admin_kubeconfig, scheduler_name, transport=transport)
    create_all(kube, make_pods(namespace, scheduler_name, 60), workers=16)
    wait_for(all_bound(admin, namespace, 60), 60, 0.5, "every pod bound")
    pods = check_final(app, admin, namespace, 60)
    assert len(raced) == 20
    for item in pods:
        if item["metadata"]["name"] in raced:
            assert item["spec"]["nodeName"] == nodes[-1]
    assert app.metrics.binds.labels("conflict")._value.get() == 20
    assert app.scheduler.scheduled == 40


def test_node_deleted_while_pods_are_in_flight(
    plane, kube, admin, nodes, run_scheduler, scheduler_name, unique_name
):
    namespace = namespace_for(kube, unique_name("gone"))
    victim = f"{unique_name('doomed')}"
    kube.create(node(victim, "fz0", cpu="64"))
    deleted = threading.Event()

    def delete_target(request: Request) -> None:
        body = json.loads(request.body or b"{}")
        if body["target"]["name"] == victim and not deleted.is_set():
            deleted.set()
            answer = admin.transport.send(Request("DELETE", f"/api/v1/nodes/{victim}"))
            assert answer.status == 200

    transport = ScriptedTransport(connect(plane.admin_kubeconfig).transport, delete_target)
    app = run_scheduler(plane.admin_kubeconfig, scheduler_name, transport=transport)
    wait_for(lambda: app.scheduler.cache.snapshot.get(victim) is not None, 30)
    create_all(kube, make_pods(namespace, scheduler_name, 60), workers=16)
    wait_for(all_bound(admin, namespace, 60), 60, 0.5, "every pod bound")
    assert deleted.is_set()
    check_final(app, admin, namespace, 60)
    # Once the deletion reached the cache no pod goes there: a second batch avoids it.
    wait_for(lambda: app.scheduler.cache.snapshot.get(victim) is None, 30)
    create_all(kube, make_pods(namespace, scheduler_name, 30, start=60), workers=16)
    wait_for(all_bound(admin, namespace, 90), 60, 0.5, "the second batch bound")
    pods = check_final(app, admin, namespace, 90)
    later = [p for p in pods if int(p["metadata"]["name"][1:]) >= 60]
    assert all(p["spec"]["nodeName"] != victim for p in later)


def test_two_replicas_leader_killed_standby_takes_over(
    plane, kube, admin, nodes, scheduler_name, unique_name
):
    namespace = namespace_for(kube, unique_name("ha"))
    lease = unique_name("lease")
    lease_duration = 6
    config = plane.workdir / f"{lease}.json"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": str(plane.admin_kubeconfig)},
                "leaderElection": {
                    "leaderElect": True,
                    "leaseDuration": f"{lease_duration}s",
                    "renewDeadline": "4s",
                    "retryPeriod": "1s",
                    "resourceName": lease,
                    "resourceNamespace": "default",
                },
                "profiles": [{"schedulerName": scheduler_name}],
            }
        )
    )
    started = [
        start_scheduler("topospread", plane, config, index, ("--write-processes", "1"))
        for index in range(2)
    ]
    replicas = [replica.popen for replica in started]
    ports = [replica.port for replica in started]
    try:
        wait_for(
            lambda: sorted(topospread_state(p) for p in ports) == ["leader", "standby"],
            60,
            0.3,
            "one leader and one standby",
        )
        leader = next(i for i, p in enumerate(ports) if topospread_state(p) == "leader")
        standby = 1 - leader
        create_all(kube, make_pods(namespace, scheduler_name, 20))
        wait_for(all_bound(admin, namespace, 20), 30, 0.3, "the leader to bind")
        children = child_pids(replicas[leader].pid)
        assert len(children) == 2  # its write process and its watch process
        replicas[leader].send_signal(signal.SIGKILL)
        replicas[leader].wait()
        killed = time.monotonic()
        create_all(kube, make_pods(namespace, scheduler_name, 20, start=20))
        wait_for(
            all_bound(admin, namespace, 40),
            lease_duration + 20,
            0.2,
            "the standby to take over and bind",
        )
        takeover = time.monotonic() - killed
        assert takeover <= lease_duration + 5, f"took {takeover:.1f} s"
        assert topospread_state(ports[standby]) == "leader"
        alive = [child for child in children if is_running(child)]
        assert not alive, "the killed leader's write or watch process lives on"
        holder = json.loads(
            admin.transport.send(
                Request("GET", f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{lease}")
            ).data
        )
        assert holder["spec"]["leaseTransitions"] == 1
        # SIGTERM: in-flight binds finish, the Lease is released, exit status 0.
        replicas[standby].send_signal(signal.SIGTERM)
        assert replicas[standby].wait(30) == 0
        events = json.loads(
            admin.transport.send(
                Request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
            ).data
        )["items"]
        scheduled = {e["regarding"]["name"] for e in events if e["reason"] == "Scheduled"}
        assert {f"p{i}" for i in range(20, 40)} <= scheduled
        released = json.loads(
            admin.transport.send(
                Request("GET", f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{lease}")
            ).data
        )
        assert not released["spec"].get("holderIdentity")
        print(
            f"standby took over {takeover:.1f} s after the leader was killed "
            f"(leaseDuration {lease_duration} s)"
        )
    finally:
        for process in replicas:
            if process.poll() is None:
                process.kill()
                process.wait()
