"""The scheduling loop over an in-memory cluster: the planners' scheduler.

:class:`MemoryScheduler` runs :class:`~topospread.engine.loop.loop.SchedulingLoop` (the
loop of the simulator and the live scheduler) over a snapshot of nodes and pods, with no
clock and no controllers: pods are added, :meth:`MemoryScheduler.run` schedules until
the queue has nothing left to try, and what a live scheduler would have written is kept
instead: each pod's node, the Events (``Scheduled``, ``FailedScheduling``) and the
``PodScheduled`` condition of each pod left pending, the nominations and the victims a
preemption evicted.

The binding cycle's writes stay in memory: the pod is bound in the snapshot
(DefaultBinder), volumes and claims are neither bound nor provisioned (a pod's claims
are judged by the Filters as they are; nothing the planners read changes).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace

from topospread.engine.cycle import CycleResult, NodeSearch
from topospread.framework.binding import AssumedObject, BindingGone, ClaimAllocation, VolumeCheck
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, Status
from topospread.framework.waiting import WaitingPods
from topospread.model.objects import Pod
from topospread.model.storage import PersistentVolume, PersistentVolumeClaim

from .loop import Failure, SchedulingLoop, build_frameworks, queue_sort_key, queueing_hints
from .queue import QueuedPodInfo, SchedulingQueue

__all__ = ["MemoryScheduler", "RecordedEvent"]


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An Event the live scheduler would have recorded about a pod."""

    pod: str
    type: str
    reason: str
    message: str


class MemoryScheduler:
    """The loop, its queue and its frameworks over one in-memory cluster.

    ``tie_break`` None picks as upstream at parallelism 1; a generator draws among tied
    nodes as the live scheduler does. ``search`` False visits every node in every cycle
    (the planners' what-ifs); True cuts the search as ``percentageOfNodesToScore`` does.
    """

    def __init__(
        self,
        configuration: SchedulerConfiguration,
        snapshot: Snapshot,
        objects: ClusterObjects = ClusterObjects(),
        *,
        registry: Mapping[str, PluginFactory],
        features: Features = Features(),
        tie_break: random.Random | None = None,
        search: bool = True,
    ) -> None:
        self.configuration = configuration
        self.snapshot = snapshot
        self.objects = objects
        self.placements: dict[str, str] = {}
        """Pod key -> the node it was bound to, in binding order."""
        self.events: list[RecordedEvent] = []
        self.conditions: dict[str, tuple[str, str]] = {}
        """Pod key -> (reason, message) of its ``PodScheduled=False`` condition."""
        self.nominations: dict[str, str] = {}
        """Pod key -> its ``status.nominatedNodeName`` ("" once cleared)."""
        self.evicted: list[tuple[str, str]] = []
        """(victim, preemptor) in eviction order."""
        self.queue = SchedulingQueue(
            initial_backoff=float(configuration.pod_initial_backoff_seconds),
            max_backoff=float(configuration.pod_max_backoff_seconds),
            clock=lambda: self.now,
            pre_enqueue=self._pre_enqueue,
        )
        self.waiting_pods = WaitingPods()
        self.now = 0.0
        """Seconds since the start: timers (Permit timeouts) move it when nothing else is left."""
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self._cancelled: set[int] = set()
        handle = Handle(
            snapshot,
            objects,
            configuration.parallelism,
            binding=self,
            waiting_pods=self.waiting_pods,
        )
        self._frameworks = build_frameworks(
            configuration, registry, handle, features, nominator=self.queue
        )
        self.queue.queueing_hints = queueing_hints(self._frameworks)
        self.queue.sort_key = queue_sort_key(self._frameworks)
        node_search = NodeSearch(configuration.percentage_of_nodes_to_score) if search else None
        self.loop = SchedulingLoop(self.queue, self, node_search, tie_break=tie_break)

    # -- driving ---------------------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        """A pending pod arrives (the informer's add)."""
        self.queue.add(pod)

    def run(self) -> None:
        """Schedule until no pod is left to try (the rest wait for an event); when only
        timers are left (pods waiting at Permit), time moves on to the next one."""
        while True:
            if self._due():
                continue
            if self.loop.schedule_next(timeout=0):
                continue
            while self._timers and self._timers[0][1] in self._cancelled:
                self._cancelled.discard(heapq.heappop(self._timers)[1])
            if not self._timers:
                return
            self.now = max(self.now, self._timers[0][0])

    def _due(self) -> bool:
        # Run the timers whose time has come, earliest first; whether any ran.
        ran = False
        while self._timers and self._timers[0][0] <= self.now:
            _, seq, action = heapq.heappop(self._timers)
            if seq in self._cancelled:
                self._cancelled.discard(seq)
                continue
            action()
            ran = True
        return ran

    def schedule(self, pod: Pod) -> str:
        """Add ``pod`` and give it one attempt: "" when it was bound, else why not (it
        is then dropped from the queue, so each call stands alone)."""
        self.queue.add(pod)
        while self.loop.schedule_next(timeout=0):
            if pod.key in self.placements or self.queue.where(pod.key) != "active":
                break
        if pod.key in self.placements:
            return ""
        why = next((i.message for i in self.queue.pods() if i.key == pod.key), "")
        self.queue.delete(pod.key)
        return why or "not scheduled"

    def pending(self) -> dict[str, str]:
        """Pods still waiting, with why."""
        return {info.key: info.message for info in self.queue.pods()}

    # -- ClusterPort -----------------------------------------------------------------------

    def _pre_enqueue(self, pod: Pod) -> Status:
        framework = self._frameworks.get(pod.scheduler_name)
        return (
            framework.run_pre_enqueue_plugins(pod)
            if framework is not None
            else Status(Code.SUCCESS)
        )

    def cycle_lock(self) -> AbstractContextManager[object]:
        """One thread: no lock."""
        return nullcontext()

    def frameworks(self) -> dict[str, Framework]:
        """The profiles' frameworks (built once: the listed objects do not change)."""
        return self._frameworks

    def is_pending(self, pod: Pod) -> bool:
        """Not bound yet."""
        return pod.key not in self.placements

    def assume(self, pod: Pod, node: str) -> Pod | None:
        """Into the snapshot, as if bound, until bound or forgotten."""
        info = self.snapshot.get(node)
        if info is None:
            return None
        assumed = replace(pod, node_name=node, nominated_node_name="")
        info.add_pod(assumed)
        return assumed

    def forget(self, assumed: Pod) -> None:
        """Out of the snapshot again."""
        info = self.snapshot.get(assumed.node_name)
        if info is not None:
            info.remove_pod(assumed)

    def binding_cycle_started(self) -> None:
        """Nothing to count: binding cycles run at once."""

    def binding_cycle_ended(self) -> None:
        """Nothing to count: binding cycles run at once."""

    def run_binding_cycle(self, work: Callable[[], None]) -> None:
        """At once."""
        work()

    def after(self, seconds: float, action: Callable[[], None]) -> Callable[[], None]:
        """A timer on this scheduler's own clock (:meth:`run` moves it)."""
        self._timer_seq += 1
        seq = self._timer_seq
        heapq.heappush(self._timers, (self.now + seconds, seq, action))
        return lambda: self._cancelled.add(seq)

    def bound(self, info: QueuedPodInfo, assumed: Pod, node: str, start: float) -> None:
        """The Scheduled Event."""
        del assumed, start
        pod = info.pod
        self.conditions.pop(pod.key, None)
        self.events.append(
            RecordedEvent(
                pod.key,
                "Normal",
                "Scheduled",
                f"Successfully assigned {pod.namespace}/{pod.name} to {node}",
            )
        )

    def gone(self, info: QueuedPodInfo, node: str) -> None:
        """Cannot happen: nothing else writes."""
        del info, node

    def failed(self, info: QueuedPodInfo, failure: Failure, start: float) -> None:
        """The FailedScheduling Event, the condition and the nomination."""
        del start
        key = info.key
        self.events.append(RecordedEvent(key, "Warning", "FailedScheduling", failure.message))
        self.conditions[key] = (failure.reason, failure.message)
        if failure.nominate is not None:
            self.nominations[key] = failure.nominate

    def preempt(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        """The victims leave the snapshot."""
        info = self.snapshot.get(node)
        for victim in victims:
            if info is not None:
                info.remove_pod(victim)
            self.placements.pop(victim.key, None)
            self.evicted.append((victim.key, preemptor.key))
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, victim, None)

    def nomination_cleared(self, pod: Pod) -> None:
        """Cleared."""
        self.nominations[pod.key] = ""

    def stale(self, result: CycleResult) -> bool:
        """Never: nothing changes under a cycle."""
        del result
        return False

    # -- BindingPort -----------------------------------------------------------------------

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder: the pod, assumed on its node already, is bound there."""
        if self.snapshot.get(node_name) is None:
            raise BindingGone(f'nodes "{node_name}" not found')
        bound = replace(pod, node_name=node_name, nominated_node_name="")
        self.placements[pod.key] = node_name
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, bound)

    def assume_objects(self, assumed: Sequence[AssumedObject]) -> None:
        """Volumes and claims are not bound in memory."""
        del assumed

    def restore_objects(
        self, assumed: Sequence[AssumedObject], originals: Sequence[AssumedObject]
    ) -> None:
        """Nothing was assumed."""
        del assumed, originals

    def bind_volume(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim, node_name: str
    ) -> None:
        """Not written."""
        del volume, claim, node_name

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """Not written."""
        del claim, node_name

    def wait_for_volumes(
        self, node_name: str, pod_key: str, check: VolumeCheck, timeout: float
    ) -> None:
        """Nothing to wait for."""
        del node_name, pod_key, check, timeout

    def reserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """Not written."""
        del pod, planned

    def unreserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """Not written."""
        del pod, planned
