"""The InterPodAffinity plugin: required and preferred inter-pod (anti-)affinity.

Split by extension point as upstream: ``plugin`` (construction, args, Skip rules),
``terms`` (a pod's terms with compiled selectors and namespaces), ``filtering``
(PreFilter, Filter, AddPod/RemovePod) and ``scoring`` (PreScore, Score, NormalizeScore).
"""

from topospread.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    InterPodAffinity,
    new,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "InterPodAffinity",
    "new",
]
