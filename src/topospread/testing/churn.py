"""A scheduler under churn and faults, on a real control plane with KWOK's fake kubelets.

One run: a fresh control plane (etcd, kube-apiserver, kube-controller-manager) and kwok
holding ``nodes`` Nodes over three zones; a scheduler (``topospread scheduler`` or
kube-scheduler v1.37.1, as processes, one or two replicas with leader election); then
Deployments whose pods spread over zones (maxSkew 1, DoNotSchedule) and hosts (maxSkew 1,
ScheduleAnyway). While their pods arrive, at set fractions of the first pods bound:

- a third of the Deployments is scaled up by half, another third down by half;
- every Node of one zone is deleted and the pods bound there are deleted (standing in for
  PodGC, without its 40 s quarantine), so their ReplicaSets create them again;
- with ``faults``: kube-apiserver killed and restarted; etcd compacted and the API server
  restarted again, so that watches resume from a compacted revision and must list again
  (the watch cache is off, as on a busy API server whose window has moved on); the leading
  replica SIGKILLed, the standby taking over.

The run ends when every Deployment has its replicas, all bound to Nodes that exist (or at
the timeout). The final checks, from the API server's objects: pods left Pending (with
their FailedScheduling message), pods with more than one ``Scheduled`` Event (bound twice),
Nodes whose pods' requests exceed their allocatable, and DoNotSchedule skews: for
Deployments never scaled down the constraint must hold; a scaled-down Deployment's skew is
reported, since a scale-down removes pods without regard to spread (upstream's documented
limitation).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from topospread.client.config import Connection, connect
from topospread.client.source import RESOURCES, Resource
from topospread.client.transport import Request
from topospread.scheduler.informer import Reflector
from topospread.testing.autoscaler import KWOK_NODE_ANNOTATION, FakeKubelets
from topospread.testing.controlplane import ControlPlane, _free_ports
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import create_all, list_raw, spread_violations

__all__ = [
    "ChurnPlan",
    "ChurnResult",
    "SchedulerProcess",
    "cpu_seconds",
    "run_churn",
    "start_scheduler",
    "topospread_state",
]

ZONE_KEY = "topology.kubernetes.io/zone"
ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACE = "churn"
SCHEDULER_NAME = "default-scheduler"
LEASE = ("kube-system", "churn-scheduler")
CONTROLLERS_GRACE_SECONDS = 60.0
"""How long every pod may stay bound while a Deployment still lacks pods before the run
ends as ``controllers behind``. 30 s was once too short for kube-controller-manager on a
loaded 2-core CI machine (a run without faults, kube-scheduler binding)."""
POD_LIST = '"Listing and watching" type="*v1.Pod"'
"""kube-controller-manager's log line (client-go's reflector, at ``--vmodule=reflector=3``)
when its pod informer lists: once after each ``POD_INFORMER_START``, and again whenever a
watch ended in a way the reflector answers with a new list (an expired resourceVersion, or
a "very short watch" after the API server dropped a watcher that could not keep up)."""
POD_INFORMER_START = '"Starting reflector" type="*v1.Pod"'
LOG_INFORMER_LISTS = "--vmodule=reflector=3"
"""The controller manager's flag that logs its informers' starts and lists (above)."""
FRESH_SECONDS = 15.0
"""An unbound pod younger than this at the final check is arriving, not Pending."""
RESTART_BACKOFF_SECONDS = 10.0
"""The kubelet's first CrashLoopBackOff delay before it starts an exited container again."""
"""Where the replicas elect their leader: a Lease of its own."""


@dataclass(frozen=True)
class ChurnPlan:
    """What one run does. Capacity: 4 CPU Nodes and 100m pods, 40 pods to a Node; the plan
    must leave room for every pod once a zone is gone."""

    nodes: int = 30
    deployments: int = 6
    replicas: int = 30
    """Each Deployment's replicas at first."""
    faults: bool = False
    replicas_of_scheduler: int = 1
    """Scheduler processes; more than one elect a leader (needed with ``faults``)."""
    parallelism: int = 16
    scale_at: float = 0.3
    drain_at: float = 0.6
    restart_at: float = 0.15
    expire_at: float = 0.45
    kill_leader_at: float = 0.75
    """Fractions of the first ``deployments * replicas`` pods bound at which each happens."""
    timeout: float = 600.0
    lease_seconds: int = 6
    """The replicas' leaseDuration (renewDeadline two thirds of it, retryPeriod 1 s)."""

    def __post_init__(self) -> None:
        if self.faults and self.replicas_of_scheduler < 2:
            raise ValueError("a run with faults kills the leader: it needs 2 or more replicas")
        final = self.deployments * self.replicas * 3 // 2
        if final > (self.nodes * 2 // 3) * 40:
            raise ValueError(
                f"{final} pods may not fit on the {self.nodes * 2 // 3} Nodes left after a "
                "zone is deleted (40 pods each)"
            )

    @property
    def first_pods(self) -> int:
        return self.deployments * self.replicas


@dataclass
class ChurnResult:
    """What a run measured and found."""

    @property
    def settled(self) -> bool:
        return self.outcome == "settled"

    scheduler: str
    plan: ChurnPlan
    outcome: str
    """``settled`` (every Deployment's replicas bound to live Nodes), ``controllers
    behind`` (every pod bound, but the ReplicaSets had not made all their pods for
    :data:`CONTROLLERS_GRACE_SECONDS`: the controller manager's workqueues back off
    exponentially, to minutes, after syncs failed during an API server outage) or
    ``timed out``."""
    seconds: float
    """From the Deployments' creation until settled (or the timeout)."""
    cpu_seconds: float
    """All replicas' CPU (a killed leader's read just before the kill)."""
    pods: int
    bound_events: int
    """Pods seen going from unbound to bound."""
    orphans_after_drain: int
    """Pods found bound to a deleted Node after the drain's first sweep: bound to it after
    it was deleted (the scheduler's view lagged), each deleted and made again."""
    last_bind_to_deleted_node: float = 0.0
    """Seconds after the zone's Nodes were deleted that the watch last saw a pod bound to
    one of them (the scheduler's view of the deletions lagging, plus the watch's own)."""
    scheduled_on_deleted_nodes: int = 0
    """``Scheduled`` Events naming one of the zone's deleted Nodes, before or after."""
    binds_after_drain: int = 0
    """Of those, the Events stamped (``eventTime``, the scheduler's clock right after the
    bind) after the last of the Nodes' deletions returned: the scheduler's own lag, without
    the harness watch's."""
    last_bind_after_drain: float = 0.0
    """Seconds after that return that the last of them was stamped (0 when none was)."""
    timeline: list[tuple[float, str]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    bound_twice: list[str] = field(default_factory=list)
    overcommitted: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    scaled_down_skews: dict[str, int] = field(default_factory=dict)
    per_zone: dict[str, int] = field(default_factory=dict)
    mismatched: list[str] = field(default_factory=list)
    """Deployments whose live pods are not their replicas (at the end of a run that did
    not settle), with what the Deployment and its ReplicaSets say."""
    relists: int = -1
    """Watches that expired and listed again (read from topospread's log; -1 when unknown)."""
    controller_manager_relists: int = 0
    """Times kube-controller-manager's pod informer listed again during the run."""
    controller_manager_restarts: int = 0
    """Times the run restarted kube-controller-manager because ReplicaSets stalled after
    such a list (see :meth:`_Run.unstall_controllers`)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "nodes": self.plan.nodes,
            "first_pods": self.plan.first_pods,
            "faults": self.plan.faults,
            "outcome": self.outcome,
            "seconds": round(self.seconds, 2),
            "cpu_seconds": round(self.cpu_seconds, 2),
            "pods": self.pods,
            "bound_events": self.bound_events,
            "orphans_after_drain": self.orphans_after_drain,
            "last_bind_to_deleted_node": round(self.last_bind_to_deleted_node, 2),
            "scheduled_on_deleted_nodes": self.scheduled_on_deleted_nodes,
            "binds_after_drain": self.binds_after_drain,
            "last_bind_after_drain": round(self.last_bind_after_drain, 2),
            "pending": len(self.pending),
            "bound_twice": len(self.bound_twice),
            "overcommitted": len(self.overcommitted),
            "violations": len(self.violations),
            "scaled_down_skews": self.scaled_down_skews,
            "per_zone": self.per_zone,
            "mismatched": self.mismatched,
            "relists": self.relists,
            "controller_manager_relists": self.controller_manager_relists,
            "controller_manager_restarts": self.controller_manager_restarts,
            "timeline": [(round(t, 1), what) for t, what in self.timeline],
        }


# -- objects --------------------------------------------------------------------------------


def churn_node(i: int) -> dict[str, Any]:
    """A 4-CPU Node in zone ``i % 3``, held by kwok's fake kubelet."""
    item = node(f"churn-{i}", ZONES[i % 3], cpu="4", memory="32Gi")
    item["metadata"]["annotations"] = {KWOK_NODE_ANNOTATION: "fake"}
    return item


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    resources = {"cpu": "100m", "memory": "128Mi"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "terminationGracePeriodSeconds": 0,
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE_KEY,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": labels},
                        },
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": labels},
                        },
                    ],
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10.2",
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
    }


def scheduler_config(
    directory: Path, kubeconfig: Path, plan: ChurnPlan, *, leader_elect: bool
) -> Path:
    renew = max(1, plan.lease_seconds * 2 // 3)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 5000, "burst": 5000},
        "parallelism": plan.parallelism,
        "leaderElection": {
            "leaderElect": leader_elect,
            "leaseDuration": f"{plan.lease_seconds}s",
            "renewDeadline": f"{renew}s",
            "retryPeriod": "1s",
            "resourceNamespace": LEASE[0],
            "resourceName": LEASE[1],
        },
    }
    path = directory / "churn-scheduler.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


# -- the scheduler's processes ----------------------------------------------------------------


@dataclass
class SchedulerProcess:
    """One replica: its process, log and (topospread) health port."""

    which: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int
    index: int
    log_offset: int = 0
    """Where this process's output starts in ``log`` (a restarted replica appends)."""
    final_cpu: float | None = None

    def exit_status(self) -> int | None:
        """The exit status once it has exited (reaped with its resource usage), else None."""
        if self.popen.returncode is not None:
            return self.popen.returncode
        pid, status, usage = os.wait4(self.popen.pid, os.WNOHANG)
        if pid == 0:
            return None
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        self.final_cpu = usage.ru_utime + usage.ru_stime
        return self.popen.returncode

    def cpu_seconds(self) -> float:
        """Its CPU time so far, or in all once it has exited."""
        if self.final_cpu is not None:
            return self.final_cpu
        return cpu_seconds(self.popen.pid)

    def leads(self) -> bool:
        if self.exit_status() is not None:
            return False
        if self.which == "topospread":
            return topospread_state(self.port) == "leader"
        # kube-scheduler exits when it loses its Lease: one that acquired it and runs leads.
        with self.log.open("rb") as log:
            log.seek(self.log_offset)
            return b'"Successfully acquired lease"' in log.read()


def start_scheduler(
    which: str,
    plane: ControlPlane,
    config: Path,
    index: int,
    extra_args: Sequence[str] = (),
) -> SchedulerProcess:
    """``topospread scheduler`` (health on a free port) or the pinned kube-scheduler,
    with ``extra_args`` after the common ones."""
    (port,) = _free_ports(1)
    log = plane.workdir / f"{which}-{index}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if which == "kube-scheduler":
        command = [
            str(plane.binaries / "kube-scheduler"),
            f"--config={config}",
            "--secure-port=0",
            "-v=1",
        ]
    else:
        command = [
            sys.executable,
            "-m",
            "topospread.cli",
            "scheduler",
            "--config",
            str(config),
            "--port",
            str(port),
            "--bind-address",
            "127.0.0.1",
            "--log-format",
            "text",
        ]
    command += extra_args
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as handle:
        popen = subprocess.Popen(
            command,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    return SchedulerProcess(which, popen, log, port, index, offset)


def topospread_state(port: int) -> str:
    """The state ``topospread scheduler`` shows on ``/readyz`` (``down`` when it does not
    answer)."""
    try:
        url = f"http://127.0.0.1:{port}/readyz?verbose"
        with urllib.request.urlopen(url, timeout=2) as answer:
            text = answer.read().decode()
    except urllib.error.HTTPError as error:
        with error:  # it holds the answer's socket (see ControlPlane._wait_ready)
            text = error.read().decode()
    except OSError:
        return "down"
    for line in text.splitlines():
        if line.startswith("state: "):
            return str(line.split(": ", 1)[1])
    return "unknown"


def _process_stats() -> dict[int, list[str]]:
    """The fields after the command name of every process's ``/proc/PID/stat``."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    return stats


def child_pids(pid: int) -> list[int]:
    """The live (not zombie) children of process ``pid``."""
    return [
        child
        for child, fields in _process_stats().items()
        if int(fields[1]) == pid and fields[0] != "Z"
    ]


def is_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def own_cpu_seconds(pid: int) -> float:
    """user + system CPU of process ``pid`` alone (its threads, not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + system CPU of a process, its reaped children and its live descendants
    (``topospread scheduler``'s write processes), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats = _process_stats()
    total = 0.0
    family = [pid]
    while family:
        member = family.pop()
        fields = stats.get(member)
        if fields is None:
            continue
        total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks
        family += [child for child, its in stats.items() if int(its[1]) == member]
    return total


# -- what the cluster holds, as a watch sees it ---------------------------------------------------


class PodTracker:
    """The namespace's pods through topospread's own list-watch (it relists after an
    expiry and resumes after a restart): which are bound where, and how many pods have
    gone from unbound to bound."""

    def __init__(self, connection: Connection) -> None:
        self.lock = threading.RLock()
        self.pods: dict[str, dict[str, Any]] = {}
        self.bound_uids: set[str] = set()
        self.bound_at: dict[str, float] = {}
        """uid -> when this watch first saw the pod bound (monotonic)."""
        self.node_of: dict[str, str] = {}
        """uid -> the Node this watch saw the pod bound to (kept after the pod is gone)."""
        self.connection = connection
        self.reflector = Reflector(connection.transport, RESOURCES["Pod"], self)

    def on_add(self, resource: Resource, obj: dict[str, Any]) -> None:
        self._set(obj)

    def on_update(self, resource: Resource, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._set(new)

    def on_delete(self, resource: Resource, obj: dict[str, Any]) -> None:
        with self.lock:
            self.pods.pop(obj["metadata"]["name"], None)

    def _set(self, obj: dict[str, Any]) -> None:
        if obj["metadata"].get("namespace") != NAMESPACE:
            return
        with self.lock:
            self.pods[obj["metadata"]["name"]] = obj
            if obj["spec"].get("nodeName") and obj["metadata"]["uid"] not in self.bound_uids:
                self.bound_uids.add(obj["metadata"]["uid"])
                self.bound_at[obj["metadata"]["uid"]] = time.monotonic()
                self.node_of[obj["metadata"]["uid"]] = obj["spec"]["nodeName"]

    @property
    def bound(self) -> int:
        with self.lock:
            return len(self.bound_uids)

    def live(self) -> list[dict[str, Any]]:
        """Pods not being deleted."""
        with self.lock:
            return [p for p in self.pods.values() if not p["metadata"].get("deletionTimestamp")]


# -- the run ----------------------------------------------------------------------------------


class _Run:
    def __init__(self, which: str, plan: ChurnPlan, plane: ControlPlane) -> None:
        self.which = which
        self.plan = plan
        self.plane = plane
        self.kube = Kube(connect(plane.admin_kubeconfig))
        self.tracker = PodTracker(connect(plane.admin_kubeconfig))
        self.desired = {f"app-{i}": plan.replicas for i in range(plan.deployments)}
        self.scaled_down: set[str] = set()
        self.deleted_nodes: set[str] = set()
        self.late_orphans = 0
        self.drained_at = 0.0
        self.drained_wall = 0.0
        """time.time() when the Nodes' deletions returned: Events' eventTime is wall time."""
        self.last_late_bind = 0.0
        self.swept: set[str] = set()
        self.replicas: list[SchedulerProcess] = []
        self.exited_cpu = 0.0
        self.config: Path | None = None
        self.restarts = 0
        self.exited_at: dict[int, float] = {}
        self.timeline: list[tuple[float, str]] = []
        self.started = 0.0
        self.controller_manager_log = plane.log_file("kube-controller-manager")
        self.controller_manager_log_start = 0
        self.controller_manager_restarts = 0

    def note(self, what: str) -> None:
        self.timeline.append((time.monotonic() - self.started, what))

    def retrying(self, action: Callable[[], Any], attempts: int = 60) -> Any:
        """An admin write, retried while the API server is down or restarting."""
        for attempt in range(attempts):
            try:
                return action()
            except Exception:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.5)
        return None

    def warm_up(self) -> None:
        """Wait until a scheduler binds a first pod (of another namespace): the clock then
        starts with a scheduler up, synced and leading."""
        self.kube.create(pod("warm-up", "default", {"app": "warm-up"}))
        deadline = time.monotonic() + 120
        while not self.kube.get("Pod", "warm-up")["spec"].get("nodeName"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.which} bound no pod within 120 s")
            time.sleep(0.1)

    # -- the events of the run ------------------------------------------------------------

    def scale(self) -> None:
        names = sorted(self.desired)
        for i, name in enumerate(names):
            if i % 3 == 0:
                self.desired[name] = self.plan.replicas * 3 // 2
            elif i % 3 == 1:
                self.desired[name] = self.plan.replicas // 2
                self.scaled_down.add(name)
            else:
                continue
            self.retrying(partial(self._set_replicas, name, self.desired[name]))
        self.note("a third of the Deployments scaled up by half, a third down by half")

    def _set_replicas(self, name: str, replicas: int) -> None:
        self.kube.patch("Deployment", name, {"spec": {"replicas": replicas}}, NAMESPACE)

    def drain_zone(self) -> None:
        zone = ZONES[-1]
        doomed = [f"churn-{i}" for i in range(self.plan.nodes) if ZONES[i % 3] == zone]
        self.deleted_nodes.update(doomed)
        with ThreadPoolExecutor(16) as pool:
            list(
                pool.map(
                    lambda n: self.retrying(lambda: self._delete(f"/api/v1/nodes/{n}")), doomed
                )
            )
        self.drained_at = time.monotonic()
        self.drained_wall = time.time()
        self.note(f"{len(doomed)} Nodes of {zone} deleted")
        self.note(f"{self.sweep()} pods bound there deleted")

    def sweep(self) -> int:
        """Delete the pods bound to deleted Nodes (PodGC's work, at once), one
        ``deletecollection`` per Node (a request per pod managed about 31 deletions/s on a
        loaded API server); how many pods the watch has seen bound there since the last
        sweep (each counted once, even one deleted before the watch showed it bound)."""
        with self.tracker.lock:
            fresh = [
                uid
                for uid, where in self.tracker.node_of.items()
                if where in self.deleted_nodes and uid not in self.swept
            ]
            for uid in fresh:
                seen = self.tracker.bound_at.get(uid, 0.0)
                self.last_late_bind = max(self.last_late_bind, seen - self.drained_at)
            occupied = {
                p["spec"]["nodeName"]
                for p in self.tracker.live()
                if p["spec"].get("nodeName") in self.deleted_nodes
            }
        self.swept.update(fresh)
        with ThreadPoolExecutor(16) as pool:
            list(
                pool.map(
                    lambda n: self.retrying(
                        lambda: self._delete(
                            f"/api/v1/namespaces/{NAMESPACE}/pods",
                            grace_zero=True,
                            field_selector=f"spec.nodeName={n}",
                        )
                    ),
                    sorted(occupied),
                )
            )
        return len(fresh)

    def restart_apiserver(self) -> None:
        self.plane.restart_apiserver(down_seconds=2.0)
        self.note("kube-apiserver killed, down 2 s, restarted")

    def expire_watches(self) -> None:
        revision = self.plane.compact_etcd()
        self.plane.restart_apiserver(down_seconds=1.0, graceful=True)
        self.note(f"etcd compacted at revision {revision}, kube-apiserver stopped and restarted")

    def kill_leader(self) -> None:
        # Right after the API server's outages both replicas may have lost the Lease and
        # exited: keep restarting them (after the kubelet's back-off) while waiting for
        # one to lead, as the main loop would.
        deadline = time.monotonic() + 60
        while True:
            self.supervise()
            leader = next((r for r in self.replicas if r.leads()), None)
            if leader is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if leader is None:
            self.note("no leader to kill")
            return
        leader.popen.send_signal(signal.SIGKILL)
        self.note(f"the leader (replica {leader.index}) SIGKILLed")

    def supervise(self) -> None:
        """Start again, after kubelet's first back-off (10 s), a replica that exited (one
        that lost its Lease exits with status 1, as kube-scheduler does; a killed one
        dies), as the kubelet restarts a scheduler's container."""
        now = time.monotonic()
        for i, replica in enumerate(self.replicas):
            code = replica.exit_status()
            if code is None:
                continue
            if i not in self.exited_at:
                self.exited_cpu += replica.cpu_seconds()
                self.exited_at[i] = now
                self.note(f"replica {replica.index} exited with status {code}")
            elif now - self.exited_at[i] >= RESTART_BACKOFF_SECONDS and self.config:
                del self.exited_at[i]
                self.replicas[i] = start_scheduler(
                    self.which, self.plane, self.config, replica.index
                )
                self.restarts += 1
                self.note(f"replica {replica.index} started again")

    def _delete(
        self, path: str, *, grace_zero: bool = False, field_selector: str | None = None
    ) -> None:
        query: tuple[tuple[str, str], ...] = (("gracePeriodSeconds", "0"),) if grace_zero else ()
        if field_selector is not None:
            query += (("fieldSelector", field_selector),)
        response = self.kube.connection.transport.send(Request("DELETE", path, query))
        if response.status not in (200, 202, 404):
            raise RuntimeError(f"DELETE {path}: {response.status}")

    def controller_manager_relists(self) -> int:
        """How many times kube-controller-manager's pod informer has listed again since the
        clock started (a restarted process's first list is not counted)."""
        with self.controller_manager_log.open("rb") as log:
            log.seek(self.controller_manager_log_start)
            text = log.read().decode(errors="replace")
        return text.count(POD_LIST) - text.count(POD_INFORMER_START)

    def unstall_controllers(self) -> bool:
        """Restart kube-controller-manager once if its pod informer listed again during the
        run, and say whether it did.

        A list replaces the informer's view: a pod created and deleted between the watch's
        end and the list (here: made by a ReplicaSet, bound to a Node of the lost zone,
        deleted by the sweep) is never seen added. The ReplicaSet controller's expectation
        of that creation then stays unmet, and the ReplicaSet makes no pods until the
        expectation expires, 5 minutes later (``ExpectationsTimeout``, k8s.io/kubernetes
        pkg/controller). A new process starts with no expectations.

        Evidence so far: runs that ended with every pod bound and a ReplicaSet short of
        its replicas, its status counting the pods that were there, and no failed create
        in the controller manager's log, which showed a "very short watch" (a relist) of
        its pod informer. Without a relist the run still ends ``controllers behind``."""
        if self.controller_manager_restarts:
            return False
        relists = self.controller_manager_relists()
        if not relists:
            return False
        self.plane.restart_controller_manager()
        self.controller_manager_restarts += 1
        self.note(
            f"kube-controller-manager restarted: ReplicaSets stalled for "
            f"{CONTROLLERS_GRACE_SECONDS:g} s after its pod informer listed again "
            f"{relists} time{'s' if relists != 1 else ''}"
        )
        return True

    # -- progress -------------------------------------------------------------------------

    def progress(self) -> str:
        """``settled``: every Deployment has its replicas, all bound to live Nodes;
        ``scheduling``: a pod is unbound or on a deleted Node; ``controllers``: every pod
        is bound but some Deployment has not got its replicas yet (the controllers' turn)."""
        live = self.tracker.live()
        counts: Counter[str] = Counter()
        for item in live:
            where = item["spec"].get("nodeName")
            if not where or where in self.deleted_nodes:
                return "scheduling"
            counts[item["metadata"]["labels"]["app"]] += 1
        if all(counts[name] == want for name, want in self.desired.items()):
            return "settled"
        return "controllers"

    def run(self) -> ChurnResult:
        plan = self.plan
        self.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        create_all(self.kube, [churn_node(i) for i in range(plan.nodes)], workers=32)
        self.tracker.reflector.start()
        self.config = config = scheduler_config(
            self.plane.workdir,
            self.plane.admin_kubeconfig,
            plan,
            leader_elect=plan.replicas_of_scheduler > 1,
        )
        self.replicas = [
            start_scheduler(self.which, self.plane, config, i)
            for i in range(plan.replicas_of_scheduler)
        ]
        self.warm_up()
        steps: list[tuple[float, Callable[[], None]]] = [
            (plan.scale_at, self.scale),
            (plan.drain_at, self.drain_zone),
        ]
        if plan.faults:
            steps += [
                (plan.restart_at, self.restart_apiserver),
                (plan.expire_at, self.expire_watches),
                (plan.kill_leader_at, self.kill_leader),
            ]
        steps.sort(key=lambda step: step[0])
        self.controller_manager_log_start = self.controller_manager_log.stat().st_size
        self.started = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(self.kube.create, [deployment(n, r) for n, r in self.desired.items()]))
        self.note(f"{plan.deployments} Deployments of {plan.replicas} created")
        deadline = self.started + plan.timeout
        outcome = "timed out"
        waiting_since: float | None = None
        while time.monotonic() < deadline:
            self.supervise()
            bound = self.tracker.bound
            while steps and bound >= steps[0][0] * plan.first_pods:
                _, step = steps.pop(0)
                step()
            if not steps and self.deleted_nodes:
                self.late_orphans += self.sweep()
                state = self.progress()
                if state == "settled":
                    outcome = state
                    break
                if state == "scheduling":
                    waiting_since = None
                elif waiting_since is None:
                    waiting_since = time.monotonic()
                elif time.monotonic() - waiting_since > CONTROLLERS_GRACE_SECONDS:
                    if not self.unstall_controllers():
                        outcome = "controllers behind"
                        break
                    waiting_since = None
            time.sleep(0.25)
        seconds = time.monotonic() - self.started
        self.note(outcome)
        cpu = self.exited_cpu + sum(
            r.cpu_seconds() for i, r in enumerate(self.replicas) if i not in self.exited_at
        )
        result = self.check(outcome, seconds, cpu)
        result.controller_manager_relists = self.controller_manager_relists()
        result.controller_manager_restarts = self.controller_manager_restarts
        return result

    # -- the final checks -----------------------------------------------------------------

    def check(self, outcome: str, seconds: float, cpu: float) -> ChurnResult:
        admin = self.kube.connection
        pods = [
            p
            for p in list_raw(admin, f"/api/v1/namespaces/{NAMESPACE}/pods")
            if not p["metadata"].get("deletionTimestamp")
        ]
        nodes = list_raw(admin, "/api/v1/nodes")
        events = list_raw(admin, f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events")
        scheduled: Counter[str] = Counter()
        failed: dict[str, str] = {}
        on_deleted: list[float] = []
        for event in events:
            uid = (event.get("regarding") or {}).get("uid", "")
            if event.get("reason") == "Scheduled":
                series = (event.get("series") or {}).get("count", 1)
                scheduled[uid] += series
                # "Successfully assigned NAMESPACE/NAME to NODE" (both schedulers).
                node = event.get("note", "").rpartition(" to ")[2]
                if node in self.deleted_nodes and event.get("eventTime"):
                    on_deleted.append(
                        datetime.fromisoformat(event["eventTime"]).timestamp() - self.drained_wall
                    )
            elif event.get("reason") == "FailedScheduling":
                failed[uid] = event.get("note", "")
        result = ChurnResult(
            scheduler=self.which,
            plan=self.plan,
            outcome=outcome,
            seconds=seconds,
            cpu_seconds=cpu,
            pods=len(pods),
            bound_events=self.tracker.bound,
            orphans_after_drain=self.late_orphans,
            last_bind_to_deleted_node=self.last_late_bind,
            scheduled_on_deleted_nodes=len(on_deleted),
            binds_after_drain=sum(1 for late in on_deleted if late > 0),
            last_bind_after_drain=max([0.0, *on_deleted]),
            timeline=self.timeline,
        )
        result.bound_twice = [
            f"{uid}: {n} Scheduled Events" for uid, n in scheduled.items() if n > 1
        ]
        # A pod a controller made in the last seconds (one waking from its back-off as a
        # run ends "controllers behind") is arriving, not lost.
        cutoff = datetime.now(UTC) - timedelta(seconds=FRESH_SECONDS)
        result.pending = [
            f"{p['metadata']['name']}: "
            + failed.get(p["metadata"]["uid"], "no FailedScheduling Event")
            for p in pods
            if not p["spec"].get("nodeName")
            and datetime.fromisoformat(p["metadata"]["creationTimestamp"]) < cutoff
        ]
        zone_of = {n["metadata"]["name"]: n["metadata"]["labels"].get(ZONE_KEY, "") for n in nodes}
        allocatable = {
            n["metadata"]["name"]: _millicores(n["status"]["allocatable"]["cpu"]) for n in nodes
        }
        requested: Counter[str] = Counter()
        per_zone: Counter[str] = Counter()
        by_app: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in pods:
            where = item["spec"].get("nodeName")
            if not where:
                continue
            requested[where] += sum(
                _millicores(c["resources"]["requests"]["cpu"]) for c in item["spec"]["containers"]
            )
            per_zone[zone_of.get(where, "deleted node")] += 1
            by_app[item["metadata"]["labels"]["app"]].append(item)
        sets = list_raw(admin, f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets")
        for app, want in sorted(self.desired.items()):
            have = len(by_app.get(app, ())) + sum(
                1
                for p in pods
                if not p["spec"].get("nodeName") and p["metadata"]["labels"]["app"] == app
            )
            if have != want:
                owned = [
                    f"{r['metadata']['name']} spec {r['spec']['replicas']} "
                    f"status {r['status'].get('replicas', 0)}"
                    for r in sets
                    if r["metadata"]["labels"].get("app") == app
                ]
                result.mismatched.append(f"{app}: {have} pods for {want} ({'; '.join(owned)})")
        result.overcommitted = [
            f"{name}: {requested[name]}m of {allocatable[name]}m"
            for name in requested
            if name in allocatable and requested[name] > allocatable[name]
        ]
        result.per_zone = dict(sorted(per_zone.items()))
        for app, members in sorted(by_app.items()):
            found = spread_violations(members, nodes)
            if app in self.scaled_down:
                counts = Counter(
                    zone_of[p["spec"]["nodeName"]]
                    for p in members
                    if p["spec"]["nodeName"] in zone_of
                )
                live_zones = set(zone_of.values())
                values = [counts.get(z, 0) for z in live_zones]
                result.scaled_down_skews[app] = max(values) - min(values) if values else 0
            else:
                result.violations += found
        if self.which == "topospread":
            result.relists = sum(
                r.log.read_text(errors="replace").count("watch expired, relisting")
                for r in self.replicas
            )
        return result

    def stop(self) -> None:
        for replica in self.replicas:
            if replica.exit_status() is None:
                replica.popen.terminate()
        for replica in self.replicas:
            try:
                replica.popen.wait(20)
            except subprocess.TimeoutExpired:
                replica.popen.kill()
                replica.popen.wait()
        self.tracker.reflector.stop()
        self.tracker.connection.close()
        self.kube.connection.close()


def _millicores(quantity: str) -> int:
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


@contextlib.contextmanager
def churn_cluster(
    binaries: Path | None = None, kwok_files: Path | None = None, *, kwok_lease_seconds: int = 40
) -> Iterator[ControlPlane]:
    """The control plane and kwok of one run: the controller manager's client limits
    raised (its default 20 requests/s would pace the ReplicaSets, not the scheduler), and
    its ReplicaSet controller without KEP-5647's read-your-writes gate: with the gate (beta,
    on since 1.36) the controller stalled after kube-apiserver restarts in 3 of 10 runs
    here, its pod informer's synced resourceVersion stuck below its own writes ("read
    version: 467 is not as new as written version: 688") for minutes, which would time the
    controller manager's recovery, not the scheduler's."""
    with (
        ControlPlane(
            binaries,
            # A kube-apiserver restarted under a large run's load (5,000 Nodes and 50,000
            # pods on 2 cores) took over 60 s to pass its rbac/bootstrap-roles check.
            ready_timeout=300.0,
            extra_controller_manager_args=(
                "--kube-api-qps=1000",
                "--kube-api-burst=1000",
                "--feature-gates=StaleControllerConsistencyReplicaSet=false",
                LOG_INFORMER_LISTS,
            ),
        ) as plane,
        FakeKubelets(plane, kwok_files, lease_seconds=kwok_lease_seconds, parallelism=8),
    ):
        yield plane


def run_churn(
    which: str,
    plan: ChurnPlan,
    *,
    keep_logs: Path | None = None,
    binaries: Path | None = None,
    kwok_files: Path | None = None,
) -> ChurnResult:
    """One run of ``which`` (``topospread`` or ``kube-scheduler``) on a fresh cluster
    (the control plane's binaries and kwok's build from their caches unless given)."""
    # The Nodes' Leases are renewed every quarter of their duration; nothing reads them
    # (the node lifecycle controller is off), so large runs renew them less often than a
    # kubelet's 40 s would (5,000 Nodes: 500 s, 40 renewals/s instead of 500).
    kwok_lease_seconds = max(40, plan.nodes // 10)
    with churn_cluster(binaries, kwok_files, kwok_lease_seconds=kwok_lease_seconds) as plane:
        run = _Run(which, plan, plane)
        try:
            return run.run()
        finally:
            run.stop()
            if keep_logs is not None:
                keep_logs.mkdir(parents=True, exist_ok=True)
                for replica in run.replicas:
                    (keep_logs / replica.log.name).write_bytes(replica.log.read_bytes())
                for name in ("kube-controller-manager", "kube-apiserver", "kwok"):
                    source = plane.workdir / f"{name}.log"
                    if source.exists():
                        (keep_logs / source.name).write_bytes(source.read_bytes())
