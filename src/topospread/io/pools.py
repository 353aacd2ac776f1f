"""Reading node pools: ``--node-pools`` files, template Nodes in ``--cluster`` files, and
the instance types of Karpenter's KWOK provider (``--instance-types``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from topospread.errors import DecodeError, InputError
from topospread.io.loader import load_documents
from topospread.io.reader import display_name, read_input
from topospread.model.decode import decode_documents
from topospread.model.objects import Node
from topospread.model.pools import (
    KARPENTER_API_VERSION,
    InstanceType,
    NodePool,
    decode_instance_types,
    is_pool_template,
    karpenter_pools,
    template_pools,
)

__all__ = ["load_instance_types", "load_node_pools"]


def _flatten(documents: Sequence[Any]) -> Iterator[Any]:
    for document in documents:
        if isinstance(document, dict) and isinstance(document.get("items"), list):
            yield from _flatten(document["items"])
        elif document is not None:
            yield document


def _allocatable_from_capacity(document: dict[str, Any]) -> dict[str, Any]:
    # A template written with status.capacity only: the kubelet reports allocatable equal
    # to capacity when nothing is reserved, so a new node's allocatable is its capacity.
    status = document.get("status")
    if isinstance(status, dict) and "allocatable" not in status and "capacity" in status:
        return {**document, "status": {**status, "allocatable": status["capacity"]}}
    return document


def load_instance_types(path: Path | str) -> tuple[InstanceType, ...]:
    """The KWOK provider's ``instance_types.json``."""
    source = display_name(path)
    try:
        data = orjson.loads(read_input(path))
    except orjson.JSONDecodeError as exc:
        raise DecodeError(source, message=f"invalid JSON: {exc}") from None
    return decode_instance_types(data, source)


def load_node_pools(
    paths: Sequence[Path | str],
    templates_in_cluster: Sequence[Node] = (),
    instance_types: Sequence[InstanceType] = (),
) -> tuple[NodePool, ...]:
    """Pools from ``--node-pools`` files (template Nodes annotated
    ``autoscaling.topospread.dev/pool`` and ``karpenter.sh/v1`` NodePools, single, in
    Lists or several documents) and from template Nodes found in ``--cluster`` files.

    A pool name given twice (two NodePools, or a NodePool and templates) is refused; so is
    a file with neither templates nor NodePools, and any other kind in it."""
    pools: list[NodePool] = []
    if templates_in_cluster:
        pools.extend(template_pools(templates_in_cluster, "--cluster"))
    for path in paths:
        source = display_name(path)
        nodepools: list[dict[str, Any]] = []
        nodes: list[Any] = []
        problems: list[str] = []
        for document in _flatten(load_documents(path)):
            if not isinstance(document, dict):
                problems.append("expected Kubernetes objects")
                continue
            kind, version = document.get("kind"), document.get("apiVersion")
            if kind == "NodePool" and version == KARPENTER_API_VERSION:
                nodepools.append(document)
            elif kind == "NodePool":
                problems.append(
                    f"NodePool: unsupported apiVersion {version!r} (want {KARPENTER_API_VERSION!r})"
                )
            elif kind == "Node":
                nodes.append(_allocatable_from_capacity(document))
            else:
                metadata = document.get("metadata")
                name = metadata.get("name") if isinstance(metadata, dict) else None
                problems.append(
                    f"{version}/{kind}{f' {name}' if name else ''}: not a node pool (give "
                    "template Nodes annotated autoscaling.topospread.dev/pool, or "
                    "karpenter.sh/v1 NodePools)"
                )
        templates = [n for n in decode_documents(nodes, source).objects if isinstance(n, Node)]
        problems += [
            f"Node {n.name}: metadata.annotations[autoscaling.topospread.dev/pool]: "
            "Required value (a node pool's template names its pool)"
            for n in templates
            if not is_pool_template(n)
        ]
        if problems:
            raise InputError(source, problems)
        if not templates and not nodepools:
            raise InputError(source, message="no node pools (no template Nodes, no NodePools)")
        if templates:
            pools.extend(template_pools(templates, source))
        if nodepools:
            pools.extend(karpenter_pools(nodepools, instance_types, source))
    seen: set[str] = set()
    for pool in pools:
        if pool.name in seen:
            raise InputError("--node-pools", message=f"pool {pool.name!r} is given twice")
        seen.add(pool.name)
    return tuple(pools)
