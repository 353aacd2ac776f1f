"""The DefaultPreemption PostFilter plugin: preemption of lower-priority pods."""

from topospread.plugins.defaultpreemption.default_preemption import (
    NAME,
    NO_VICTIMS_REASON,
    NOT_HELPFUL_REASON,
    Candidate,
    DefaultPreemption,
    calculate_num_candidates,
    filter_victims_with_pdb_violation,
    more_important_pod,
    new,
    pick_one_node_for_preemption,
    pod_priority,
    pod_terminating_by_preemption,
)

__all__ = [
    "NAME",
    "NOT_HELPFUL_REASON",
    "NO_VICTIMS_REASON",
    "Candidate",
    "DefaultPreemption",
    "calculate_num_candidates",
    "filter_victims_with_pdb_violation",
    "more_important_pod",
    "new",
    "pick_one_node_for_preemption",
    "pod_priority",
    "pod_terminating_by_preemption",
]
