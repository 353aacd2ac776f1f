"""The NodePorts plugin: a pod's host ports must be free on the node."""

from topospread.plugins.nodeports.node_ports import (
    ERR_REASON,
    NAME,
    PRE_FILTER_STATE_KEY,
    HostPortInfo,
    NodePorts,
    fits_ports,
    host_ports,
    new,
)

__all__ = [
    "ERR_REASON",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "HostPortInfo",
    "NodePorts",
    "fits_ports",
    "host_ports",
    "new",
]
