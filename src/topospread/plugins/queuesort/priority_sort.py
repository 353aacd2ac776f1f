"""PrioritySort: the default QueueSort.

Upstream ``pkg/scheduler/framework/plugins/queuesort`` (v1.37.1): ``Less(a, b)`` is true
when ``a``'s priority (``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset) is
higher, or equal with the earlier queue timestamp. As a sort key: ``(-priority,
timestamp)``.
"""

from __future__ import annotations

from typing import Final

from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.model.objects import Pod
from topospread.plugins import names

__all__ = ["NAME", "PrioritySort", "new"]

NAME: Final = names.PRIORITY_SORT


class PrioritySort:
    """Higher priority first, then the pod queued earlier."""

    @property
    def name(self) -> str:
        """``PrioritySort``."""
        return NAME

    def sort_key(self, pod: Pod, timestamp: float) -> tuple[float, ...]:
        """``(-priority, timestamp)``: smaller goes first, as ``Less``."""
        return (-(pod.priority or 0), timestamp)


def new(args: object | None, handle: Handle, features: Features) -> Plugin:
    """The factory (``queuesort.New``); PrioritySort takes no args."""
    del args, handle, features
    return PrioritySort()
