"""Raw objects from a server, through the same decoding as files.

The server validated them on admission, so they are not validated again (validation
ratchets: an older server keeps objects that v1.37's rules would refuse on create).
:func:`decode_stored` is that decoding, for every live path: ``explain pod/NAME``,
``read_cluster`` and the scheduler's informers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from topospread.engine.cluster import Cluster
from topospread.errors import DecodeError
from topospread.io.loader import decode_objects, skip_notes
from topospread.model.objects import KubeObject, Pod

__all__ = [
    "LivePodQuestion",
    "cluster_from_items",
    "decode_stored",
    "pod_to_schedule",
    "read_pod_and_cluster",
]



def decode_stored(items: Sequence[Any], source: str) -> tuple[list[KubeObject], tuple[str, ...]]:
    """Objects read from an API server, decoded as stored: types, quantities and duplicate
    keys are checked, create-time validation is not. The server validated each object when
    it was written, with the rules of its release and ratcheting (an update may keep a
    value that a create would refuse, e.g. since v1.32 an invalid label value in a pod's
    required node affinity: ``AllowInvalidLabelValueInRequiredNodeAffinity``), so
    validating again as a create would drop objects the cluster holds and schedules.
    Returns the objects and ``apiVersion/Kind name`` of each kind not read."""
    return decode_objects(list(items), source, admitted=True)


def cluster_from_items(
    items: Iterable[dict[str, Any]], source: str, *, admitted: bool = True
) -> tuple[Cluster, list[str]]:
    """Decode listed objects into a :class:`Cluster`, with notes.

    ``admitted=False`` validates them as the API server would on create (objects that did
    not come from a server).
    """
    if admitted:
        objects, skipped = decode_stored(list(items), source)
    else:
        objects, skipped = decode_objects(list(items), source)
    return Cluster.from_objects(objects), skip_notes(skipped, source)


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
    objects, _ = decode_stored([item], source)
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
    source: str
    """The server and the pod, for messages (``https://...: pod NS/NAME``)."""


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
    from topospread.client.live import parse_pod_reference, read_live
    from topospread.client.source import PODS, SCHEDULER_RESOURCES, Page, get_object

    name, named_namespace = parse_pod_reference(reference, namespace)
    connection = connect(kubeconfig, context)
    pod_namespace = named_namespace or connection.namespace
    decoded: dict[str, list[KubeObject]] = {}
    skipped: list[str] = []
    found: dict[str, Any] | None = None

    def decode_page(page: Page) -> None:
        # Decoded as pages arrive, while the server prepares the next ones.
        nonlocal found
        items = page.items
        if page.restart:
            decoded[page.resource.plural] = []
            if page.resource is PODS:
                found = None
        if page.resource is PODS and found is None:
            for index, item in enumerate(items):
                meta = item.get("metadata") or {}
                if meta.get("name") == name and meta.get("namespace") == pod_namespace:
                    found, items = item, items[:index] + items[index + 1 :]
                    break
        objects, skipped_here = decode_stored(items, connection.server)
        decoded.setdefault(page.resource.plural, []).extend(objects)
        skipped.extend(skipped_here)

    try:
        read = read_live(connection=connection, on_page=decode_page)
        if found is None:
            # Created after its page was listed: fetch it directly (404: not found).
            found = get_object(connection.transport, PODS, name, pod_namespace)
    finally:
        connection.close()
    objects = [o for r in SCHEDULER_RESOURCES for o in decoded.get(r.plural, ())]
    cluster = Cluster.from_objects(objects)
    source = f"{read.source}: pod {pod_namespace}/{name}"
    pod, pod_notes = pod_to_schedule(found, source)
    notes = (*read.notes, *pod_notes, *skip_notes(skipped, read.source))
    return LivePodQuestion(pod, cluster, notes, source)
