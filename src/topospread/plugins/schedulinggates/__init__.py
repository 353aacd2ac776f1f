"""The SchedulingGates plugin: a pod with ``spec.schedulingGates`` waits outside the queue."""

from topospread.plugins.schedulinggates.scheduling_gates import NAME, SchedulingGates, new

__all__ = ["NAME", "SchedulingGates", "new"]
