"""Raw objects from a server, through the same decoding as files.

The server validated them on admission, so they are not validated again (validation
ratchets: an older server keeps objects that v1.37's rules would refuse on create).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from topospread.engine.cluster import Cluster
from topospread.errors import DecodeError
from topospread.io.loader import decode_objects
from topospread.model.objects import Pod

__all__ = ["LivePodQuestion", "cluster_from_items", "pod_to_schedule", "read_pod_and_cluster"]

# Kinds listed for other commands (simulate, audit) that explain's cluster does not use; no
# note is printed about skipping them.
_QUIETLY_SKIPPED = ("apps/v1/Deployment ", "apps/v1/DaemonSet ")


def cluster_from_items(
    items: Iterable[dict[str, Any]], source: str, *, admitted: bool = True
) -> tuple[Cluster, list[str]]:
    """Decode listed objects into a :class:`Cluster`, with notes.

    ``admitted=False`` validates them as the API server would on create (objects that did
    not come from a server).
    """
    objects, skipped = decode_objects(list(items), source, admitted=admitted)
    notes = [
        f"{source}: skipped {what} (kind not used by the scheduler)"
        for what in skipped
        if not what.startswith(_QUIETLY_SKIPPED)
    ]
    return Cluster.from_objects(objects), notes


def pod_to_schedule(item: dict[str, Any], source: str) -> tuple[Pod, list[str]]:
    """The pod to explain: as stored, without ``spec.nodeName`` if it is already bound."""
    notes: list[str] = []
    spec = item.get("spec")
    if isinstance(spec, dict) and spec.get("nodeName"):
        meta = item.get("metadata") or {}
        notes.append(
            f"pod {meta.get('namespace')}/{meta.get('name')} is already bound to "
            f"{spec['nodeName']}; explaining where it would be placed if scheduled now"
        )
        item = {**item, "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
    objects, _ = decode_objects([item], source, admitted=True)
    pods = [o for o in objects if isinstance(o, Pod)]
    if len(pods) != 1:
        raise DecodeError(source, message="the server returned something that is not a Pod")
    return pods[0], notes


@dataclass(frozen=True, slots=True)
class LivePodQuestion:
    """A pod of a live cluster and the cluster around it, ready for explain."""

    pod: Pod
    cluster: Cluster
    notes: tuple[str, ...]


def read_pod_and_cluster(
    reference: str,
    namespace: str | None = None,
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
) -> LivePodQuestion:
    """Read the cluster behind the kubeconfig and pick out the pod ``reference`` names.

    ``reference`` is ``pod/NAME``, ``NS/NAME`` or ``NAME`` (in ``namespace``, else the
    context's). Raises ValueError for a reference that contradicts ``namespace``.
    """
    from topospread.client.config import connect
    from topospread.client.live import parse_pod_reference, read_live, take_pod

    name, named_namespace = parse_pod_reference(reference, namespace)
    connection = connect(kubeconfig, context)
    try:
        read = read_live(connection=connection)
        pod_namespace = named_namespace or connection.namespace
        item, rest = take_pod(read, name, pod_namespace, connection)
    finally:
        connection.close()
    cluster, notes = cluster_from_items(rest, read.source)
    pod, pod_notes = pod_to_schedule(item, f"{read.source}: pod {pod_namespace}/{name}")
    return LivePodQuestion(pod, cluster, (*read.notes, *pod_notes, *notes))
