"""The NodeName plugin: honours a pod's ``spec.nodeName``."""

from topospread.plugins.nodename.node_name import ERR_REASON, NAME, NodeName, fits, new

__all__ = ["ERR_REASON", "NAME", "NodeName", "fits", "new"]
