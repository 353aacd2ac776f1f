"""Starting states for ``rebalance`` on a real control plane, for the live tests and
``benchmarks/rebalance_vs_descheduler.py``.

No kubelet runs beside the test control plane, so :class:`FakeKubelet` stands in for the
part of one that matters here: a pod bound to a node becomes Running and Ready (so the
disruption controller counts it healthy and PodDisruptionBudgets mean something), and a
pod being deleted is removed once its containers would have stopped (grace period 0).
Every scenario uses its own nodes (labelled ``rebalance-scenario=<namespace>``) and its
pods select them, so the session's other nodes are no domains of theirs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from topospread.client.config import Connection
from topospread.client.transport import Request
from topospread.testing.live import Kube, node

__all__ = [
    "SCENARIOS",
    "ApplyProcess",
    "FakeKubelet",
    "Scenario",
    "evict",
    "lease_spec",
    "mark_unready",
    "pod_uids",
    "settle",
    "steal_lease",
]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
SCENARIO_LABEL = "rebalance-scenario"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


class FakeKubelet:
    """Marks bound pods of ``namespaces`` Running and Ready; removes terminating ones."""

    def __init__(self, connection: Connection, namespaces: Sequence[str], period: float = 0.3):
        self.connection = connection
        self.namespaces = list(namespaces)
        self.period = period
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-kubelet", daemon=True)

    def __enter__(self) -> FakeKubelet:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _send(self, method: str, path: str, body: Any = None, content_type: str = "") -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = Request(method, path, body=data, content_type=content_type or "application/json")
        return self.connection.transport.send(request)

    def sync(self) -> None:
        """One pass over the pods."""
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for namespace in self.namespaces:
            response = self._send("GET", f"/api/v1/namespaces/{namespace}/pods")
            if response.status != 200:
                continue
            for pod in json.loads(response.data)["items"]:
                meta, spec = pod["metadata"], pod.get("spec") or {}
                path = f"/api/v1/namespaces/{namespace}/pods/{meta['name']}"
                if meta.get("deletionTimestamp"):
                    self._send(
                        "DELETE",
                        path,
                        {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
                    )
                    continue
                status = pod.get("status") or {}
                if not spec.get("nodeName") or status.get("phase") == "Running":
                    continue
                conditions = [
                    {"type": t, "status": "True", "lastTransitionTime": now}
                    for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                ]
                patch = {"status": {"phase": "Running", "startTime": now, "conditions": conditions}}
                self._send("PATCH", path + "/status", patch, "application/merge-patch+json")

    def pause(self) -> None:
        """Mark and remove nothing until :meth:`resume`: a kubelet that lags, so that a
        rebalance waiting for its evictions to be replaced keeps waiting."""
        self._paused.set()

    def resume(self) -> None:
        """Back to work after :meth:`pause`."""
        self._paused.clear()

    def _run(self) -> None:
        while not self._stop.is_set():
            # A stand-in kubelet keeps going through API hiccups, as a real one does.
            if not self._paused.is_set():
                with contextlib.suppress(Exception):
                    self.sync()
            self._stop.wait(self.period)


def _get(connection: Connection, path: str) -> Any:
    response = connection.transport.send(Request("GET", path))
    return json.loads(response.data)


def pod_uids(connection: Connection, namespace: str) -> set[str]:
    """UIDs of the namespace's pods that are not terminating."""
    items = _get(connection, f"/api/v1/namespaces/{namespace}/pods")["items"]
    return {p["metadata"]["uid"] for p in items if not p["metadata"].get("deletionTimestamp")}


def settle(connection: Connection, namespace: str, timeout: float = 60.0) -> bool:
    """Wait until the namespace's ReplicaSets have all their pods, bound and Ready, none
    terminating; False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sets = _get(connection, f"/apis/apps/v1/namespaces/{namespace}/replicasets")["items"]
        want = sum(int((rs.get("spec") or {}).get("replicas") or 0) for rs in sets)
        pods = _get(connection, f"/api/v1/namespaces/{namespace}/pods")["items"]
        done = (
            len(pods) == want
            and all(not p["metadata"].get("deletionTimestamp") for p in pods)
            and all((p.get("spec") or {}).get("nodeName") for p in pods)
            and all((p.get("status") or {}).get("phase") == "Running" for p in pods)
        )
        if done:
            return True
        time.sleep(0.3)
    return False


def mark_unready(connection: Connection, namespace: str, names: Sequence[str]) -> None:
    """Report the pods Running but not Ready, as a kubelet does while a readiness probe
    fails (:class:`FakeKubelet` leaves Running pods alone)."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = [
        {"type": t, "status": "False", "lastTransitionTime": now, "reason": "ProbeFailed"}
        for t in ("ContainersReady", "Ready")
    ]
    for name in names:
        body = json.dumps({"status": {"phase": "Running", "conditions": conditions}}).encode()
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        request = Request("PATCH", path, body=body, content_type="application/merge-patch+json")
        response = connection.transport.send(request)
        if response.status != 200:
            raise RuntimeError(f"marking {namespace}/{name} unready: HTTP {response.status}")


def evict(connection: Connection, namespace: str, name: str) -> tuple[int, str]:
    """POST a policy/v1 Eviction for the pod: the status and the response body."""
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
    response = connection.transport.send(
        Request("POST", path, body=json.dumps(body).encode(), content_type="application/json")
    )
    return response.status, response.data.decode()


class ApplyProcess:
    """``topospread rebalance --apply -o json`` in its own process (as a second replica or
    a second operator would run it), its standard error read line by line as it comes."""

    def __init__(self, kubeconfig: Path, namespace: str, *args: str) -> None:
        command = [
            sys.executable,
            "-m",
            "topospread.cli",
            "rebalance",
            "--apply",
            "-n",
            namespace,
            "--kubeconfig",
            str(kubeconfig),
            "-o",
            "json",
            *args,
        ]
        self.started = time.monotonic()
        self.lines: list[tuple[float, str]] = []
        """Standard error: (seconds since the start, line)."""
        self.finished: float | None = None
        """Seconds from the start to the exit."""
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._stdout: list[str] = []
        self._readers = [
            threading.Thread(target=self._read_stderr, name="apply-stderr", daemon=True),
            threading.Thread(target=self._read_stdout, name="apply-stdout", daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        self._stdout.append(self._process.stdout.read())

    def wait_for_line(self, pattern: str, timeout: float) -> re.Match[str]:
        """The first line of standard error matching ``pattern``, waited for."""
        deadline = time.monotonic() + timeout
        while True:
            for _, line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            if time.monotonic() > deadline or self._process.poll() is not None:
                time.sleep(0.2)  # the last lines of an exited process
                for _, line in list(self.lines):
                    found = re.search(pattern, line)
                    if found:
                        return found
                raise AssertionError(f"no line matching {pattern!r}: {self.stderr}")
            time.sleep(0.05)

    def when(self, pattern: str) -> float | None:
        """Seconds from the start to the first line matching ``pattern``."""
        return next((t for t, line in self.lines if re.search(pattern, line)), None)

    def finish(self, timeout: float) -> tuple[int, dict[str, Any]]:
        """Wait for the exit: (status, the JSON it printed)."""
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"rebalance --apply still running: {self.stderr}") from None
        self.finished = time.monotonic() - self.started
        self._close()
        stdout = "".join(self._stdout)
        return self._process.returncode, json.loads(stdout) if stdout.strip() else {}

    def kill(self) -> None:
        """Stop it if it still runs (a failed test's cleanup)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._close()

    def _close(self) -> None:
        for reader in self._readers:
            reader.join(5)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()

    @property
    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)


def lease_spec(connection: Connection, namespace: str, name: str) -> dict[str, Any] | None:
    """The Lease's spec, or None while there is none."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
    response = connection.transport.send(Request("GET", path))
    if response.status == 404:
        return None
    spec: dict[str, Any] = json.loads(response.data).get("spec") or {}
    return spec


def steal_lease(
    connection: Connection, namespace: str, name: str, identity: str, duration: int = 60
) -> None:
    """Write the Lease as held by ``identity`` (an operator's edit, a forced takeover),
    read-modify-write with its resourceVersion, again on 409 (its holder renews it)."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
    for _ in range(20):
        lease = json.loads(connection.transport.send(Request("GET", path)).data)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lease["spec"].update(
            holderIdentity=identity,
            leaseDurationSeconds=duration,
            acquireTime=now,
            renewTime=now,
            leaseTransitions=int(lease["spec"].get("leaseTransitions") or 0) + 1,
        )
        body = json.dumps(lease).encode()
        response = connection.transport.send(Request("PUT", path, body=body))
        if response.status == 200:
            return
        if response.status != 409:
            raise RuntimeError(f"writing the Lease: HTTP {response.status}")
    raise RuntimeError("writing the Lease: 20 conflicts in a row")


def budget_observed(connection: Connection, namespace: str, name: str) -> dict[str, Any] | None:
    """The budget's status once the disruption controller has seen its latest spec."""
    budget = _get(connection, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}")
    status: dict[str, Any] = budget.get("status") or {}
    if status.get("observedGeneration", 0) < budget["metadata"].get("generation", 0):
        return None
    return status


# -- building blocks --------------------------------------------------------------------------


def _spread(
    key: str, app: str, max_skew: int = 1, min_domains: int | None = None
) -> dict[str, Any]:
    constraint: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
    }
    if min_domains is not None:
        constraint["minDomains"] = min_domains
    return constraint


def _template(namespace: str, app: str, spread: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "nodeSelector": {SCENARIO_LABEL: namespace},
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
            "topologySpreadConstraints": spread,
        },
    }


def _nodes(kube: Kube, namespace: str, zones: Sequence[str], per_zone: int = 2) -> list[str]:
    names = []
    for zone in zones:
        for i in range(1, per_zone + 1):
            name = f"{namespace}-{zone}-{i}"
            obj = node(name, zone)
            obj["metadata"]["labels"][SCENARIO_LABEL] = namespace
            kube.create(obj)
            names.append(name)
    return names


def _replica_set_with_pods(
    kube: Kube,
    namespace: str,
    app: str,
    spread: list[dict[str, Any]],
    placement: Sequence[str],
) -> None:
    """A ReplicaSet whose pods sit where ``placement`` says (bound at creation, as if an
    earlier scheduler had put them there): the pods are created first, without an owner,
    and the ReplicaSet adopts them (ClaimPods runs before it counts its replicas)."""
    template = _template(namespace, app, spread)
    for i, node_name in enumerate(placement):
        spec = dict(template["spec"], nodeName=node_name)
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{app}-{i:02d}",
                    "namespace": namespace,
                    "labels": {"app": app},
                },
                "spec": spec,
            }
        )
    # The controller's pod informer must have seen them before its first sync.
    time.sleep(1.5)
    kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": app, "namespace": namespace, "labels": {"app": app}},
            "spec": {
                "replicas": len(placement),
                "selector": {"matchLabels": {"app": app}},
                "template": template,
            },
        }
    )

    def adopted() -> bool:
        pods = kube.list("Pod", namespace, f"app={app}")
        return len(pods) == len(placement) and all(
            p["metadata"].get("ownerReferences") for p in pods
        )

    _wait(adopted, 30, f"ReplicaSet {app} adopted its pods")


def _deployment(
    namespace: str, app: str, replicas: int, spread: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": app, "namespace": namespace, "labels": {"app": app}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app}},
            "template": _template(namespace, app, spread),
        },
    }


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.3)


# -- the scenarios --------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A named starting state."""

    name: str
    description: str
    build: Callable[[Kube, Connection, str], None]
    """(admin Kube, admin connection, namespace): creates nodes and workloads; the
    FakeKubelet must be running (the scale-down waits for Ready pods)."""


def _scale_down(kube: Kube, connection: Connection, ns: str) -> None:
    # 12 pods placed by kube-scheduler (4 per zone), then scaled to 7 by the ReplicaSet
    # controller. Its victims are ranked by pod-deletion-cost first (ActivePodsWithRanks):
    # zone-c's pods and one of zone-b's are marked cheap, as a cost-based scale-down policy
    # might, so the controller's topology-blind choice leaves zone counts 4/3/0.
    _nodes(kube, ns, ["zone-a", "zone-b", "zone-c"])
    kube.create(_deployment(ns, "web", 12, [_spread(ZONE, "web")]))

    def settled_at(replicas: int) -> bool:
        sets = kube.list("ReplicaSet", ns, "app=web")
        wanted = sum(rs["spec"]["replicas"] for rs in sets)
        return bool(sets) and wanted == replicas and settle(connection, ns, 1)

    _wait(lambda: settled_at(12), 90, "12 pods scheduled")
    pods = kube.list("Pod", ns, "app=web")
    cheap = [p for p in pods if "-zone-c-" in p["spec"]["nodeName"]]
    cheap += [p for p in pods if "-zone-b-" in p["spec"]["nodeName"]][:1]
    for p in cheap:
        cost = {"metadata": {"annotations": {DELETION_COST: "-100"}}}
        kube.patch("Pod", p["metadata"]["name"], cost, ns)
    # The ReplicaSet controller ranks from its informer's cache: let the annotations reach it.
    time.sleep(2)
    kube.patch("Deployment", "web", {"spec": {"replicas": 7}}, ns)
    _wait(lambda: settled_at(7), 90, "scaled to 7")


def _zone_and_hostname(kube: Kube, connection: Connection, ns: str) -> None:
    # Zones 4/4/0 and one node of zone b holding 3: a plan that picks its zone evictions on
    # the crowded nodes needs 2; balancing each constraint on its own evicts more
    # (descheduler issues #948, #1219).
    nodes = _nodes(kube, ns, ["zone-a", "zone-b", "zone-c"])
    a1, a2, b1, b2, _, _ = nodes
    placement = [a1, a1, a2, a2, b1, b1, b1, b2]
    spread = [_spread(ZONE, "web"), _spread(HOSTNAME, "web")]
    _replica_set_with_pods(kube, ns, "web", spread, placement)


def _recovered_zone(kube: Kube, connection: Connection, ns: str) -> None:
    # Zone c was down while the pods were placed (3/3 over zones a and b); its nodes are
    # back, empty.
    nodes = _nodes(kube, ns, ["zone-a", "zone-b"])
    a1, a2, b1, b2 = nodes
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web")], [a1, a2, a1, b1, b2, b1])
    _nodes(kube, ns, ["zone-c"])


def _min_domains(kube: Kube, connection: Connection, ns: str) -> None:
    # minDomains 3, maxSkew 2: 8 pods over zones a and b (4/4) and a new, empty zone c.
    # Any zone above maxSkew 2 over the empty one violates (the global minimum is 0).
    nodes = _nodes(kube, ns, ["zone-a", "zone-b"])
    a1, a2, b1, b2 = nodes
    _nodes(kube, ns, ["zone-c"])
    placement = [a1, a2, a1, a2, b1, b2, b1, b2]
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web", 2, 3)], placement)


def _min_domains_two_zones(kube: Kube, connection: Connection, ns: str) -> None:
    # minDomains 3, maxSkew 2, only two zones left (as when a third one is taken away):
    # fewer eligible domains than minDomains force the global minimum to 0, so 3/1 is
    # skew 3 for the scheduler, though the counts differ by 2 (descheduler issue #855).
    nodes = _nodes(kube, ns, ["zone-a", "zone-b"])
    a1, a2, b1, _ = nodes
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web", 2, 3)], [a1, a2, a1, b1])


def _two_workloads(kube: Kube, connection: Connection, ns: str) -> None:
    nodes = _nodes(kube, ns, ["zone-a", "zone-b", "zone-c"])
    a1, a2, b1, _, c1, c2 = nodes
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web")], [a1, a2, a1, b1, c1])
    _replica_set_with_pods(kube, ns, "api", [_spread(ZONE, "api")], [c1, c2, c1, c2, b1, a2])


def _pdb_one_at_a_time(kube: Kube, connection: Connection, ns: str) -> None:
    nodes = _nodes(kube, ns, ["zone-a", "zone-b", "zone-c"])
    a1, a2, b1, b2, _, _ = nodes
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web")], [a1, a2, a1, a2, b1, b2, b1])
    kube.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }
    )


def _unready_unhealthy_budget(kube: Kube, connection: Connection, ns: str) -> None:
    # zone-a=3, zone-b=2, zone-c=0; two of zone-a's pods fail their readiness probe, so the
    # budget (minAvailable 4) has 3 healthy of 4 desired: unhealthy, no disruption allowed.
    nodes = _nodes(kube, ns, ["zone-a", "zone-b", "zone-c"])
    a1, a2, b1, b2, _, _ = nodes
    _replica_set_with_pods(kube, ns, "web", [_spread(ZONE, "web")], [a1, a1, a2, b1, b2])
    _wait(lambda: settle(connection, ns, 1), 60, "web's pods Running")
    mark_unready(connection, ns, ["web-01", "web-02"])
    kube.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}},
        }
    )

    def counted() -> bool:
        status = budget_observed(connection, ns, "web")
        return status is not None and (
            status.get("currentHealthy"),
            status.get("desiredHealthy"),
            status.get("disruptionsAllowed", 0),
        ) == (3, 4, 0)

    _wait(counted, 60, "the disruption controller counted 3 healthy of 4")


SCENARIOS: Mapping[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "scale-12-to-7",
            "a 3-zone Deployment scaled 12 → 7 by the controller manager (zones 4/3/0)",
            _scale_down,
        ),
        Scenario(
            "zone-and-hostname",
            "zone + hostname constraints on one workload (zones 4/4/0, one node holds 3)",
            _zone_and_hostname,
        ),
        Scenario("recovered-zone", "a recovered zone that sits empty (3/3/0)", _recovered_zone),
        Scenario(
            "min-domains",
            "minDomains 3, maxSkew 2: 4/4 over two zones and a new, empty third zone",
            _min_domains,
        ),
        Scenario(
            "min-domains-two-zones",
            "minDomains 3, maxSkew 2, 3/1 over the two zones left: the global minimum is 0",
            _min_domains_two_zones,
        ),
        Scenario(
            "two-workloads",
            "two skewed workloads sharing nodes (3/1/1 and 1/1/4)",
            _two_workloads,
        ),
        Scenario(
            "pdb-one-at-a-time",
            "a PDB allowing one disruption at a time (4/3/0)",
            _pdb_one_at_a_time,
        ),
        Scenario(
            "unready-unhealthy-budget",
            "two unready pods in the crowded zone under an unhealthy budget (3/2/0)",
            _unready_unhealthy_budget,
        ),
    )
}
