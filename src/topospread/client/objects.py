"""Raw objects from a server, through the same decoding as files.

The server validated them on admission, so they are not validated again (validation
ratchets: an older server keeps objects that v1.37's rules would refuse on create).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topospread.engine.cluster import Cluster
from topospread.errors import DecodeError
from topospread.io.loader import decode_objects
from topospread.model.objects import Pod

__all__ = ["cluster_from_items", "pod_to_schedule"]

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
