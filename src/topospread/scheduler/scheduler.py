"""The scheduler: informers feed the cache and queue; one loop schedules, binds run async.

Follows ``pkg/scheduler``: ``eventhandlers.go`` (what each informer event does to the cache
and the queue), ``schedule_one.go`` (``ScheduleOne``: pop, the cycle, assume, bind in the
background; ``handleSchedulingFailure``), and DefaultPreemption's ``prepareCandidate``
for carrying a preemption out.

The cycle is the engine's :func:`~topospread.engine.cycle.schedule_one` with the
scheduler-wide :class:`NodeSearch` (``percentageOfNodesToScore`` and the rotating start
index) and the lone-node shortcut, on the cache's Snapshot under the cache lock. Among
the nodes tied for the best score one is drawn at random (``selectHost``).

A pod bound by someone else or deleted while its bind is in flight gets 409/404: the
assumption is forgotten and the pod dropped (the informer tells where it really is).
Any other bind failure forgets the assumption and requeues the pod with backoff.

A binding cycle runs on a bind worker, except where nothing in it waits: a pod that no
Permit holds and no PreBind plugin has work for (``PreBindPreFlight``), bound through a
transport that sends without waiting (the write processes). Its Binding is then sent
from the scheduling thread, and PostBind, the report and the Scheduled Event run on the
thread that reads the answer. Every thread woken per pod takes the GIL from the
scheduling thread in the middle of a cycle, and the worker was woken twice per pod.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, Final

from topospread.client.chained import FollowUp
from topospread.client.source import NODES, PODS, RESOURCES, Resource
from topospread.client.transport import Transport
from topospread.engine.cycle import CycleResult, NodeSearch
from topospread.engine.loop import (
    Failure,
    QueuedPodInfo,
    SchedulingLoop,
    SchedulingQueue,
    build_frameworks,
    queue_sort_key,
    queueing_hints,
)
from topospread.errors import ClusterError
from topospread.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    EVENT_NODE_DELETE,
    KIND_RESOURCES,
    ActionType,
    ClusterEvent,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, Status
from topospread.framework.waiting import WaitingPods
from topospread.model.kinds import KINDS
from topospread.model.objects import Node, Pod
from topospread.model.resources import pod_request_amounts
from topospread.plugins.registry import registry as plugin_registry
from topospread.scheduler.api import (
    EventRecorder,
    delete_pod,
    patch_pod_status,
    truncate_message,
)
from topospread.scheduler.binding import ApiBinding
from topospread.scheduler.cache import OBJECT_FIELDS, PodDecoder, SchedulerCache, decode_one
from topospread.scheduler.informer import Reflector, StreamingTransport, object_key
from topospread.scheduler.leader import micro_time
from topospread.scheduler.metrics import SchedulerMetrics
from topospread.scheduler.options import SchedulerOptions

__all__ = ["INFORMER_RESOURCES", "Scheduler"]

log = logging.getLogger("topospread.scheduler")

INFORMER_RESOURCES: Final = tuple(RESOURCES[k.kind] for k in KINDS if k.watched)
"""What the scheduler watches, the table's watched rows (:data:`topospread.model.kinds.KINDS`):
the informers of kube-scheduler that topospread models (DeviceTaintRules only to refuse the
pods whose devices they may taint)."""

POD_FIELD_SELECTOR: Final = "status.phase!=Succeeded,status.phase!=Failed"
"""The scheduler's pod informer leaves out terminated pods (``NewInformerFactory``)."""

PREEMPTION_CONDITION_MESSAGE: Final = "{}: preempting to accommodate a higher priority pod"


def _spec(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = raw.get("spec")
    return spec if isinstance(spec, dict) else {}


def _scheduled_note(pod: Pod, node: str) -> str:
    return f"Successfully assigned {pod.namespace}/{pod.name} to {node}"


def _same_writes(transport: Transport, other: Transport) -> bool:
    """Whether two transports send their writes the same way (the same inner transport
    behind their rate limiters)."""
    return getattr(transport, "inner", transport) is getattr(other, "inner", other)


class Scheduler:
    """One scheduler: its informers, cache, queue, profiles and workers.

    :meth:`start_informers` runs the informers (a standby keeps a warm cache too);
    :meth:`run` schedules until :meth:`stop` — only the leader calls it.
    """

    def __init__(
        self,
        transport: StreamingTransport,
        options: SchedulerOptions,
        *,
        metrics: SchedulerMetrics | None = None,
        registry: Mapping[str, PluginFactory] | None = None,
        features: Features = Features(),
        bind_workers: int = 16,
        max_binds_in_flight: int | None = None,
        hostname: str | None = None,
        seed: int | None = None,
        event_transport: Transport | None = None,
        watch_list: bool = False,
        pod_transport: StreamingTransport | None = None,
    ) -> None:
        """``event_transport``: where the Events go, ``transport`` without one
        (kube-scheduler posts them through a client of their own, with a rate limiter
        of its own). ``watch_list``: the informers take their state as a watch-list
        stream (:class:`~topospread.scheduler.informer.Reflector`). ``pod_transport``:
        what the pod informer lists and watches through, ``transport`` without one (a
        :class:`~topospread.client.watch_process.WatchProcessTransport`: a line per bind
        comes on that watch)."""
        self.transport = transport
        self.options = options
        self.configuration = options.configuration
        self.metrics = metrics or SchedulerMetrics()
        self.registry = dict(registry) if registry is not None else plugin_registry()
        self.features = features
        self.hostname = hostname or socket.gethostname()
        self.cache = SchedulerCache()
        self.queue = SchedulingQueue(
            initial_backoff=float(self.configuration.pod_initial_backoff_seconds),
            max_backoff=float(self.configuration.pod_max_backoff_seconds),
            max_in_unschedulable=options.pod_max_in_unschedulable_pods_duration,
            pre_enqueue=self._pre_enqueue,
        )
        self.metrics.watch_queue(self.queue.pending_pods)
        self.profiles = {p.scheduler_name for p in self.configuration.profiles}
        self.search = NodeSearch(self.configuration.percentage_of_nodes_to_score)
        self._rng = random.Random(seed)
        self.binding = ApiBinding(
            transport,
            self.cache,
            stopped=lambda: self._stop.is_set(),
            on_bind=self.metrics.bind_outcome,
        )
        """The binding port the plugins' Reserve / PreBind / Bind / Unreserve write through."""
        self.waiting_pods = WaitingPods()
        """Pods waiting at Permit, shared by the profiles."""
        self._frameworks: dict[str, Framework] = {}
        self._frameworks_generation = -1
        self._pods_decoded = PodDecoder()
        """The pod informer's pods, decoded from their last version or a replica's."""
        # buildQueueingHintMap: each profile's requeue events, from its enabled plugins;
        # the profiles' QueueSort orders activeQ.
        frameworks = self.frameworks()
        self.queue.queueing_hints = queueing_hints(frameworks)
        self.queue.sort_key = queue_sort_key(frameworks)
        self.loop = SchedulingLoop(self.queue, self, self.search, tie_break=self._rng)
        """The scheduling loop the simulator runs too, with this scheduler as its port."""
        self.reflectors = [
            Reflector(
                pod_transport if resource is PODS and pod_transport is not None else transport,
                resource,
                self,
                field_selector=POD_FIELD_SELECTOR if resource is PODS else None,
                lock=self.cache.lock,
                on_error=self._informer_error_counter(resource),
                watch_list=watch_list,
                drop_managed_fields=resource is PODS,
            )
            for resource in INFORMER_RESOURCES
        ]
        self.events = EventRecorder(event_transport or transport, self.hostname)
        self._scheduled_with_bind: set[str] = set()
        """The uids of pods whose Scheduled Event follows their Binding in flight."""
        if self.binding.chains and _same_writes(transport, event_transport or transport):
            # The Scheduled Event goes as the Binding's follow-up (client/chained.py): at
            # 5,000 pods on 5,000 Nodes, recording it after the answer took about 9% of the
            # scheduling process's GIL time (a py-spy profile on 2 cores).
            self.binding.follow_bind = self._scheduled_event_with_bind
        self._binder = ThreadPoolExecutor(bind_workers, thread_name_prefix="bind")
        self._writer = ThreadPoolExecutor(4, thread_name_prefix="status")
        self._in_flight_binds = 0
        self.max_binds_in_flight = (
            max_binds_in_flight if max_binds_in_flight is not None else 2 * bind_workers
        )
        """How many binding cycles may be under way before the next scheduling cycle waits
        for one to end. kube-scheduler starts a goroutine per binding cycle, so its binds
        wait only on the API server; here ``bind_workers`` threads send them, and a
        scheduling loop that ran ahead of them queued binds for seconds: in a 1,000-node
        churn run (benchmarks/scheduler_churn.py) pods were still bound to deleted Nodes
        10 s after the deletion (about 600 of them; kube-scheduler 19, the last after
        0.2 s). With at most two binds per worker in flight: 19 and 0.2 s, and the run
        settled in 39 s instead of 47-49 s."""
        self._binds_done = threading.Condition()
        self._stop = threading.Event()
        self.scheduled = 0
        """Pods bound by this scheduler."""

    def _informer_error_counter(self, resource: Resource) -> Callable[[str], None]:
        def count(_message: str) -> None:
            self.metrics.relists.labels(resource.plural).inc()

        return count

    # -- lifecycle -----------------------------------------------------------------------

    def start_informers(self) -> None:
        """List and watch every resource, each on its own thread; and the queue's flushes."""
        for reflector in self.reflectors:
            reflector.start()
        threading.Thread(
            target=self.queue.run, args=(self._stop,), name="queue-flush", daemon=True
        ).start()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Whether every informer has listed once (``WaitForCacheSync``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for reflector in self.reflectors:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not reflector.synced.wait(remaining):
                return False
        return True

    @property
    def synced(self) -> bool:
        """Every informer has listed once."""
        return all(r.synced.is_set() for r in self.reflectors)

    def run(self, on_idle: Callable[[], object] | None = None) -> None:
        """``ScheduleOne`` in a loop until :meth:`stop`; ``on_idle`` runs whenever the
        queue had nothing to pop for half a second."""
        while not self._stop.is_set():
            info = self.queue.pop(timeout=0.5)
            if info is None:
                if on_idle is not None:
                    on_idle()
                continue
            try:
                self.loop.schedule_one(info)
            except Exception:  # a bug must not kill the scheduling loop
                log.exception("scheduling cycle failed", extra={"pod": info.key})
                self.queue.add_unschedulable_if_not_present(
                    info, self.queue.scheduling_cycle, error=True
                )

    def stop_scheduling(self, *, drain_timeout: float = 30.0) -> None:
        """Stop scheduling and let in-flight binds and status writes finish: after this
        the replica writes nothing that another leader's decisions depend on."""
        self._stop.set()
        self.queue.close()
        self.drain(drain_timeout)
        self._binder.shutdown(wait=True)
        self._writer.shutdown(wait=True)

    def stop(self, *, drain_timeout: float = 30.0) -> None:
        """:meth:`stop_scheduling`, then post the queued Events and stop the informers."""
        self.stop_scheduling(drain_timeout=drain_timeout)
        self.events.stop()
        for reflector in self.reflectors:
            reflector.stop()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no bind is in flight; False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._binds_done:
            while self._in_flight_binds:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._binds_done.wait(remaining)
        return True

    # -- informer handlers (eventhandlers.go) --------------------------------------------

    def on_add(self, resource: Resource, obj: dict[str, Any]) -> None:
        """An object appeared."""
        if resource is PODS:
            self._pod_changed(None, obj)
        elif resource is NODES:
            node = decode_one(obj)
            if isinstance(node, Node):
                self.cache.add_node(node)
                self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)
        else:
            decoded = decode_one(obj)
            if decoded is not None:
                self.cache.set_object(decoded)
                self._object_event(resource, ActionType.ADD, None, decoded)

    def _object_event(
        self, resource: Resource, action: ActionType, old: object | None, new: object | None
    ) -> None:
        # The storage and DRA kinds' event handlers (addAllEventHandlers): each change is
        # a cluster event for the plugins registered for it; other kinds make none.
        event_resource = KIND_RESOURCES.get(resource.kind)
        if event_resource is not None:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(event_resource, action), old, new)

    def on_update(self, resource: Resource, old: dict[str, Any], new: dict[str, Any]) -> None:
        """An object changed."""
        if resource is PODS:
            self._pod_changed(old, new)
        elif resource is NODES:
            node = decode_one(new)
            if not isinstance(node, Node):
                return
            with self.cache.lock:
                previous = self.cache.nodes.get(node.name)
                changed = self.cache.update_node(node)
            if not changed:
                return
            if previous is None:
                self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)
                return
            # updateNodeInCache: one move per UpdateNode* event the change amounts to.
            for event in node_scheduling_properties_change(node, previous):
                self.queue.move_all_to_active_or_backoff(event, previous, node)
        else:
            decoded = decode_one(new)
            if decoded is not None:
                self.cache.set_object(decoded)
                self._object_event(resource, ActionType.UPDATE, None, decoded)

    def on_delete(self, resource: Resource, obj: dict[str, Any]) -> None:
        """An object is gone."""
        key = object_key(obj)
        if resource is PODS:
            self._pods_decoded.forget(key)
            self.queue.delete(key)
            uid = (obj.get("metadata") or {}).get("uid") or key
            if self.waiting_pods.reject(uid, "", "removed"):
                # RejectWaitingPod: the assumed pod's room may help others.
                pod = decode_one(obj)
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
            removed = self.cache.remove_pod(key)
            if removed is not None:
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, removed, None)
        elif resource is NODES:
            with self.cache.lock:
                previous = self.cache.nodes.get(key)
                self.cache.remove_node(key)
            self.queue.move_all_to_active_or_backoff(EVENT_NODE_DELETE, previous, None)
        else:
            field = OBJECT_FIELDS.get(resource.kind)
            if field is not None:
                meta = obj.get("metadata") or {}
                self.cache.delete_object(field, f"{meta.get('namespace', '')}/{meta.get('name')}")
                self._object_event(resource, ActionType.DELETE, decode_one(obj), None)

    def _pod_changed(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        spec = _spec(new)
        key = object_key(new)
        if spec.get("nodeName"):
            pod = self._pods_decoded.decode(key, new)
            if not isinstance(pod, Pod):
                return
            was_assigned = old is not None and bool(_spec(old).get("nodeName"))
            if not was_assigned:
                # Bound since we last saw it (by us or anyone): no longer pending.
                self.queue.delete(key)
            with self.cache.lock:
                cached = self.cache.pods.get(key)
                previous = cached.pod if cached is not None else None
                self.cache.add_pod(pod)
            if not was_assigned or previous is None:
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod)
                return
            # updatePodInCache: AssignedPodUpdated per UpdatePod* event of the change.
            for event in pod_scheduling_properties_change(
                pod, previous, requests=pod_request_amounts
            ):
                self.queue.move_all_to_active_or_backoff(event, previous, pod)
            return
        if spec.get("schedulerName", "default-scheduler") not in self.profiles:
            return  # another scheduler's pod (responsibleForPod)
        if (new.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.delete(key)  # skipPodSchedule: being deleted
            return
        pod = self._pods_decoded.decode(key, new)
        if isinstance(pod, Pod):
            if old is None:
                self.queue.add(pod, new)
            else:
                self.queue.update(pod, new)

    # -- the scheduling loop's port (engine/loop.ClusterPort) ---------------------------

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One ``ScheduleOne`` of the shared loop (:class:`SchedulingLoop`)."""
        self.loop.schedule_one(info)

    def cycle_lock(self) -> AbstractContextManager[object]:
        """The cache's lock: the cycle and Reserve see one consistent cluster."""
        return self.cache.lock

    def frameworks(self) -> dict[str, Framework]:
        """The profiles' frameworks, rebuilt when a listed object changed (their handle
        holds the listed objects)."""
        with self.cache.lock:
            if self._frameworks_generation != self.cache.objects_generation:
                handle = Handle(
                    self.cache.snapshot,
                    self.cache.cluster_objects(),
                    self.configuration.parallelism,
                    binding=self.binding,
                    waiting_pods=self.waiting_pods,
                )
                self._frameworks = build_frameworks(
                    self.configuration,
                    self.registry,
                    handle,
                    self.features,
                    nominator=self.queue,
                )
                self._frameworks_generation = self.cache.objects_generation
            return self._frameworks

    def _pre_enqueue(self, pod: Pod) -> Status:
        framework = self.frameworks().get(pod.scheduler_name)
        return (
            framework.run_pre_enqueue_plugins(pod)
            if framework is not None
            else Status(Code.SUCCESS)
        )

    def is_pending(self, pod: Pod) -> bool:
        """Not bound meanwhile (the cache has it), not being deleted."""
        return self.cache.pods.get(pod.key) is None and not pod.metadata.deletion_timestamp

    def assume(self, pod: Pod, node: str) -> Pod | None:
        """Into the cache as if bound (``assume``)."""
        return self.cache.assume_pod(pod, node)

    def forget(self, assumed: Pod) -> None:
        """Out of the cache again."""
        self.cache.forget_pod(assumed)

    def run_binding_cycle(self, work: Callable[[], None]) -> None:
        """On a bind worker (``go bindingCycle``), counted so :meth:`drain` can wait; waits
        while :attr:`max_binds_in_flight` are under way."""
        self.binding_cycle_started()
        self._binder.submit(self._binding_worker, work)

    def binding_cycle_started(self) -> None:
        """One more binding cycle under way, after waiting while
        :attr:`max_binds_in_flight` are."""
        with self._binds_done:
            while self._in_flight_binds >= self.max_binds_in_flight and not self._stop.is_set():
                self._binds_done.wait(0.5)
            self._in_flight_binds += 1

    def binding_cycle_ended(self) -> None:
        """One binding cycle less (:meth:`drain` waits for none)."""
        with self._binds_done:
            self._in_flight_binds -= 1
            self._binds_done.notify_all()

    def after(self, seconds: float, action: Callable[[], None]) -> Callable[[], None]:
        """On a timer thread (a Permit timeout, or at once: a waiting pod's binding cycle)."""
        timer = threading.Timer(seconds, action)
        timer.daemon = True
        timer.start()
        return timer.cancel

    def _binding_worker(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # a bug must not lose the pod: the informer will resend it
            log.exception("binding cycle failed")
        finally:
            self.binding_cycle_ended()

    def bound(self, info: QueuedPodInfo, assumed: Pod, node: str, start: float) -> None:
        """``finishBinding``, the metrics, and the Scheduled Event."""
        pod = info.pod
        profile = pod.scheduler_name
        self.cache.finish_binding(assumed)
        self.scheduled += 1
        first = info.initial_attempt_timestamp
        self.metrics.pod_scheduled(
            profile,
            time.perf_counter() - start,
            info.attempts,
            time.monotonic() - first if first is not None else None,
        )
        uid = pod.metadata.uid
        if uid in self._scheduled_with_bind:
            self._scheduled_with_bind.discard(uid)  # sent by the write process
        else:
            self.events.event(
                profile, pod, "Normal", "Scheduled", "Binding", _scheduled_note(pod, node)
            )
        log.debug("bound", extra={"pod": pod.key, "node": node})

    def _scheduled_event_with_bind(self, pod: Pod, node: str) -> FollowUp | None:
        """The Scheduled Event :meth:`bound` would record, as the Binding's follow-up."""
        uid = pod.metadata.uid
        follow_up = self.events.follow_up(
            pod.scheduler_name,
            pod,
            "Normal",
            "Scheduled",
            "Binding",
            _scheduled_note(pod, node),
            not_sent=lambda: self._scheduled_with_bind.discard(uid),
        )
        if follow_up is not None:
            self._scheduled_with_bind.add(uid)
        return follow_up

    def gone(self, info: QueuedPodInfo, node: str) -> None:
        """Deleted or bound elsewhere while the bind was in flight."""
        log.info("bind dropped", extra={"pod": info.key, "node": node})

    def failed(self, info: QueuedPodInfo, failure: Failure, start: float) -> None:
        """The metrics, the FailedScheduling Event, the PodScheduled condition and the
        nomination (``handleSchedulingFailure``'s report)."""
        pod = info.pod
        profile = pod.scheduler_name
        self.metrics.schedule_attempts.labels(failure.result, profile).inc()
        if failure.post_filter_ran:
            self.metrics.preemption_attempts.inc()
        self.metrics.attempt_duration.labels(failure.result, profile).observe(
            time.perf_counter() - start
        )
        # handleSchedulingFailure's words and levels: a pod that fits nowhere is news
        # (info), an error is an error (an alert on the level sees it).
        if failure.result == "unschedulable":
            log.info(
                "Unable to schedule pod; no fit; waiting",
                extra={"pod": pod.key, "reason": failure.message},
            )
        else:
            log.error(
                "Error scheduling pod; retrying", extra={"pod": pod.key, "reason": failure.message}
            )
        self._report_failure(pod, info.raw, failure.reason, failure.message, failure.nominate)

    def stale(self, result: CycleResult) -> bool:
        """Never: the informers keep the PodDisruptionBudgets' status current."""
        del result
        return False

    def _report_failure(
        self,
        pod: Pod,
        raw: Mapping[str, Any],
        reason: str,
        message: str,
        nominate: str | None,
    ) -> None:
        self.events.event(
            pod.scheduler_name,
            pod,
            "Warning",
            "FailedScheduling",
            "Scheduling",
            truncate_message(message),
        )
        status: dict[str, Any] = {}
        # updatePod: the condition is patched only when it changes (UpdatePodCondition),
        # nominatedNodeName only when it is set to a different value.
        current = raw.get("status") or {}
        existing = next(
            (c for c in current.get("conditions") or () if c.get("type") == "PodScheduled"), None
        )
        if existing is None or (
            existing.get("status"),
            existing.get("reason"),
            existing.get("message"),
        ) != ("False", reason, message):
            transition = micro_time().split(".")[0] + "Z"
            if existing is not None and existing.get("status") == "False":
                transition = existing.get("lastTransitionTime") or transition
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": transition,
                }
            ]
        if nominate is not None and (current.get("nominatedNodeName") or "") != nominate:
            status["nominatedNodeName"] = nominate or None
        if status:
            self._writer.submit(self._patch_status, pod, status)

    def _patch_status(self, pod: Pod, status: Mapping[str, Any]) -> None:
        try:
            response = patch_pod_status(self.transport, pod, status)
        except ClusterError as error:
            log.warning("cannot update the pod status: %s", error, extra={"pod": pod.key})
            return
        if response.status >= 300 and response.status != 404:
            log.warning(
                "cannot update the pod status: HTTP %s", response.status, extra={"pod": pod.key}
            )

    def preempt(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        """``prepareCandidate``: each victim gets the DisruptionTarget condition, then is
        deleted (with an Event naming the preemptor)."""
        self.metrics.preemption_victims.observe(len(victims))
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": PREEMPTION_CONDITION_MESSAGE.format(preemptor.scheduler_name),
            "lastTransitionTime": micro_time().split(".")[0] + "Z",
        }
        for victim in victims:
            self._writer.submit(self._evict, preemptor, victim, node, condition)

    def nomination_cleared(self, pod: Pod) -> None:
        """The pod's ``status.nominatedNodeName`` is cleared."""
        self._writer.submit(self._patch_status, pod, {"nominatedNodeName": None})

    def _evict(self, preemptor: Pod, victim: Pod, node: str, condition: dict[str, Any]) -> None:
        try:
            patch_pod_status(self.transport, victim, {"conditions": [condition]})
            response = delete_pod(self.transport, victim)
        except ClusterError as error:
            log.warning("cannot preempt: %s", error, extra={"pod": victim.key})
            return
        if response.status < 300:
            self.events.event(
                preemptor.scheduler_name,
                victim,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor.metadata.uid} on node {node}",
                related=preemptor,
            )
