"""The PrioritySort plugin: the active queue in priority order."""

from topospread.plugins.queuesort.priority_sort import NAME, PrioritySort, new

__all__ = ["NAME", "PrioritySort", "new"]
