"""A real autoscaler beside the test control plane: KWOK's controller (fake kubelets) and
Karpenter with its KWOK cloud provider, as plain processes on 127.0.0.1.

The binaries and the files read from the same releases (Karpenter's CRDs, the KWOK
provider's instance types, KWOK's Stages) are built by ``bash autoscaler/build.sh`` into a
version-keyed cache directory (:func:`autoscaler_dir`); nothing here builds or downloads.

```python
with ControlPlane(scheduler=True) as cp, Autoscaler(cp) as karpenter:
    karpenter.api.create(node_pool("default", ZONES))
```

Karpenter's KWOK provider turns a NodeClaim into a Node labelled and annotated
``kwok.x-k8s.io/node: fake``; the kwok controller manages exactly those Nodes (Ready at
once, Lease heartbeats) and the pods bound to them (Running at once). kube-scheduler (the
control plane's) binds the pods; Karpenter only creates capacity and nominates.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

from topospread.client.config import Connection, connect
from topospread.client.source import Resource
from topospread.client.transport import Request, raise_for_status

# The control plane's process helpers: the same rules (die with the test runner, tails of
# logs in errors, ports chosen free) for these processes.
from topospread.testing.controlplane import (
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    _die_with_parent_hook,
    _free_ports,
    _Process,
    _stop_processes,
    _tail,
    cache_root,
)

__all__ = [
    "CRD_FILES",
    "HOSTNAME_LABEL",
    "KARPENTER_VERSION",
    "KWOK_NODE_ANNOTATION",
    "KWOK_VERSION",
    "STAGE_FILES",
    "ZONE_LABEL",
    "Api",
    "Autoscaler",
    "AutoscalerUnavailable",
    "Claim",
    "FakeKubelets",
    "autoscaler_dir",
    "claims",
    "find_autoscaler",
    "node_pool",
    "placements",
    "snapshot",
    "wait_for",
]

KWOK_VERSION = "v0.8.0"
"""``sigs.k8s.io/kwok``, as ``autoscaler/kwok/go.mod`` requires it (a test keeps them equal)."""

KARPENTER_VERSION = "v1.15.0"
"""``sigs.k8s.io/karpenter``, as ``autoscaler/karpenter/go.mod`` requires it."""

BINARIES = ("kwok", "karpenter-kwok")

CRD_FILES = (
    "karpenter.sh_nodepools.yaml",
    "karpenter.sh_nodeclaims.yaml",
    "karpenter.sh_nodeoverlays.yaml",
    "autoscaling.x-k8s.io_capacitybuffers.yaml",
    "karpenter.kwok.sh_kwoknodeclasses.yaml",
)
"""In ``crds/`` of the build: Karpenter's own CRDs and the KWOK provider's node class."""

STAGE_FILES = (
    "node-initialize.yaml",
    "node-heartbeat-with-lease.yaml",
    "pod-ready.yaml",
    "pod-complete.yaml",
    "pod-delete.yaml",
)
"""In ``stages/`` of the build: KWOK's "fast" Stages (Nodes and pods Ready at once)."""

NODE_CLASS = "default"
"""The KWOKNodeClass every :func:`node_pool` refers to (it has no settings)."""

KWOK_POD_CIDR = "10.244.0.0/16"
"""Pod IPs kwok hands out: outside the control plane's service range (10.0.0.0/24), where
kwok's own default would give a pod the ``kubernetes`` Service's address."""

_STOP_GRACE_SECONDS = 2.0

T = TypeVar("T")


class AutoscalerUnavailable(ControlPlaneUnavailable):
    """The autoscaler's binaries or files are missing (not built on this machine)."""


# -- where the binaries are ---------------------------------------------------------------------


def autoscaler_dir() -> Path:
    """``$TOPOSPREAD_AUTOSCALER_BIN`` if set, else the version-keyed directory
    ``autoscaler/build.sh`` builds into (beside the control plane's)."""
    explicit = os.environ.get("TOPOSPREAD_AUTOSCALER_BIN")
    if explicit:
        return Path(explicit)
    return cache_root() / "autoscaler" / f"kwok-{KWOK_VERSION}-karpenter-{KARPENTER_VERSION}"


def find_autoscaler(directory: Path | None = None) -> Path:
    """The build directory, checked to hold every binary and file; raises
    :class:`AutoscalerUnavailable` saying what is missing and how to build it."""
    where = autoscaler_dir() if directory is None else directory
    wanted = [
        *BINARIES,
        "instance_types.json",
        *(f"crds/{name}" for name in CRD_FILES),
        *(f"stages/{name}" for name in STAGE_FILES),
    ]
    missing = [
        name
        for name in wanted
        if not (where / name).is_file()
        or (name in BINARIES and not os.access(where / name, os.X_OK))
    ]
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise AutoscalerUnavailable(
            f"no {shown} in {where}; build them with `bash autoscaler/build.sh` "
            "(needs Go and the module proxy)"
        )
    return where


# -- a small client for the kinds these tests touch ---------------------------------------------

_KINDS = {
    "Node": Resource("", "v1", "nodes", "Node", namespaced=False),
    "Pod": Resource("", "v1", "pods", "Pod"),
    "Event": Resource("", "v1", "events", "Event"),
    "Namespace": Resource("", "v1", "namespaces", "Namespace", namespaced=False),
    "Deployment": Resource("apps", "v1", "deployments", "Deployment"),
    "ReplicaSet": Resource("apps", "v1", "replicasets", "ReplicaSet"),
    "CustomResourceDefinition": Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
    ),
    "NodePool": Resource("karpenter.sh", "v1", "nodepools", "NodePool", namespaced=False),
    "NodeClaim": Resource("karpenter.sh", "v1", "nodeclaims", "NodeClaim", namespaced=False),
    "KWOKNodeClass": Resource(
        "karpenter.kwok.sh", "v1alpha1", "kwoknodeclasses", "KWOKNodeClass", namespaced=False
    ),
}


@dataclass
class Api:
    """Create, read, patch and delete the kinds above through topospread's own transport."""

    connection: Connection

    def _call(
        self,
        method: str,
        kind: str,
        name: str | None = None,
        namespace: str | None = None,
        *,
        body: Mapping[str, Any] | None = None,
        query: tuple[tuple[str, str], ...] = (),
        content_type: str = "application/json",
    ) -> Any:
        resource = _KINDS[kind]
        path = resource.path(namespace, name)
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        response = self.connection.transport.send(
            Request(method, path, query, body=data, content_type=content_type)
        )
        raise_for_status(
            response,
            self.connection.server,
            verb=method.lower(),
            resource=resource.plural,
            group=resource.group,
            namespace=namespace,
            name=name,
        )
        return json.loads(response.data)

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        namespace = obj.get("metadata", {}).get("namespace", "default")
        created: dict[str, Any] = self._call("POST", obj["kind"], namespace=namespace, body=obj)
        return created

    def get(self, kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
        found: dict[str, Any] = self._call("GET", kind, name, namespace)
        return found

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str = ""
    ) -> list[dict[str, Any]]:
        """Every object of ``kind`` (in ``namespace``, else cluster-wide), each with its
        ``kind`` and ``apiVersion`` set as a single GET would give them."""
        query = (("labelSelector", label_selector),) if label_selector else ()
        items: list[dict[str, Any]] = self._call("GET", kind, namespace=namespace, query=query)[
            "items"
        ]
        resource = _KINDS[kind]
        return [{"apiVersion": resource.api_version, "kind": kind, **item} for item in items]

    def patch(
        self, kind: str, name: str, patch: Mapping[str, Any], namespace: str = "default"
    ) -> dict[str, Any]:
        """A JSON merge patch."""
        patched: dict[str, Any] = self._call(
            "PATCH", kind, name, namespace, body=patch, content_type="application/merge-patch+json"
        )
        return patched


# -- the autoscaler -----------------------------------------------------------------------------


KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
"""The annotation (value ``fake``) that puts a Node under kwok's fake kubelet: Karpenter's
KWOK provider sets it; tests that create their own Nodes set it too."""


class _Processes:
    """Processes of the autoscaler's build beside ``plane``: spawned with its rules (die
    with the test runner, logs in its work directory), ended by PID."""

    def __init__(self, plane: ControlPlane, directory: Path | None, ready_timeout: float) -> None:
        self.plane = plane
        self.files = find_autoscaler(directory)
        """The build directory: binaries, ``crds/``, ``stages/``, ``instance_types.json``."""
        self.ready_timeout = ready_timeout
        self._processes: list[_Process] = []

    @property
    def pids(self) -> dict[str, int]:
        return {p.name: p.popen.pid for p in self._processes}

    def log_file(self, name: str) -> Path:
        """The combined output of ``kwok`` or ``karpenter``."""
        return self.plane.workdir / f"{name}.log"

    def stop(self) -> None:
        """TERM the processes, KILL what is left after two seconds. Safe to call twice."""
        processes, self._processes = self._processes, []
        _stop_processes(processes, _STOP_GRACE_SECONDS)
        atexit.unregister(self.stop)

    def _start_kwok(self, deadline: float, *, lease_seconds: int, parallelism: int) -> None:
        (port,) = _free_ports(1)
        config = {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokConfiguration",
            "options": {
                # Only the Nodes annotated as fake (Karpenter's KWOK provider annotates each).
                "manageAllNodes": False,
                "manageNodesWithAnnotationSelector": f"{KWOK_NODE_ANNOTATION}=fake",
                "cidr": KWOK_POD_CIDR,
                "nodeIP": "127.0.0.1",
                "nodePort": port,
                "nodeLeaseDurationSeconds": lease_seconds,
                # kwok refuses to start when any of these is 0 (a file's missing value).
                "nodeLeaseParallelism": parallelism,
                "podPlayStageParallelism": parallelism,
                "nodePlayStageParallelism": parallelism,
                "enablePodsOnNodeSyncStreamWatch": True,
            },
        }
        # One multi-document file: the configuration (JSON is YAML) and the Stages, which
        # kwok reads from the file because no Stage CRD is enabled.
        documents = [json.dumps(config)]
        documents += [
            (self.files / "stages" / name).read_text(encoding="utf-8") for name in STAGE_FILES
        ]
        config_file = self.plane.workdir / "kwok.yaml"
        config_file.write_text("\n---\n".join(documents), encoding="utf-8")
        kwok = self._spawn(
            "kwok",
            [
                f"--kubeconfig={self.plane.admin_kubeconfig}",
                f"--config={config_file}",
                f"--server-address=127.0.0.1:{port}",
            ],
            {},
        )
        self._wait_ready(kwok, f"http://127.0.0.1:{port}/healthz", deadline)

    def _spawn(self, name: str, args: list[str], env: Mapping[str, str]) -> _Process:
        log = self.log_file(name)
        handle = log.open("ab")
        binary = "karpenter-kwok" if name == "karpenter" else name
        popen = subprocess.Popen(
            [str(self.files / binary), *args],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=self.plane.workdir,
            env={**_clean_environment(), **env},
            start_new_session=True,
            preexec_fn=_die_with_parent_hook(),
        )
        process = _Process(name, popen, log, handle)
        self._processes.append(process)
        return process

    def _wait_ready(self, process: _Process, url: str, deadline: float) -> None:
        last = "no answer yet"
        while True:
            code = process.popen.poll()
            if code is not None:
                raise ControlPlaneError(
                    f"{process.name} exited with status {code} before it was ready "
                    f"(log {process.log}):\n{_tail(process.log)}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as error:
                with error:  # it holds the answer's socket (see ControlPlane._wait_ready)
                    detail = error.read(500).decode(errors="replace").strip()
                last = f"HTTP {error.code}: {detail}"
            except OSError as error:
                last = str(error)
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"{process.name} was not ready within {self.ready_timeout:g} s "
                    f"({url}: {last}; log {process.log}):\n{_tail(process.log)}"
                )
            time.sleep(0.05)


class FakeKubelets(_Processes):
    """kwok alone against ``plane``: the fake kubelet of every Node annotated
    ``kwok.x-k8s.io/node: fake`` (Ready at once, Lease heartbeats) and of the pods bound to
    them (Running at once; a deleted pod's deletion finished). For runs that bring their
    own Nodes, as scheduler_perf's KWOK runs do.

    ``lease_seconds`` is the Leases' duration (renewed every quarter of it); ``parallelism``
    bounds kwok's concurrent Node, Lease and pod writes."""

    def __init__(
        self,
        plane: ControlPlane,
        directory: Path | None = None,
        *,
        lease_seconds: int = 40,
        parallelism: int = 4,
        ready_timeout: float = 60.0,
    ) -> None:
        super().__init__(plane, directory, ready_timeout)
        self.lease_seconds = lease_seconds
        self.parallelism = parallelism

    def __enter__(self) -> FakeKubelets:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> FakeKubelets:
        if self._processes:
            raise ControlPlaneError("kwok is already running")
        atexit.register(self.stop)
        try:
            self._start_kwok(
                time.monotonic() + self.ready_timeout,
                lease_seconds=self.lease_seconds,
                parallelism=self.parallelism,
            )
        except BaseException:
            self.stop()
            raise
        return self


class Autoscaler(_Processes):
    """kwok + Karpenter's KWOK provider against ``plane``, which must be running (with
    kube-scheduler, and kube-controller-manager for Deployments). :meth:`start` applies the
    CRDs, starts both and creates the KWOKNodeClass; it returns when both answer their
    health checks and the node class is Ready. :meth:`stop` (also run at interpreter exit)
    ends both by PID."""

    def __init__(
        self,
        plane: ControlPlane,
        directory: Path | None = None,
        *,
        batch_idle_seconds: float = 0.5,
        batch_max_seconds: float = 2.0,
        ready_timeout: float = 60.0,
    ) -> None:
        super().__init__(plane, directory, ready_timeout)
        self.batch_idle_seconds = batch_idle_seconds
        """Karpenter's BATCH_IDLE_DURATION (upstream default 1 s): a batch of pending pods
        ends when no new one has come for this long."""
        self.batch_max_seconds = batch_max_seconds
        """Karpenter's BATCH_MAX_DURATION (upstream default 10 s): the longest a batch waits."""
        self._api: Api | None = None

    # -- public surface --------------------------------------------------------------------

    @property
    def instance_types_file(self) -> Path:
        """The KWOK provider's instance types (the file its binary embeds), given to it
        explicitly so that a prediction can read the very same list."""
        return self.files / "instance_types.json"

    @property
    def api(self) -> Api:
        if self._api is None:
            raise ControlPlaneError("the autoscaler is not running")
        return self._api

    def __enter__(self) -> Autoscaler:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> Autoscaler:
        if self._processes:
            raise ControlPlaneError("the autoscaler is already running")
        self._api = Api(connect(self.plane.admin_kubeconfig))
        atexit.register(self.stop)
        try:
            deadline = time.monotonic() + self.ready_timeout
            # Karpenter's readiness check fails until its CRDs are served.
            self._apply_crds(deadline)
            self._start_kwok(deadline, lease_seconds=40, parallelism=4)
            self._start_karpenter(deadline)
            self.api.create(
                {
                    "apiVersion": "karpenter.kwok.sh/v1alpha1",
                    "kind": "KWOKNodeClass",
                    "metadata": {"name": NODE_CLASS},
                }
            )
            wait_for(
                lambda: _condition(self.api.get("KWOKNodeClass", NODE_CLASS), "Ready"),
                max(1.0, deadline - time.monotonic()),
                f"KWOKNodeClass {NODE_CLASS} Ready",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """TERM both processes, KILL what is left after two seconds. Safe to call twice."""
        super().stop()
        if self._api is not None:
            self._api.connection.close()
            self._api = None

    # -- the pieces -------------------------------------------------------------------------

    def _apply_crds(self, deadline: float) -> None:
        names = []
        for file in CRD_FILES:
            crd = yaml.safe_load((self.files / "crds" / file).read_text(encoding="utf-8"))
            self.api.create(crd)
            names.append(crd["metadata"]["name"])
        for name in names:
            wait_for(
                partial(self._established, name),
                max(1.0, deadline - time.monotonic()),
                f"CRD {name} Established",
            )

    def _established(self, crd: str) -> bool:
        return _condition(self.api.get("CustomResourceDefinition", crd), "Established")

    def _start_karpenter(self, deadline: float) -> None:
        metrics, health = _free_ports(2)
        env = {
            "KUBECONFIG": str(self.plane.admin_kubeconfig),
            # Outside a cluster there is no namespace for its Lease: one replica, no election.
            "DISABLE_LEADER_ELECTION": "true",
            # Both bind every interface; distinct free ports let runs sit side by side.
            "METRICS_PORT": str(metrics),
            "HEALTH_PROBE_PORT": str(health),
            "BATCH_IDLE_DURATION": f"{self.batch_idle_seconds:g}s",
            "BATCH_MAX_DURATION": f"{self.batch_max_seconds:g}s",
            "INSTANCE_TYPES_FILE_PATH": str(self.instance_types_file),
            "LOG_LEVEL": "debug",
        }
        karpenter = self._spawn("karpenter", [], env)
        self._wait_ready(karpenter, f"http://127.0.0.1:{health}/readyz", deadline)


def _clean_environment() -> dict[str, str]:
    """The runner's environment without what would point the processes elsewhere: another
    cluster's kubeconfig, or Karpenter settings of the developer's shell."""
    dropped = {"KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def _condition(obj: Mapping[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        # A just-created object may carry "conditions": null.
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


# -- objects and waiting ------------------------------------------------------------------------


def node_pool(
    name: str,
    zones: Sequence[str] | None,
    *,
    cpu_limit: str = "1000",
    capacity_types: Iterable[str] = ("on-demand",),
    architectures: Iterable[str] = ("amd64",),
) -> dict[str, Any]:
    """A ``karpenter.sh/v1`` NodePool of linux nodes from the KWOK provider: in ``zones``
    (``None``: every zone the instance types are offered in), never expiring, never
    consolidated (so that the nodes a test sees are the ones the batch made)."""
    requirements = [
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": list(architectures)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity_types)},
    ]
    if zones is not None:
        requirements.append(
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)}
        )
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "requirements": requirements,
                    "nodeClassRef": {
                        "group": "karpenter.kwok.sh",
                        "kind": "KWOKNodeClass",
                        "name": NODE_CLASS,
                    },
                    "expireAfter": "Never",
                }
            },
            "limits": {"cpu": cpu_limit},
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "Never",
            },
        },
    }


def wait_for(
    check: Callable[[], T | None], timeout: float, what: str, *, interval: float = 0.1
) -> T:
    """Call ``check`` until it returns something true; return that. After ``timeout``
    seconds raise AssertionError naming ``what`` and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {what} (last: {value!r})"
            )
        time.sleep(interval)


# -- what the cluster holds -----------------------------------------------------------------------

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
NODE_POOL_LABEL = "karpenter.sh/nodepool"


@dataclass(frozen=True)
class Claim:
    """A NodeClaim Karpenter made, once launched: where, what, and the Node it became."""

    name: str
    pool: str
    zone: str
    instance_type: str
    node: str
    ready: bool


def claims(api: Api) -> list[Claim]:
    """Every NodeClaim, by name; zone and instance type are those of the launched instance
    (empty until the provider has launched it)."""
    found = []
    for claim in api.list("NodeClaim"):
        labels = claim["metadata"].get("labels", {})
        status = claim.get("status", {})
        found.append(
            Claim(
                name=claim["metadata"]["name"],
                pool=labels.get(NODE_POOL_LABEL, ""),
                zone=labels.get(ZONE_LABEL, ""),
                instance_type=labels.get(INSTANCE_TYPE_LABEL, ""),
                node=status.get("nodeName", ""),
                ready=_condition(claim, "Ready"),
            )
        )
    return sorted(found, key=lambda c: c.name)


def placements(api: Api, namespace: str, selector: str) -> dict[str, str]:
    """Each pod matching ``selector`` → the zone of the node it is bound to ("" while
    Pending)."""
    zones = {
        n["metadata"]["name"]: n["metadata"].get("labels", {}).get(ZONE_LABEL, "")
        for n in api.list("Node")
    }
    return {
        p["metadata"]["name"]: zones.get(p["spec"].get("nodeName", ""), "")
        for p in api.list("Pod", namespace, selector)
        if not p["metadata"].get("deletionTimestamp")
    }


def snapshot(api: Api) -> list[dict[str, Any]]:
    """The objects ``topospread explain --cluster`` reads, as ``kubectl get -o yaml`` of the
    cluster gives them: Nodes, Namespaces, Pods, ReplicaSets."""
    return [
        *api.list("Node"),
        *api.list("Namespace"),
        *api.list("Pod"),
        *api.list("ReplicaSet"),
    ]
