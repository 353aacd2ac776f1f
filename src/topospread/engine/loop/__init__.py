"""The scheduling loop every scheduler of topospread runs: the queue, the scheduling
cycle and the binding cycle (:mod:`.loop`, :mod:`.queue`)."""

from topospread.engine.loop.loop import (
    UNSUPPORTED_CLAIMS_MESSAGE,
    Attempt,
    ClusterPort,
    Failure,
    ListedNominator,
    Reservation,
    SchedulingLoop,
    attempt,
    build_frameworks,
    queue_sort_key,
    queueing_hints,
)
from topospread.engine.loop.memory import MemoryScheduler, RecordedEvent
from topospread.engine.loop.queue import (
    QueuedPodInfo,
    QueueingHintMap,
    SchedulingQueue,
    build_queueing_hint_map,
    priority_order,
)

__all__ = [
    "UNSUPPORTED_CLAIMS_MESSAGE",
    "Attempt",
    "ClusterPort",
    "Failure",
    "ListedNominator",
    "MemoryScheduler",
    "QueuedPodInfo",
    "QueueingHintMap",
    "RecordedEvent",
    "Reservation",
    "SchedulingLoop",
    "SchedulingQueue",
    "attempt",
    "build_frameworks",
    "build_queueing_hint_map",
    "priority_order",
    "queue_sort_key",
    "queueing_hints",
]
