"""Read what the scheduler reads from a live API server: paginated lists, in parallel.

Each resource is listed with ``limit``/``continue`` pages as client-go's pager does (an
expired continue token, 410 Gone, falls back to one full list, like
``pager.FullListIfExpired``), every resource in its own thread. Items come back as the
server sent them (raw JSON objects with ``kind`` and ``apiVersion`` filled in, since list
items carry neither) so that ``snapshot`` writes exactly what was read and the decoder is
topospread's own. Nothing is written to the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson

from topospread import KUBERNETES_VERSION
from topospread.client.transport import Request, Transport, query, raise_for_status
from topospread.errors import ClusterError, go_quote

__all__ = [
    "AUDIT_RESOURCES",
    "DEFAULT_PAGE_SIZE",
    "SCHEDULER_RESOURCES",
    "ClusterRead",
    "Resource",
    "get_object",
    "read_resources",
    "server_version",
    "version_skew_note",
]

DEFAULT_PAGE_SIZE = 500
"""Items per list page: kubectl's and client-go's pager's default chunk size."""


@dataclass(frozen=True, slots=True)
class Resource:
    """A listable API resource."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        """``v1`` or ``group/version``, as objects carry it."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The collection (or object) path, cluster-wide unless a namespace is given."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name is not None else base


NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
SERVICES = Resource("", "v1", "services", "Service")
REPLICATION_CONTROLLERS = Resource("", "v1", "replicationcontrollers", "ReplicationController")
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet")
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", "StatefulSet")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
DAEMON_SETS = Resource("apps", "v1", "daemonsets", "DaemonSet")
POD_DISRUPTION_BUDGETS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
JOBS = Resource("batch", "v1", "jobs", "Job")
CRON_JOBS = Resource("batch", "v1", "cronjobs", "CronJob")

SCHEDULER_RESOURCES: tuple[Resource, ...] = (
    NODES,
    PODS,
    NAMESPACES,
    SERVICES,
    REPLICATION_CONTROLLERS,
    REPLICA_SETS,
    STATEFUL_SETS,
    DEPLOYMENTS,
    POD_DISRUPTION_BUDGETS,
)
"""What kube-scheduler's informers watch that topospread models, plus Deployments (the
owners of ReplicaSets, for the simulator and audit)."""

AUDIT_RESOURCES: tuple[Resource, ...] = (*SCHEDULER_RESOURCES, DAEMON_SETS, JOBS, CRON_JOBS)
"""What ``audit`` reads: the scheduler's objects and every workload kind that owns pods."""


@dataclass(frozen=True, slots=True)
class ClusterRead:
    """The raw objects read from a server, in list order per resource."""

    server: str
    items: tuple[dict[str, Any], ...]
    """Every object, resources in :data:`SCHEDULER_RESOURCES` order."""
    counts: dict[str, int]
    """Objects per kind."""
    requests: int
    """List requests sent (pages)."""


def _list_all(
    transport: Transport, resource: Resource, namespace: str | None, page_size: int
) -> tuple[list[dict[str, Any]], int]:
    items: list[dict[str, Any]] = []
    token: str | None = None
    pages = 0
    limit: int | None = page_size
    while True:
        pages += 1
        response = transport.send(
            Request(
                "GET",
                resource.path(namespace),
                query(limit=limit if limit else None, **{"continue": token}),
            )
        )
        if response.status == 410 and token is not None:
            # The continue token expired mid-list: start over with one unpaginated list
            # (client-go's pager.FullListIfExpired).
            items, token, limit = [], None, None
            continue
        raise_for_status(
            response,
            transport.server,
            verb="list",
            resource=resource.plural,
            group=resource.group,
            namespace=namespace if resource.namespaced else None,
        )
        try:
            page = orjson.loads(response.data)
        except orjson.JSONDecodeError as exc:
            raise ClusterError(
                f"{transport.server}: list {resource.plural}: the response is not JSON ({exc})"
            ) from None
        page_items = page.get("items") if isinstance(page, dict) else None
        if not isinstance(page_items, list):
            raise ClusterError(
                f"{transport.server}: list {resource.plural}: the response has no items"
            )
        for item in page_items:
            if isinstance(item, dict):
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
        metadata = page.get("metadata") or {}
        token = metadata.get("continue") or None
        if not token or limit is None:
            return items, pages


def read_resources(
    transport: Transport,
    resources: Sequence[Resource] = SCHEDULER_RESOURCES,
    *,
    namespace: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    workers: int | None = None,
) -> ClusterRead:
    """List ``resources`` (cluster-wide, or namespaced ones in ``namespace``) in parallel.

    Raises the first :class:`ClusterError` any list met; then nothing is returned, so a
    read that fails midway leaves nothing half-done behind.
    """
    if page_size < 1:
        raise ValueError("page_size must be positive")

    def one(resource: Resource) -> tuple[list[dict[str, Any]], int]:
        return _list_all(transport, resource, namespace, page_size)

    with ThreadPoolExecutor(max_workers=workers or len(resources) or 1) as pool:
        results = list(pool.map(one, resources))
    items: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    requests = 0
    for resource, (found, pages) in zip(resources, results, strict=True):
        items.extend(found)
        counts[resource.kind] = len(found)
        requests += pages
    return ClusterRead(transport.server, tuple(items), counts, requests)


def get_object(
    transport: Transport, resource: Resource, name: str, namespace: str | None = None
) -> dict[str, Any]:
    """GET one object; 404 raises NotFound worded as kubectl words it."""
    response = transport.send(Request("GET", resource.path(namespace, name)))
    raise_for_status(
        response,
        transport.server,
        verb="get",
        resource=resource.plural,
        group=resource.group,
        namespace=namespace if resource.namespaced else None,
        name=name,
    )
    obj = orjson.loads(response.data)
    if not isinstance(obj, dict):
        raise ClusterError(f"{transport.server}: get {resource.plural}/{name}: not an object")
    obj.setdefault("apiVersion", resource.api_version)
    obj.setdefault("kind", resource.kind)
    return obj


def server_version(transport: Transport) -> str:
    """The server's ``gitVersion`` from ``/version``."""
    response = transport.send(Request("GET", "/version"))
    raise_for_status(response, transport.server, verb="get", resource="version")
    try:
        info = orjson.loads(response.data)
    except orjson.JSONDecodeError:
        return ""
    return str(info.get("gitVersion", "")) if isinstance(info, dict) else ""


_MINOR = re.compile(r"^v?(\d+)\.(\d+)")


def version_skew_note(git_version: str, server: str) -> str | None:
    """A warning when the server's minor release is not the one topospread decides as."""
    ours = _MINOR.match(KUBERNETES_VERSION)
    theirs = _MINOR.match(git_version)
    assert ours is not None
    if theirs is None:
        return (
            f"{server} reports version {go_quote(git_version)}; topospread decides as "
            f"kube-scheduler {KUBERNETES_VERSION}"
        )
    if theirs.groups() == ours.groups():
        return None
    older = tuple(map(int, theirs.groups())) < tuple(map(int, ours.groups()))
    relation = "older" if older else "newer"
    return (
        f"{server} runs Kubernetes {git_version}, {relation} than the kube-scheduler "
        f"{KUBERNETES_VERSION} topospread decides as; its own scheduler may decide differently"
    )
