"""The PodTopologySpread plugin: spreads pods across topology domains.

Split by extension point as upstream: ``plugin`` (construction, args, defaults),
``common`` (the parsed constraint and counting rules), ``filtering`` (PreFilter, Filter,
AddPod/RemovePod) and ``scoring`` (PreScore, Score, NormalizeScore).
"""

from topospread.plugins.podtopologyspread.plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
]
