"""What a live cluster says of its autoscaler: Cluster Autoscaler's status ConfigMap and
Karpenter's NodePools (read-only, two requests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from topospread.client.source import NODE_POOLS, Resource, get_object, read_resources
from topospread.client.transport import Transport
from topospread.errors import NotFound
from topospread.io.loader import parse_documents
from topospread.model.pools import CA_STATUS_NAME, CA_STATUS_NAMESPACE

__all__ = ["NODE_POOLS", "AutoscalingRead", "read_autoscaling"]

CONFIG_MAPS: Final = Resource("", "v1", "configmaps", "ConfigMap")


@dataclass(frozen=True, slots=True)
class AutoscalingRead:
    """The autoscalers' own objects of a live cluster."""

    source: str
    cluster_autoscaler_status: Any | None
    """The parsed ``status`` of ``kube-system/cluster-autoscaler-status``; None if absent."""
    nodepools: tuple[dict[str, Any], ...]
    """``karpenter.sh/v1`` NodePools, as served."""


def read_autoscaling(transport: Transport) -> AutoscalingRead:
    """Read Cluster Autoscaler's status ConfigMap (404: no status) and Karpenter's
    NodePools (404: no Karpenter)."""
    source = f"{transport.server}: configmap {CA_STATUS_NAMESPACE}/{CA_STATUS_NAME}"
    status: Any | None = None
    try:
        config_map = get_object(transport, CONFIG_MAPS, CA_STATUS_NAME, CA_STATUS_NAMESPACE)
    except NotFound:
        config_map = None
    if config_map is not None:
        text = ((config_map.get("data") or {}).get("status")) or ""
        documents = parse_documents(text.encode(), source) if text.strip() else []
        status = documents[0] if documents else {}
    read = read_resources(transport, (NODE_POOLS,))
    return AutoscalingRead(source, status, tuple(read.items))
