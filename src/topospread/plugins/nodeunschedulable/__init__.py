"""The NodeUnschedulable plugin: keeps pods off cordoned nodes unless they tolerate it."""

from topospread.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNKNOWN_CONDITION,
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    NodeUnschedulable,
    new,
)

__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "new",
]
