"""A live cluster as explain, simulate, snapshot and audit read it.

:func:`read_live` connects with kubectl's kubeconfig rules, checks the server's version
and lists every resource the scheduler reads, cluster-wide (a faithful answer needs the
pods of every namespace: they use node resources and count for inter-pod affinity).
:func:`take_pod` picks the pod to explain out of what was read. The raw objects then go
through the same decoding and validation as files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from topospread.client.config import Connection, connect
from topospread.client.source import (
    DEFAULT_PAGE_SIZE,
    PODS,
    SCHEDULER_RESOURCES,
    Page,
    Resource,
    get_object,
    read_resources,
    server_version,
    stream_pages,
    version_skew_note,
)
from topospread.errors import KubeconfigError, NotFound, go_quote
from topospread.io.loader import paused_gc

__all__ = ["LiveRead", "parse_pod_reference", "read_live", "take_pod"]


@dataclass(frozen=True, slots=True)
class LiveRead:
    """Raw objects read from one API server, with what the user should know about them."""

    server: str
    context: str
    namespace: str
    """The context's namespace (``-n`` overrides it where a command takes a namespace)."""
    version: str
    """The server's gitVersion."""
    items: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    requests: int
    """List pages fetched."""

    @property
    def source(self) -> str:
        """How messages name this input: the server's URL."""
        return self.server


def read_live(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    *,
    resources: Sequence[Resource] = SCHEDULER_RESOURCES,
    page_size: int | None = None,
    connection: Connection | None = None,
    on_page: Callable[[Page], None] | None = None,
) -> LiveRead:
    """Connect (unless ``connection`` is given) and list ``resources`` cluster-wide.

    ``page_size`` is the list chunk size (kubectl's ``--chunk-size``): 500, or
    ``$TOPOSPREAD_CHUNK_SIZE``. With ``on_page``, each page goes to it as it arrives
    (while the server prepares the next) and ``items`` stays empty.
    """
    if page_size is None:
        page_size = _chunk_size_from_environment()
    own = connection is None
    conn = connection if connection is not None else connect(kubeconfig, context)
    try:
        version = server_version(conn.transport)
        notes = [n for n in (version_skew_note(version, conn.server),) if n]
        with paused_gc():
            if on_page is None:
                read = read_resources(conn.transport, resources, page_size=page_size)
                items, requests = read.items, read.requests
            else:
                sent: list[int] = []
                for page in stream_pages(
                    conn.transport, resources, page_size=page_size, counter=sent
                ):
                    on_page(page)
                items, requests = (), sum(sent)
    finally:
        if own:
            conn.close()
    return LiveRead(
        conn.server, conn.context, conn.namespace, version, items, tuple(notes), requests
    )


def _chunk_size_from_environment() -> int:
    raw = os.environ.get("TOPOSPREAD_CHUNK_SIZE", "")
    if not raw:
        return DEFAULT_PAGE_SIZE
    if not raw.isdigit() or not 0 < int(raw) <= 1_000_000:
        raise KubeconfigError(
            f"TOPOSPREAD_CHUNK_SIZE: Invalid value: {go_quote(raw)}: "
            "must be an integer between 1 and 1000000"
        )
    return int(raw)


_POD_TYPES = frozenset({"pod", "pods", "po"})
# kubectl's names (and short names) of the other types a workload reference may use:
# read as a type, not as a namespace, as kubectl reads TYPE/NAME.
_OTHER_TYPES = frozenset(
    {
        "deployment", "deployments", "deploy", "replicaset", "replicasets", "rs",
        "statefulset", "statefulsets", "sts", "daemonset", "daemonsets", "ds", "job", "jobs",
        "cronjob", "cronjobs", "cj", "replicationcontroller", "replicationcontrollers", "rc",
        "service", "services", "svc", "node", "nodes", "no", "namespace", "namespaces", "ns",
    }
)  # fmt: skip


def parse_pod_reference(reference: str, namespace: str | None) -> tuple[str, str | None]:
    """``pod/NAME`` (``pods``, ``po``, any case, as kubectl), ``NS/NAME`` or ``NAME`` →
    (name, namespace or None); ValueError for another type (``deployment/web``) or an
    empty name."""
    kind, slash, rest = reference.partition("/")
    if not slash:
        return reference, namespace
    if not kind or not rest or "/" in rest:
        # kubectl: "arguments in resource/name form must have a single resource and name"
        raise ValueError(f"{reference}: expected pod/NAME, NAMESPACE/NAME or NAME")
    if kind.lower() in _POD_TYPES:
        return rest, namespace
    if kind.lower() in _OTHER_TYPES:
        raise ValueError(f"{reference}: explain takes a pod (pod/NAME), not a {kind.lower()}")
    if namespace is not None and namespace != kind:
        raise ValueError(f"{reference} names namespace {kind}, but --namespace says {namespace}")
    return rest, kind


def take_pod(
    read: LiveRead, name: str, namespace: str, connection: Connection | None = None
) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """The named pod, and every other object read.

    Raises NotFound (``pods "NAME" not found``, as kubectl says) when no such pod was listed.
    """
    pod: dict[str, Any] | None = None
    rest: list[dict[str, Any]] = []
    for item in read.items:
        meta = item.get("metadata") or {}
        if (
            pod is None
            and item.get("kind") == "Pod"
            and meta.get("name") == name
            and meta.get("namespace") == namespace
        ):
            pod = item
        else:
            rest.append(item)
    if pod is None and connection is not None:
        # Created after the list was taken: fetch it directly.
        pod = get_object(connection.transport, PODS, name, namespace)
    if pod is None:
        raise NotFound(f'pods "{name}" not found in namespace "{namespace}"')
    return pod, tuple(rest)
