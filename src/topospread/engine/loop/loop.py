"""The scheduling loop: one ``ScheduleOne`` for the simulator and the live scheduler.

Follows ``pkg/scheduler/schedule_one.go``: pop a pod from the :class:`SchedulingQueue`,
ask the profile's PreEnqueue plugins again, run the scheduling cycle
(:func:`~topospread.engine.cycle.schedule_one` with the scheduler-wide
:class:`~topospread.engine.cycle.NodeSearch`), assume the pod on the chosen node, run
Reserve and Permit, then the binding cycle (PreBind, Bind, PostBind: the plugins write
through ``Handle.binding``, DefaultBinder included) or ``handleSchedulingFailure``
(the nomination, the preemption's victims, the pod back to the queue).

What differs between the simulator and the live scheduler is only where the decisions
take effect, the :class:`ClusterPort`: the in-memory cluster at once, or the API server
with the binding cycle on a worker thread, Events and status patches. Both feed the queue
the same cluster events (:meth:`SchedulingQueue.move_all_to_active_or_backoff`), so a
pod is retried on the same events, with the same backoff, in the same order.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Final, Protocol

from topospread.engine.cycle import (
    NO_NODES_AVAILABLE,
    CycleResult,
    FailureMemo,
    NodeSearch,
    fit_error_message,
    schedule_one,
)
from topospread.framework.binding import BindingGone
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.cycle_state import CycleState
from topospread.framework.events import EVENT_ASSIGNED_POD_DELETE
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, Status, is_success
from topospread.framework.waiting import timeout_message, waiting_key
from topospread.model.objects import Pod
from topospread.plugins.dynamicresources import unsupported_reasons as dra_unsupported_reasons
from topospread.plugins.names import DYNAMIC_RESOURCES

from .queue import (
    QueuedPodInfo,
    QueueingHintMap,
    QueueSortKey,
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
    "Reservation",
    "SchedulingLoop",
    "attempt",
    "build_frameworks",
    "queue_sort_key",
    "queueing_hints",
]

UNSUPPORTED_CLAIMS_MESSAGE: Final = (
    "unsupported: topospread cannot decide this pod's devices as kube-scheduler does; "
    "leave this pod to kube-scheduler"
)


class Nominator(Protocol):
    """The queue's nominator as the Filters read it."""

    def nominated_pods_for_node(self, node: str) -> Sequence[Pod]: ...

    def nominated_node_names(self) -> tuple[str, ...]: ...


class ListedNominator:
    """The nominator as a cluster read from files or the API shows it: the pending pods
    with ``status.nominatedNodeName`` that these profiles serve (``responsibleForPod``),
    per node, in input order."""

    def __init__(self, pods: Iterable[Pod], served: Iterable[str]) -> None:
        profiles = set(served)
        self._by_node: dict[str, list[Pod]] = {}
        for pod in pods:
            if pod.nominated_node_name and not pod.node_name and pod.scheduler_name in profiles:
                self._by_node.setdefault(pod.nominated_node_name, []).append(pod)

    def __bool__(self) -> bool:
        return bool(self._by_node)

    def nominated_pods_for_node(self, node: str) -> Sequence[Pod]:
        """The pods nominated to ``node``."""
        return self._by_node.get(node, ())

    def nominated_node_names(self) -> tuple[str, ...]:
        """Nodes with nominated pods."""
        return tuple(self._by_node)


def build_frameworks(
    configuration: SchedulerConfiguration,
    registry: Mapping[str, PluginFactory],
    handle: Handle,
    features: Features = Features(),
    *,
    nominator: Nominator | None = None,
    source: str = "",
) -> dict[str, Framework]:
    """One framework per profile, by scheduler name (``profile.NewMap``), reading the
    nominated pods from ``nominator`` (the queue) when there is one."""
    frameworks: dict[str, Framework] = {}
    for profile in configuration.profiles:
        framework = Framework(profile, registry, handle, features, source=source)
        if nominator is not None:
            framework.nominated_pods_for_node = nominator.nominated_pods_for_node
            framework.nominated_node_names = nominator.nominated_node_names
        frameworks[profile.scheduler_name] = framework
    return frameworks


def queue_sort_key(frameworks: Mapping[str, Framework]) -> QueueSortKey:
    """The profiles' QueueSort order (every profile has the same plugin; PrioritySort's
    order when none runs one)."""
    for framework in frameworks.values():
        plugin = framework.queue_sort_plugin
        if plugin is not None:
            return plugin.sort_key
    return priority_order


def queueing_hints(frameworks: Mapping[str, Framework]) -> dict[str, QueueingHintMap]:
    """Each profile's :data:`QueueingHintMap` from its plugins' ``events_to_register``."""
    return {
        name: build_queueing_hint_map(framework.enqueue_extensions())
        for name, framework in frameworks.items()
    }


@dataclass(frozen=True, slots=True)
class Reservation:
    """A pod on its way to a node: the framework (profile) whose binding cycle runs and
    the cycle's state, which holds what its plugins' Reserve assumed (Unreserve undoes it)."""

    framework: Framework
    state: CycleState
    node: str


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed attempt as ``handleSchedulingFailure`` reports it."""

    reason: str
    """``Unschedulable`` (a FitError, or no nodes) or ``SchedulerError``."""
    message: str
    nominate: str | None
    """The nomination to record: a node, ``""`` to clear it, None to leave it."""
    result: str
    """The attempt's metric label: ``unschedulable`` or ``error``."""
    post_filter_ran: bool = False
    """Whether a PostFilter (preemption) was tried."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one scheduling attempt decided before anything is written: the cycle's
    result, or why no cycle ran (a PreEnqueue plugin holds the pod, no profile serves it,
    or topospread refuses to decide it)."""

    framework: Framework | None = None
    result: CycleResult | None = None
    gated: Status | None = None
    """The PreEnqueue rejection holding the pod (no attempt, no Event)."""
    message: str = ""
    """Why no cycle ran (with ``gated``: the plugin's message)."""
    refused_plugin: str = ""
    """The plugin whose decision topospread refuses to make (DynamicResources)."""

    @property
    def why_pending(self) -> str:
        """The pod's pending message: the cycle's FailedScheduling message, or why no
        cycle ran; "" when a node was selected."""
        if self.result is not None:
            return "" if self.result.selected_node is not None else self.result.message or ""
        return self.message


def attempt(
    frameworks: Mapping[str, Framework],
    pod: Pod,
    search: NodeSearch | None = None,
    *,
    lean: bool = False,
    again: Callable[[Pod, CycleResult], Framework | None] | None = None,
    memo: FailureMemo | None = None,
    random_ties: bool = False,
) -> Attempt:
    """One attempt of the loop without its writes: the profile serving ``pod``, its
    PreEnqueue plugins, topospread's refusals, then the cycle
    (:func:`~topospread.engine.cycle.schedule_one`, with ``search`` as the loop's
    scheduler-wide node search; None visits every node, as the planners' what-ifs do).
    ``again`` (pod, result) may ask for the cycle to run once more, from the same start,
    with another framework (the inputs changed under it); ``memo`` answers a pod identical
    to the last one that fit nowhere, in a cluster unchanged since, without a cycle
    (:class:`~topospread.engine.cycle.FailureMemo`); ``random_ties``: the caller picks among
    the tied nodes at random (see :func:`~topospread.engine.cycle.schedule_one`). The loop
    calls this for every pod it pops;
    the planners and audit call it for their what-ifs."""
    framework = frameworks.get(pod.scheduler_name)
    if framework is None:
        return Attempt(message=f'no profile has schedulerName "{pod.scheduler_name}"')
    admitted = framework.run_pre_enqueue_plugins(pod)
    if not is_success(admitted):
        return Attempt(framework, gated=admitted, message=admitted.message)
    objects = framework.handle.objects
    if pod.resource_claims or objects.device_classes:
        unsupported = dra_unsupported_reasons(pod, objects)
        if unsupported:
            message = f"{UNSUPPORTED_CLAIMS_MESSAGE}: pod {pod.key}: {'; '.join(unsupported)}"
            return Attempt(framework, message=message, refused_plugin=DYNAMIC_RESOURCES)
    first = search.next_start_node_index if search is not None else 0
    if memo is not None:
        remembered = memo.lookup(framework, pod, search)
        if remembered is not None:
            return Attempt(framework, remembered)
    options = {"skip_single_node_scoring": True, "lean": lean, "random_ties": random_ties}
    result = schedule_one(framework, pod, search, **options)
    other = again(pod, result) if again is not None else None
    if other is not None:
        if search is not None:
            search.next_start_node_index = first
        framework = other
        result = schedule_one(framework, pod, search, **options)
    if memo is not None:
        memo.remember(framework, pod, first, search, result)
    return Attempt(framework, result)


class ClusterPort(Protocol):
    """Where the loop's decisions take effect."""

    def cycle_lock(self) -> AbstractContextManager[object]:
        """Held through the scheduling cycle and Reserve (the live cache's lock)."""
        ...

    def frameworks(self) -> Mapping[str, Framework]:
        """The profiles' frameworks over the cluster as it is now (under the lock)."""
        ...

    def is_pending(self, pod: Pod) -> bool:
        """Whether the pod still waits for a node (not bound meanwhile, not being deleted)."""
        ...

    def assume(self, pod: Pod, node: str) -> Pod | None:
        """The pod assumed on ``node`` in the scheduler's view (None: it cannot be)."""
        ...

    def forget(self, assumed: Pod) -> None:
        """Undo :meth:`assume` after a failed binding cycle."""
        ...

    def run_binding_cycle(self, work: Callable[[], None]) -> None:
        """Run the binding cycle: at once (the simulator) or on a worker (``go bindingCycle``)."""
        ...

    def binding_cycle_started(self) -> None:
        """A binding cycle starts without a worker (its Binding sent without waiting):
        counted with those :meth:`run_binding_cycle` runs, waiting while too many are."""
        ...

    def binding_cycle_ended(self) -> None:
        """The binding cycle :meth:`binding_cycle_started` counted is over."""
        ...

    def after(self, seconds: float, action: Callable[[], None]) -> Callable[[], None]:
        """Run ``action`` ``seconds`` from now on the port's clock, outside the current
        cycle (a Permit timeout; a waiting pod's binding cycle once its wait is over);
        returns what cancels it."""
        ...

    def bound(self, info: QueuedPodInfo, assumed: Pod, node: str, start: float) -> None:
        """The Bind succeeded: confirm the assumption, tell the pod's watchers."""
        ...

    def gone(self, info: QueuedPodInfo, node: str) -> None:
        """The Bind found the pod deleted or bound elsewhere: nothing to retry."""
        ...

    def failed(self, info: QueuedPodInfo, failure: Failure, start: float) -> None:
        """Report a failed attempt (the FailedScheduling Event, the PodScheduled
        condition, the nomination)."""
        ...

    def preempt(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        """``prepareCandidate``: evict the victims from ``node``."""
        ...

    def nomination_cleared(self, pod: Pod) -> None:
        """A lower-priority pod lost its nomination to a preemptor."""
        ...

    def stale(self, result: CycleResult) -> bool:
        """Whether the cycle's inputs changed under it, so it must run again from the
        same start (the simulator's budgets after a preemption dry run)."""
        ...


class SchedulingLoop:
    """The queue, the cycle, and the binding cycle over a :class:`ClusterPort`."""

    def __init__(
        self,
        queue: SchedulingQueue,
        port: ClusterPort,
        search: NodeSearch | None,
        *,
        tie_break: random.Random | None = None,
    ) -> None:
        self.queue = queue
        self.port = port
        self.search = search
        self.tie_break = tie_break
        """None: upstream's pick at parallelism 1 (the score heap over the visit order);
        a generator: a random node among those tied for the best score (``selectHost``
        with parallel Filter workers)."""
        self.attempts = 0
        self.failures = FailureMemo()
        """The last failed cycle, answering the next identical pod (a burst of replicas
        that fit nowhere) in an unchanged cluster without repeating it."""

    # -- ScheduleOne ------------------------------------------------------------------------

    def schedule_next(self, timeout: float | None = None) -> bool:
        """Pop one pod and schedule it; False when none came within ``timeout``."""
        info = self.queue.pop(timeout=timeout)
        if info is None:
            return False
        self.schedule_one(info)
        return True

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One ``ScheduleOne``: the cycle, then the binding cycle or the failure handling."""
        cycle = self.queue.scheduling_cycle
        start = time.perf_counter()
        with self.port.cycle_lock():
            pod = info.pod  # as the informer last saw it, read under the cycle's lock
            if not self.port.is_pending(pod):
                self.queue.done(pod.key)  # bound meanwhile, or being deleted
                return
            tried = attempt(
                self.port.frameworks(),
                pod,
                self.search,
                lean=True,
                again=self._again,
                memo=self.failures,
                random_ties=self.tie_break is not None,
            )
            if tried.gated is not None:
                self.queue.gate(info, tried.gated, pod)
                return
            if tried.result is None or tried.framework is None:
                self._not_tried(info, tried, cycle, start)
                return
            self.attempts += 1
            framework, result = tried.framework, tried.result
            node = result.selected_node
            if node is not None and self.tie_break is not None and len(result.tied_nodes) > 1:
                node = self.tie_break.choice(result.tied_nodes)
            assumed = self.port.assume(pod, node) if node is not None else None
            status: Status | None = None
            reservation: Reservation | None = None
            if assumed is not None and node is not None:
                # schedulingCycle's end: Reserve, then Permit, with the binding cycle's
                # state (the plugins assume through the binding port, under the lock).
                reservation = Reservation(framework, CycleState(), node)
                status = framework.run_reserve_plugins_reserve(reservation.state, pod, node)
                if is_success(status):
                    status = framework.run_permit_plugins(reservation.state, pod, node)
        if node is None or assumed is None or reservation is None:
            self._scheduling_failure(info, result, cycle, start)
            return
        if status is not None and not is_success(status) and status.code is not Code.WAIT:
            self._binding_cycle_failed(info, assumed, reservation, cycle, start, status)
            return
        if status is not None and status.code is Code.WAIT:
            self._arm_permit_timeouts(reservation.framework, pod)
        # assume(): a pod on its way to a node is no longer a nominated one.
        self.queue.nominate(pod, "")
        if (
            is_success(status)
            and reservation.framework.binds_async
            and self._bind_without_worker(info, assumed, reservation, cycle, start)
        ):
            return
        self.port.run_binding_cycle(
            lambda: self._binding_cycle(info, assumed, reservation, cycle, start)
        )

    def _arm_permit_timeouts(self, framework: Framework, pod: Pod) -> None:
        # newWaitingPod's timers: each waiting plugin rejects the pod when its time is up.
        waiting_pods = framework.handle.waiting_pods
        waiting = waiting_pods.get(waiting_key(pod)) if waiting_pods is not None else None
        if waiting is None:
            return
        cancels = [
            self.port.after(
                seconds, functools.partial(waiting.reject, plugin, timeout_message(seconds, plugin))
            )
            for plugin, seconds in waiting.timeouts.items()
        ]

        def stop_timers(status: Status) -> None:
            del status
            for cancel in cancels:
                cancel()

        waiting.on_resolved(stop_timers)

    def _again(self, pod: Pod, result: CycleResult) -> Framework | None:
        # The simulator's budgets: the dry run must see them as they are now.
        if not self.port.stale(result):
            return None
        return self.port.frameworks().get(pod.scheduler_name)

    def _not_tried(self, info: QueuedPodInfo, tried: Attempt, cycle: int, start: float) -> None:
        failure = Failure("SchedulerError", tried.message, None, "error")
        if not tried.refused_plugin:
            self._fail(info, cycle, start, failure)  # no profile: retried with backoff
            return
        # A pod whose devices topospread cannot decide as upstream does is not scheduled:
        # it waits for an event of the refused plugin, reported as an error.
        info.unschedulable_plugins = frozenset({tried.refused_plugin})
        info.message = tried.message
        self.queue.add_unschedulable_if_not_present(info, cycle)
        self.port.failed(info, failure, start)

    # -- the binding cycle --------------------------------------------------------------------

    def _binding_cycle(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
    ) -> None:
        """``bindingCycle``: WaitOnPermit, PreBind, Bind, PostBind; a failure forgets the
        assumed pod and unreserves. A pod waiting at Permit continues, on the port's
        worker, once its wait is over."""
        waiting_pods = reservation.framework.handle.waiting_pods
        key = waiting_key(info.pod)
        waiting = waiting_pods.get(key) if waiting_pods is not None else None
        if waiting_pods is None or waiting is None:
            self._bind(info, assumed, reservation, cycle, start)
            return

        def resolved(status: Status) -> None:
            waiting_pods.remove(key)
            if is_success(status):
                work = lambda: self._bind(info, assumed, reservation, cycle, start)  # noqa: E731
            else:
                if not status.is_rejected:
                    status = Status(
                        Code.ERROR, (f"waiting on permit for pod: {status.message}",)
                    ).with_plugin(status.plugin or "")
                work = lambda: self._binding_cycle_failed(  # noqa: E731
                    info, assumed, reservation, cycle, start, status, binding=True
                )
            self.port.after(0, lambda: self.port.run_binding_cycle(work))

        waiting.on_resolved(resolved)

    def _bind_without_worker(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
    ) -> bool:
        """The binding cycle of a pod that waits at no Permit and that no PreBind plugin
        has work for (``RunPreBindPreFlights`` Skip, so PreBind would skip them all),
        where the Bind plugin can send the Binding without holding a thread: sent from
        here, and the rest of the cycle runs where the answer arrives. A worker woken
        per pod costs the scheduling thread more than the send (the GIL changes hands
        mid-cycle). False when this cannot be: the caller runs the cycle on a worker."""
        pod, node = info.pod, reservation.node
        framework, state = reservation.framework, reservation.state
        if not framework.run_pre_bind_pre_flights(state, pod, node).is_skip:
            return False
        self.port.binding_cycle_started()

        def answered(status: Status) -> None:
            try:
                self._bind_outcome(info, assumed, reservation, cycle, start, status)
            finally:
                self.port.binding_cycle_ended()

        if framework.run_bind_plugins_async(state, pod, node, answered):
            return True
        self.port.binding_cycle_ended()
        return False

    def _bind(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
    ) -> None:
        pod, node = info.pod, reservation.node
        framework, state = reservation.framework, reservation.state
        status = framework.run_pre_bind_plugins(state, pod, node)
        if is_success(status):
            status = framework.run_bind_plugins(state, pod, node)
            if status.is_skip:
                status = Status.of(Code.ERROR, "all bind plugins skipped the pod")
        self._bind_outcome(info, assumed, reservation, cycle, start, status)

    def _bind_outcome(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
        status: Status,
    ) -> None:
        """The binding cycle after Bind: PostBind and the report, or the failure's."""
        pod, node = info.pod, reservation.node
        framework, state = reservation.framework, reservation.state
        if not is_success(status):
            if isinstance(status.error, BindingGone):
                # Deleted, or bound by another client, while in flight: the informer has
                # (or will have) the pod as it is (handleSchedulingFailure's checks).
                self.port.forget(assumed)
                self._unreserve(pod, reservation)
                self.queue.done(pod.key)
                self.port.gone(info, node)
                return
            self._binding_cycle_failed(
                info, assumed, reservation, cycle, start, status, binding=True
            )
            return
        framework.run_post_bind_plugins(state, pod, node)
        self.queue.done(pod.key)
        self.port.bound(info, assumed, node, start)

    def _unreserve(self, pod: Pod, reservation: Reservation) -> None:
        reservation.framework.run_reserve_plugins_unreserve(
            reservation.state, pod, reservation.node
        )

    def _binding_cycle_failed(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
        status: Status,
        *,
        binding: bool = False,
    ) -> None:
        """A failure after the node was chosen (Reserve, Permit, or the binding cycle's
        ``handleBindingCycleError``): unreserve, forget, back to the queue, report, the
        nomination cleared. A rejection is reported as a FitError over the one node
        (``0/1 nodes are available: 1 <reason>.``) and leaves the pod unschedulable by
        the plugin that rejected it; anything else is an error (backoff). Forgetting a
        pod the binding cycle had assumed frees its room: an AssignedPodDelete event for
        the other pods."""
        self._unreserve(info.pod, reservation)
        self.port.forget(assumed)
        if status.is_rejected:
            info.unschedulable_plugins = frozenset({status.plugin} if status.plugin else ())
            message = fit_error_message(1, {reservation.node: status})
            failure = Failure("Unschedulable", message, "", "unschedulable")
        else:
            failure = Failure("SchedulerError", status.message, "", "error")
        self._fail(info, cycle, start, failure)
        if binding:
            self.queue.move_all_to_active_or_backoff(
                EVENT_ASSIGNED_POD_DELETE,
                assumed,
                None,
                pod_filter=lambda other: other.key != assumed.key,
            )

    # -- failures ---------------------------------------------------------------------------

    def _fail(self, info: QueuedPodInfo, cycle: int, start: float, failure: Failure) -> None:
        info.message = failure.message
        error = failure.reason != "Unschedulable"
        if error:
            info.unschedulable_plugins = frozenset()
        self.queue.add_unschedulable_if_not_present(info, cycle, error=error)
        if failure.nominate is not None:
            self.queue.nominate(info.pod, failure.nominate)
        self.port.failed(info, failure, start)

    def _scheduling_failure(
        self, info: QueuedPodInfo, result: CycleResult, cycle: int, start: float
    ) -> None:
        """``handleSchedulingFailure`` after a cycle that found no node."""
        pod = info.pod
        message = result.message or "no node selected"
        # A FitError ("0/N nodes are available: ...") or ErrNoNodesAvailable, which
        # schedulingCycle reports as UnschedulableAndUnresolvable: rejected, not an error.
        fit_error = message.startswith("0/") or message == NO_NODES_AVAILABLE
        info.unschedulable_plugins = frozenset(
            s.plugin
            for s in result.statuses.values()
            if s is not None and s.plugin and s.code is not Code.ERROR
        )
        # The nominatingInfo: cleared when no PostFilter ran; a PostFilter result
        # overrides it ("" clears); no result leaves it as it is. A successful
        # preemption first actuates (prepareCandidate).
        nominate: str | None = None
        if not result.post_filter_ran:
            nominate = ""
        elif result.post_filter is not None:
            nominate = result.post_filter.nominated_node_name
        post, status = result.post_filter, result.post_filter_status
        if (
            post is not None
            and post.nominated_node_name
            and status is not None
            and status.code is Code.SUCCESS
        ):
            node = post.nominated_node_name
            self.port.preempt(pod, node, list(post.victims.get(node, ())))
            self._clear_lower_nominations(pod, node)
        failure = Failure(
            "Unschedulable" if fit_error else "SchedulerError",
            message,
            nominate,
            "unschedulable" if fit_error else "error",
            result.post_filter_ran,
        )
        self._fail(info, cycle, start, failure)

    def _clear_lower_nominations(self, preemptor: Pod, node: str) -> None:
        # prepareCandidate: lower-priority pods nominated to the node lose the nomination.
        priority = preemptor.priority or 0
        for other in self.queue.nominated_pods_for_node(node):
            if (other.priority or 0) < priority and other.key != preemptor.key:
                self.queue.nominate(other, "")
                self.port.nomination_cleared(other)
