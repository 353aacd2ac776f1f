"""A co-scheduling Permit plugin for tests: the members of a gang wait at Permit until
``size`` of them are assumed, then the last one lets the others go (what the
scheduler-plugins' Coscheduling does). Pods name their gang and its size in the labels
``gang`` and ``size``."""

from __future__ import annotations

from collections.abc import Callable

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod

__all__ = ["GANG", "Gang", "gang_factory"]

GANG = "Gang"


class Gang:
    """Wait ``wait`` seconds for the rest of the gang."""

    name = GANG

    def __init__(self, handle: Handle, wait: float) -> None:
        self.handle = handle
        self.wait = wait
        self.assumed_at_permit: list[int] = []
        """Per Permit call: how many members the snapshot held on their nodes."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Wait until the gang is complete; the last member allows the others."""
        del state, node_name
        group, size = pod.labels["gang"], int(pod.labels["size"])
        assert self.handle.waiting_pods is not None
        waiting = [w for w in self.handle.waiting_pods if w.pod.labels.get("gang") == group]
        self.assumed_at_permit.append(
            sum(
                1
                for info in self.handle.snapshot.node_infos
                for p in info.pods
                if p.labels.get("gang") == group
            )
        )
        if len(waiting) + 1 >= size:
            for member in waiting:
                member.allow(self.name)
            return None, 0.0
        return Status(Code.WAIT), self.wait

    def events_to_register(self) -> tuple[()]:
        """No cluster event helps a gang that timed out (only the pod's own update)."""
        return ()


def gang_factory(wait: float, made: list[Gang] | None = None) -> Callable[..., Plugin]:
    """A registry factory for :class:`Gang` (the instances made go to ``made``)."""

    def new(args: object | None, handle: Handle, features: Features) -> Plugin:
        del args, features
        plugin = Gang(handle, wait)
        if made is not None:
            made.append(plugin)
        return plugin

    return new
