"""The scheduling queue, as kube-scheduler's ``PriorityQueue`` (``backend/queue``).

Three places a pending pod can wait:

- **activeQ**, a heap ordered by the profiles' QueueSort plugin (PrioritySort: higher
  ``spec.priority`` first, then the earlier queue timestamp); :meth:`pop` blocks on it;
- **backoffQ**, ordered by when each pod's backoff ends: ``podInitialBackoffSeconds``
  doubled per failed attempt up to ``podMaxBackoffSeconds``, from the last attempt,
  aligned to 1 s windows (``backoff_queue.go``); flushed to activeQ every second, and
  popped from directly when activeQ is empty (``SchedulerPopFromBackoffQ``, on in
  v1.37) except for pods that failed with an error;
- **unschedulablePods**: pods a cycle found no node for. A cluster event that one of the
  plugins that rejected the pod registers for (its ``events_to_register``, gathered per
  profile into a :data:`QueueingHintMap`), and whose queueing hint says it may help this
  pod, moves it to backoffQ, or straight to activeQ when its backoff is over
  (``isPodWorthRequeuing``); pods that stay longer than ``podMaxInUnschedulablePodsDuration``
  (5 min) are moved by a flush every 30 s. Pods a PreEnqueue plugin holds (``schedulingGates``,
  claims not created yet) wait here too, *gated*, until the pod's own update or an event
  that plugin registered for lets them in (its name is the pod's ``pending_plugins``).

The queue is the one every scheduling loop uses (:mod:`topospread.engine.loop`): the live
scheduler's, with the monotonic clock and blocking :meth:`pop`; the simulator's, with its
simulated clock and ``pop(timeout=0)``.

A pod that comes back unschedulable is checked against the cluster events that happened
while it was in flight (popped, until it is back or bound): if one of them may help it,
as its rejecting plugins' hints judge it, it goes to backoffQ (or activeQ) rather than
unschedulablePods (``determineSchedulingHintForInFlightPod``), so an event that raced
the cycle is not lost and one that cannot help does not cost an attempt. The queue also
holds the nominator: the pods nominated to a node by preemption, which the Filters count
there (``NominatedPodsForNode``).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from topospread.framework.events import (
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    pod_scheduling_properties_change,
    unroll_pod_event,
)
from topospread.framework.status import Code, Status, is_success
from topospread.model.objects import Pod
from topospread.model.resources import pod_request_amounts

__all__ = [
    "PreEnqueue",
    "QueueSortKey",
    "QueuedPodInfo",
    "QueueingHintFunction",
    "QueueingHintMap",
    "SchedulingQueue",
    "build_queueing_hint_map",
    "priority_order",
]

log = logging.getLogger("topospread.scheduler.queue")

NO_RAW: Final[Mapping[str, Any]] = MappingProxyType({})
"""A pod the queue got without its stored object (the simulator's, the planners')."""

PreEnqueue = Callable[[Pod], Status]
"""The profile's ``RunPreEnqueuePlugins`` for a pod (Success lets it into activeQ)."""
QueueSortKey = Callable[[Pod, float], tuple[float, ...]]
"""The QueueSort plugin's order: (pod, queue timestamp) -> key, smaller first."""


def priority_order(pod: Pod, timestamp: float) -> tuple[float, ...]:
    """PrioritySort's order, for a queue built before its profiles' frameworks."""
    return (-(pod.priority or 0), timestamp)


def _admit_all(pod: Pod) -> Status:
    del pod
    return Status.of(Code.SUCCESS)


BACKOFF_WINDOW: Final = 1.0
"""``backoffQOrderingWindowDuration``: backoff expiries are truncated to whole seconds."""
UNSCHEDULABLE_FLUSH_PERIOD: Final = 30.0
"""How often pods too long in unschedulablePods are moved (``flushUnschedulable...``)."""
DEFAULT_MAX_IN_UNSCHEDULABLE: Final = 300.0
"""``DefaultPodMaxInUnschedulablePodsDuration``."""


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    """One plugin's hint for one registered event (``QueueingHintFunction``)."""

    plugin: str
    hint: QueueingHintFn | None
    """None: queue on every matching event (``defaultQueueingHintFn``)."""


QueueingHintMap = dict[ClusterEvent, list[QueueingHintFunction]]
"""Registered event -> the hints of the plugins registered for it (``QueueingHintMap``)."""


def build_queueing_hint_map(
    extensions: Iterable[tuple[str, Sequence[ClusterEventWithHint]]],
) -> QueueingHintMap:
    """``buildQueueingHintMap`` (``pkg/scheduler/scheduler.go``): one profile's map from its
    plugins' ``events_to_register`` (:meth:`Framework.enqueue_extensions`); ``Pod``
    registrations are unrolled into the three pod resources."""
    hint_map: QueueingHintMap = {}
    for plugin, events in extensions:
        for registered in events:
            function = QueueingHintFunction(plugin, registered.queueing_hint_fn)
            for event in unroll_pod_event(registered.event):
                hint_map.setdefault(event, []).append(function)
    return hint_map


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pending pod and its queueing history (``framework.QueuedPodInfo``)."""

    pod: Pod
    raw: Mapping[str, Any] = field(default_factory=lambda: NO_RAW)
    """The pod as the informer last saw it (status patches compare against it)."""
    timestamp: float = 0.0
    """When it entered the queue or was last tried: the QueueSort tie-break."""
    initial_attempt_timestamp: float | None = None
    """When it was first popped (the scheduling SLI starts here)."""
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    unschedulable_plugins: frozenset[str] = frozenset()
    """The plugins that rejected it in its last cycle (empty: an error or no nodes)."""
    pending_plugins: frozenset[str] = frozenset()
    """The PreEnqueue plugin holding it while gated (``PendingPlugins``)."""
    message: str = ""
    """Why it is still pending: its last failure's message, or its PreEnqueue's."""
    backoff_expiration: float | None = None
    gated: bool = False
    flush_timestamp: float = 0.0

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return self.pod.key


class SchedulingQueue:
    """activeQ, backoffQ and unschedulablePods, with the nominator, behind one lock."""

    def __init__(
        self,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        clock: Callable[[], float] = time.monotonic,
        queueing_hints: Mapping[str, QueueingHintMap] | None = None,
        pre_enqueue: PreEnqueue = _admit_all,
        sort_key: QueueSortKey = priority_order,
    ) -> None:
        self.initial_backoff = initial_backoff
        self.pre_enqueue = pre_enqueue
        """Run outside the queue's lock (a plugin may read the scheduler's cache)."""
        self.sort_key = sort_key
        self.queueing_hints: Mapping[str, QueueingHintMap] = dict(queueing_hints or {})
        """Profile (scheduler name) -> its :data:`QueueingHintMap`."""
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._active: list[tuple[tuple[float, ...], int, str, QueuedPodInfo]] = []
        self._backoff: list[tuple[float, int, str, QueuedPodInfo]] = []
        self._where: dict[str, tuple[str, QueuedPodInfo]] = {}
        """Key -> ("active"|"backoff"|"unschedulable"|"inflight", info)."""
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0
        self._in_flight: dict[str, int] = {}
        """Popped pods -> the index of the first cluster event after their pop."""
        self._events: list[tuple[ClusterEvent, object | None, object | None]] = []
        """The cluster events since the oldest in-flight pod was popped."""
        self._events_base = 0
        """The index of ``_events[0]`` among all events recorded."""
        self._closed = False
        self._nominated: dict[str, dict[str, Pod]] = {}
        """Node -> key -> the nominated pod (as it will be filtered there)."""
        self._nominated_node: dict[str, str] = {}

    # -- adding and removing pods --------------------------------------------------------

    def add(self, pod: Pod, raw: dict[str, Any] | None = None) -> None:
        """A new pending pod: to activeQ, or unschedulablePods while a PreEnqueue holds it."""
        admitted = self.pre_enqueue(pod)
        with self._cond:
            if pod.key in self._where:
                self._update_locked(pod, raw, admitted)
                return
            info = QueuedPodInfo(pod, raw or NO_RAW, timestamp=self.clock())
            if pod.nominated_node_name:
                self._nominate_locked(pod, pod.nominated_node_name)
            self._enqueue_new_locked(info, admitted)

    def _enqueue_new_locked(self, info: QueuedPodInfo, admitted: Status) -> None:
        if self._gate(info, admitted):
            self._to_unschedulable_locked(info)
        else:
            self._to_active_locked(info)

    @staticmethod
    def _gate(info: QueuedPodInfo, admitted: Status) -> bool:
        # PreEnqueue's verdict: a rejection gates the pod, naming the plugin.
        if is_success(admitted):
            info.gated = False
            info.pending_plugins = frozenset()
            return False
        info.gated = True
        info.pending_plugins = frozenset({admitted.plugin} if admitted.plugin else ())
        info.message = admitted.message
        return True

    def update(self, pod: Pod, raw: dict[str, Any] | None = None) -> None:
        """A pending pod changed (``Update``): the newest object replaces the queued one; a
        pod waiting as unschedulable or gated is retried, since its own change may help."""
        admitted = self.pre_enqueue(pod)
        with self._cond:
            self._update_locked(pod, raw, admitted)

    def _update_locked(self, pod: Pod, raw: dict[str, Any] | None, admitted: Status) -> None:
        entry = self._where.get(pod.key)
        if entry is None:
            info = QueuedPodInfo(pod, raw or NO_RAW, timestamp=self.clock())
            self._enqueue_new_locked(info, admitted)
            return
        place, info = entry
        old = info.pod
        info.pod = pod
        if raw is not None:
            info.raw = raw
        if pod.nominated_node_name != self._nominated_node.get(pod.key, ""):
            self._nominate_locked(pod, pod.nominated_node_name)
        if place != "unschedulable":
            return
        if info.gated and not is_success(admitted):
            info.message = admitted.message
        # The pod's own update, as the plugins that rejected it (or the PreEnqueue plugin
        # holding it) judge it: one TargetPod event per changed property, each asked in
        # turn until one says it may help (PriorityQueue.Update with queueing hints).
        for event in pod_scheduling_properties_change(
            pod, old, is_target_pod=True, requests=pod_request_amounts
        ):
            if not self._worth_requeuing(info, event, old, pod):
                continue
            del self._unschedulable[pod.key]
            was_gated = info.gated
            if self._gate(info, admitted):
                self._to_unschedulable_locked(info)
            elif was_gated:
                self._to_active_locked(info)
            else:
                self._move_locked(info)
            return

    def gate(self, info: QueuedPodInfo, admitted: Status, judged: Pod | None = None) -> None:
        """A popped pod that a PreEnqueue plugin holds after all (the loop asks again at
        pop, with the cluster as it is now): back to unschedulablePods, gated, with no
        attempt counted — unless, while it was in flight, the pod itself changed (it was
        ``judged`` as it was before) or an event its PreEnqueue plugin registered for
        came: then it is asked again at once."""
        with self._cond:
            entry = self._where.get(info.key)
            if entry is None or entry[0] != "inflight" or entry[1] is not info:
                return
            info.attempts -= 1
            events = self._events_while_in_flight(info.key)
            self._land_locked(info.key)
            if not self._gate(info, admitted):
                self._to_active_locked(info)
                return
            changed = judged is not None and info.pod is not judged
            if changed or any(self._worth_requeuing(info, e, o, n) for e, o, n in events):
                info.gated = False
                self._to_active_locked(info)
                return
            self._to_unschedulable_locked(info)

    def delete(self, key: str) -> None:
        """The pod is gone, or no longer pending (bound by anyone)."""
        with self._cond:
            entry = self._where.pop(key, None)
            if entry is not None and entry[0] == "unschedulable":
                self._unschedulable.pop(key, None)
            self._land_locked(key)
            self._nominate_locked(None, "", key=key)

    def done(self, key: str) -> None:
        """The cycle of a popped pod ended for good (bound, or dropped)."""
        with self._cond:
            entry = self._where.get(key)
            if entry is not None and entry[0] == "inflight":
                del self._where[key]
                self._land_locked(key)

    def _land_locked(self, key: str) -> None:
        # The pod is no longer in flight; the events no in-flight pod needs are dropped.
        if self._in_flight.pop(key, None) is None:
            return
        if not self._in_flight:
            self._events_base += len(self._events)
            self._events.clear()
        elif len(self._events) > 4096:
            oldest = min(self._in_flight.values())
            del self._events[: oldest - self._events_base]
            self._events_base = oldest

    def _events_while_in_flight(
        self, key: str
    ) -> list[tuple[ClusterEvent, object | None, object | None]]:
        start = self._in_flight.get(key)
        if start is None:
            return []
        return self._events[start - self._events_base :]

    def add_unschedulable_if_not_present(
        self,
        info: QueuedPodInfo,
        scheduling_cycle: int,
        *,
        error: bool = False,
    ) -> None:
        """Back from a failed cycle: errors to backoffQ; unschedulable pods to
        unschedulablePods, or to backoffQ when a move request came during the cycle."""
        with self._cond:
            entry = self._where.get(info.key)
            if entry is None or entry[0] != "inflight" or entry[1] is not info:
                return  # deleted (or re-added as a new pod) while in flight
            info.timestamp = self.clock()
            info.backoff_expiration = None
            events = self._events_while_in_flight(info.key)
            self._land_locked(info.key)
            if error:
                info.consecutive_errors += 1
                self._to_backoff_locked(info)
                return
            info.consecutive_errors = 0
            info.unschedulable_count += 1
            rejectors = info.unschedulable_plugins | info.pending_plugins
            if rejectors:
                worth = any(self._worth_requeuing(info, e, old, new) for e, old, new in events)
            else:
                # No rejector to ask: any event may have helped.
                worth = bool(events)
            if worth:
                self._move_locked(info)
            else:
                self._to_unschedulable_locked(info)

    # -- moving --------------------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object | None = None,
        new: object | None = None,
        pod_filter: Callable[[Pod], bool] | None = None,
    ) -> int:
        """``MoveAllToActiveOrBackoffQueue``: unschedulable pods whose rejecting plugins
        think ``event`` (``old`` -> ``new``) may help them go back; returns how many moved."""
        with self._cond:
            moved = 0
            for key, info in list(self._unschedulable.items()):
                if pod_filter is not None and not pod_filter(info.pod):
                    continue
                if not self._worth_requeuing(info, event, old, new):
                    continue
                del self._unschedulable[key]
                self._move_locked(info)
                moved += 1
            if self._in_flight:
                self._events.append((event, old, new))
            return moved

    def _worth_requeuing(
        self, info: QueuedPodInfo, event: ClusterEvent, old: object | None, new: object | None
    ) -> bool:
        # isPodWorthRequeuing (backend/queue/scheduling_queue.go): the plugins that rejected
        # the pod in its last cycle, or the PreEnqueue plugin holding it.
        rejectors = info.pending_plugins if info.gated else info.unschedulable_plugins
        if not rejectors or event.is_wildcard():
            return True
        hint_map = self.queueing_hints.get(info.pod.scheduler_name)
        if hint_map is None:
            return True  # "shouldn't reach here unless bug": upstream queues
        for registered, functions in hint_map.items():
            if not registered.match(event):
                continue
            for function in functions:
                if function.plugin not in rejectors:
                    continue
                if function.hint is None:
                    return True
                try:
                    hint = function.hint(info.pod, old, new)
                except Exception:  # an error counts as Queue, so the pod is not stuck
                    log.exception(
                        "queueing hint failed",
                        extra={"pod": info.key, "plugin": function.plugin, "event": event.label},
                    )
                    return True
                if hint is QueueingHint.QUEUE:
                    return True
        return False

    def _move_locked(self, info: QueuedPodInfo) -> None:
        # A gated pod goes straight to activeQ; the loop asks its PreEnqueue again at pop.
        if info.gated:
            info.gated = False
            self._to_active_locked(info)
        elif self._backing_off(info):
            self._to_backoff_locked(info)
        else:
            self._to_active_locked(info)

    def flush_backoff_completed(self) -> int:
        """Move every pod whose backoff is over to activeQ (run every second)."""
        with self._cond:
            moved = 0
            while self._backoff:
                _, _, key, info = self._backoff[0]
                if not self._current(key, "backoff", info):
                    heapq.heappop(self._backoff)
                    continue
                if self._backing_off(info):
                    break
                heapq.heappop(self._backoff)
                self._to_active_locked(info)
                moved += 1
            return moved

    def flush_unschedulable_leftover(self) -> int:
        """Move pods that stayed in unschedulablePods longer than the maximum."""
        with self._cond:
            now = self.clock()
            stale = [
                info
                for info in self._unschedulable.values()
                if not info.gated
                and now - max(info.timestamp, info.flush_timestamp) > self.max_in_unschedulable
            ]
            for info in stale:
                info.flush_timestamp = now
                del self._unschedulable[info.key]
                self._move_locked(info)
            return len(stale)

    def backing_off(self) -> bool:
        """Whether backoffQ may hold a pod (a length test: no lock)."""
        return bool(self._backoff)

    def run(self, stop: threading.Event) -> None:
        """The two flush loops of ``PriorityQueue.Run`` on one thread, until ``stop``."""
        last_unschedulable_flush = self.clock()
        while not stop.wait(BACKOFF_WINDOW):
            self.flush_backoff_completed()
            if self.clock() - last_unschedulable_flush >= UNSCHEDULABLE_FLUSH_PERIOD:
                last_unschedulable_flush = self.clock()
                self.flush_unschedulable_leftover()

    # -- popping -------------------------------------------------------------------------

    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule (blocks while there is none); None when closed or
        after ``timeout``. Increments the scheduling cycle."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while True:
                if self._closed:
                    return None
                info = self._pop_active_locked() or self._pop_backoff_locked()
                if info is not None:
                    self.scheduling_cycle += 1
                    info.attempts += 1
                    if info.initial_attempt_timestamp is None:
                        info.initial_attempt_timestamp = self.clock()
                    self._where[info.key] = ("inflight", info)
                    self._in_flight[info.key] = self._events_base + len(self._events)
                    return info
                remaining = None if deadline is None else deadline - self.clock()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining if remaining is not None else 1.0)

    def _pop_active_locked(self) -> QueuedPodInfo | None:
        while self._active:
            _, _, key, info = heapq.heappop(self._active)
            if self._current(key, "active", info):
                return info
        return None

    def _pop_backoff_locked(self) -> QueuedPodInfo | None:
        # With activeQ empty, a pod backing off after an unschedulable attempt is taken
        # early (SchedulerPopFromBackoffQ); one backing off after an error is not.
        skipped: list[tuple[float, int, str, QueuedPodInfo]] = []
        found: QueuedPodInfo | None = None
        while self._backoff:
            item = heapq.heappop(self._backoff)
            _, _, key, info = item
            if not self._current(key, "backoff", info):
                continue
            if info.consecutive_errors > 0:
                skipped.append(item)
                continue
            found = info
            break
        for item in skipped:
            heapq.heappush(self._backoff, item)
        return found

    def close(self) -> None:
        """Wake and end every :meth:`pop`."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- the nominator -------------------------------------------------------------------

    def nominate(self, pod: Pod, node: str) -> None:
        """``AddNominatedPod`` (``""`` clears the nomination)."""
        if not node and pod.key not in self._nominated_node:
            return  # nothing to clear (a membership test needs no lock)
        with self._cond:
            self._nominate_locked(pod, node)

    def _nominate_locked(self, pod: Pod | None, node: str, *, key: str = "") -> None:
        key = pod.key if pod is not None else key
        old = self._nominated_node.pop(key, None)
        if old is not None:
            pods = self._nominated.get(old)
            if pods is not None:
                pods.pop(key, None)
                if not pods:
                    del self._nominated[old]
        if pod is not None and node:
            self._nominated_node[key] = node
            self._nominated.setdefault(node, {})[key] = replace(pod, nominated_node_name=node)

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        """The pods nominated to ``node``, in nomination order."""
        with self._cond:
            pods = self._nominated.get(node)
            return list(pods.values()) if pods else []

    def nominated_node_names(self) -> tuple[str, ...]:
        """Nodes with nominated pods."""
        if not self._nominated:
            return ()  # the common case, asked every cycle: no lock needed
        with self._cond:
            return tuple(self._nominated)

    def pending_pods(self) -> dict[str, int]:
        """Pods per queue, as the ``scheduler_pending_pods`` gauge labels them."""
        with self._cond:
            counts = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
            for place, info in self._where.values():
                if place == "unschedulable":
                    counts["gated" if info.gated else "unschedulable"] += 1
                elif place in counts:
                    counts[place] += 1
            return counts

    def where(self, key: str) -> str | None:
        """Which queue holds the pod (``inflight`` while a cycle has it), if any."""
        with self._cond:
            entry = self._where.get(key)
            return entry[0] if entry is not None else None

    def pods(self) -> list[QueuedPodInfo]:
        """Every pod the queue holds."""
        with self._cond:
            return [info for _, info in self._where.values()]

    # -- internals -----------------------------------------------------------------------

    def _current(self, key: str, place: str, info: QueuedPodInfo) -> bool:
        entry = self._where.get(key)
        return entry is not None and entry[0] == place and entry[1] is info

    def _to_active_locked(self, info: QueuedPodInfo) -> None:
        self._where[info.key] = ("active", info)
        key = self.sort_key(info.pod, info.timestamp)
        heapq.heappush(self._active, (key, next(self._seq), info.key, info))
        self._cond.notify()

    def _to_backoff_locked(self, info: QueuedPodInfo) -> None:
        self._where[info.key] = ("backoff", info)
        heapq.heappush(self._backoff, (self._backoff_time(info), next(self._seq), info.key, info))
        self._cond.notify()

    def _to_unschedulable_locked(self, info: QueuedPodInfo) -> None:
        self._where[info.key] = ("unschedulable", info)
        self._unschedulable[info.key] = info

    def _backoff_time(self, info: QueuedPodInfo) -> float:
        # getBackoffTime: from the last attempt, initial × 2^(count−1) up to the maximum,
        # count being consecutive errors after an error, else unschedulable attempts.
        if self.max_backoff == 0:
            return 0.0
        count = info.consecutive_errors or info.unschedulable_count
        if count == 0:
            return 0.0
        if info.backoff_expiration is None:
            duration = min(self.max_backoff, self.initial_backoff * 2 ** (count - 1))
            info.backoff_expiration = _align(info.timestamp + duration)
        return info.backoff_expiration

    def _backing_off(self, info: QueuedPodInfo) -> bool:
        return self._backoff_time(info) >= _align(self.clock())


def _align(t: float) -> float:
    return math.floor(t / BACKOFF_WINDOW) * BACKOFF_WINDOW
