"""Read what the scheduler reads from a live API server: paginated lists, in parallel.

Each resource is listed with ``limit``/``continue`` pages as client-go's pager does (an
expired continue token, 410 Gone, falls back to one full list, like
``pager.FullListIfExpired``), every resource in its own thread. Items come back as the
server sent them (raw JSON objects with ``kind`` and ``apiVersion`` filled in, since list
items carry neither) so that ``snapshot`` writes exactly what was read and the decoder is
topospread's own. Nothing is written to the cluster.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from topospread import KUBERNETES_VERSION
from topospread.client.transport import Request, Transport, query, raise_for_status
from topospread.errors import ClusterError, go_quote
from topospread.model.kinds import KINDS, Kind, Listing

__all__ = [
    "AUDIT_RESOURCES",
    "DEFAULT_PAGE_SIZE",
    "DRA_RESOURCES",
    "NODE_POOLS",
    "RESOURCES",
    "SCHEDULER_RESOURCES",
    "STORAGE_RESOURCES",
    "ClusterRead",
    "Page",
    "Resource",
    "get_object",
    "read_resources",
    "resource_of",
    "server_version",
    "stream_pages",
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
    optional: bool = False
    """A server that does not serve it (404 on the list) has none of these objects."""

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


def resource_of(kind: Kind) -> Resource:
    """The listable resource of one row of the kinds table."""
    return Resource(
        kind.group,
        kind.version,
        kind.plural,
        kind.kind,
        namespaced=kind.namespaced,
        optional=kind.optional,
    )


RESOURCES: Final[Mapping[str, Resource]] = {k.kind: resource_of(k) for k in KINDS}
"""The resource of every kind in :data:`topospread.model.kinds.KINDS`, by kind, in the
table's order."""

NODES = RESOURCES["Node"]
PODS = RESOURCES["Pod"]
NAMESPACES = RESOURCES["Namespace"]
SERVICES = RESOURCES["Service"]
REPLICATION_CONTROLLERS = RESOURCES["ReplicationController"]
REPLICA_SETS = RESOURCES["ReplicaSet"]
STATEFUL_SETS = RESOURCES["StatefulSet"]
DEPLOYMENTS = RESOURCES["Deployment"]
DAEMON_SETS = RESOURCES["DaemonSet"]
POD_DISRUPTION_BUDGETS = RESOURCES["PodDisruptionBudget"]
JOBS = RESOURCES["Job"]
CRON_JOBS = RESOURCES["CronJob"]
PRIORITY_CLASSES = RESOURCES["PriorityClass"]
LIMIT_RANGES = RESOURCES["LimitRange"]
RUNTIME_CLASSES = RESOURCES["RuntimeClass"]
PERSISTENT_VOLUMES = RESOURCES["PersistentVolume"]
PERSISTENT_VOLUME_CLAIMS = RESOURCES["PersistentVolumeClaim"]
STORAGE_CLASSES = RESOURCES["StorageClass"]
CSI_NODES = RESOURCES["CSINode"]
CSI_DRIVERS = RESOURCES["CSIDriver"]
CSI_STORAGE_CAPACITIES = RESOURCES["CSIStorageCapacity"]
VOLUME_ATTACHMENTS = RESOURCES["VolumeAttachment"]
RESOURCE_CLAIMS = RESOURCES["ResourceClaim"]
RESOURCE_CLAIM_TEMPLATES = RESOURCES["ResourceClaimTemplate"]
DEVICE_CLASSES = RESOURCES["DeviceClass"]
RESOURCE_SLICES = RESOURCES["ResourceSlice"]
DEVICE_TAINT_RULES = RESOURCES["DeviceTaintRule"]
NODE_POOLS = RESOURCES["NodePool"]

STORAGE_RESOURCES: tuple[Resource, ...] = (
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    STORAGE_CLASSES,
    CSI_NODES,
    CSI_DRIVERS,
    CSI_STORAGE_CAPACITIES,
    VOLUME_ATTACHMENTS,
)
"""What the volume plugins read (kube-scheduler's informers for VolumeBinding, VolumeZone,
NodeVolumeLimits and VolumeRestrictions)."""

DRA_RESOURCES: tuple[Resource, ...] = (
    RESOURCE_CLAIMS,
    RESOURCE_CLAIM_TEMPLATES,
    DEVICE_CLASSES,
    RESOURCE_SLICES,
    DEVICE_TAINT_RULES,
)
"""What DynamicResources reads (``resource.k8s.io/v1``, GA since 1.34; a server without
it, or with DeviceTaintRules off, answers 404 and has none)."""

SCHEDULER_RESOURCES: tuple[Resource, ...] = tuple(
    RESOURCES[k.kind] for k in KINDS if k.listed is Listing.SCHEDULER
)
"""What every live read lists (the table's :data:`~topospread.model.kinds.Listing.SCHEDULER`
rows): what kube-scheduler's informers watch that topospread models, plus Deployments (the
owners of ReplicaSets, for the simulator and audit) and what the API server's admission
reads: PriorityClasses, LimitRanges and RuntimeClasses (pods read from a server are
admitted already; a pod explained or simulated from a manifest is admitted over the
cluster's objects, :func:`topospread.model.admission.admit_pod`)."""

AUDIT_RESOURCES: tuple[Resource, ...] = (
    *SCHEDULER_RESOURCES,
    *(RESOURCES[k.kind] for k in KINDS if k.listed is Listing.AUDIT),
)
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


@dataclass(frozen=True, slots=True)
class Page:
    """One page of one list, as it arrives."""

    resource: Resource
    items: list[dict[str, Any]]
    """The page's objects, ``kind`` and ``apiVersion`` filled in."""
    restart: bool = False
    """The list started over (an expired continue token): earlier pages of this resource
    are void."""


_DONE = object()


def _list_pages(
    transport: Transport,
    resource: Resource,
    namespace: str | None,
    page_size: int,
    deliver: Callable[[Page], None],
    stop: threading.Event,
) -> int:
    token: str | None = None
    pages = 0
    limit: int | None = page_size
    restart = False
    while not stop.is_set():
        pages += 1
        response = transport.send(
            Request(
                "GET",
                resource.path(namespace),
                query(limit=limit if limit else None, **{"continue": token}),
            )
        )
        if response.status == 404 and resource.optional and token is None:
            # The API (group or version) is not served: no such objects.
            break
        if response.status == 410 and token is not None:
            # The continue token expired mid-list: start over with one unpaginated list
            # (client-go's pager.FullListIfExpired).
            token, limit, restart = None, None, True
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
        items = []
        for item in page_items:
            if isinstance(item, dict):
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
        metadata = page.get("metadata") or {}
        token = metadata.get("continue") or None
        deliver(Page(resource, items, restart))
        restart = False
        if not token or limit is None:
            break
    return pages


def stream_pages(
    transport: Transport,
    resources: Sequence[Resource] = SCHEDULER_RESOURCES,
    *,
    namespace: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    counter: list[int] | None = None,
) -> Iterator[Page]:
    """List ``resources`` in parallel, yielding each page as soon as it is parsed.

    One thread per resource fetches and parses pages (urllib3 and TLS release the GIL),
    so the API server prepares the next page while the caller handles this one. The first
    :class:`ClusterError` any list meets is raised here, and the other lists stop.
    ``counter``, when given, receives the number of requests sent.
    """
    if page_size < 1:
        raise ValueError("page_size must be positive")
    arrived: queue.SimpleQueue[object] = queue.SimpleQueue()
    stop = threading.Event()
    requests = [0]

    def work(resource: Resource) -> None:
        try:
            requests.append(
                _list_pages(transport, resource, namespace, page_size, arrived.put, stop)
            )
        except BaseException as exc:  # handed to the consumer, which raises it
            arrived.put(exc)
        finally:
            arrived.put(_DONE)

    threads = [
        threading.Thread(target=work, args=(r,), name=f"list-{r.plural}", daemon=True)
        for r in resources
    ]
    for thread in threads:
        thread.start()
    running = len(threads)
    try:
        while running:
            found = arrived.get()
            if found is _DONE:
                running -= 1
            elif isinstance(found, BaseException):
                raise found
            else:
                assert isinstance(found, Page)
                yield found
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        if counter is not None:
            counter.append(sum(requests))


def read_resources(
    transport: Transport,
    resources: Sequence[Resource] = SCHEDULER_RESOURCES,
    *,
    namespace: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> ClusterRead:
    """List ``resources`` (cluster-wide, or namespaced ones in ``namespace``) in parallel.

    Raises the first :class:`ClusterError` any list met; then nothing is returned, so a
    read that fails midway leaves nothing half-done behind.
    """
    by_resource: dict[str, list[dict[str, Any]]] = {r.plural: [] for r in resources}
    sent: list[int] = []
    for page in stream_pages(
        transport, resources, namespace=namespace, page_size=page_size, counter=sent
    ):
        if page.restart:
            by_resource[page.resource.plural] = []
        by_resource[page.resource.plural].extend(page.items)
    items = [item for r in resources for item in by_resource[r.plural]]
    counts = {r.kind: len(by_resource[r.plural]) for r in resources}
    return ClusterRead(transport.server, tuple(items), counts, sum(sent))


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
