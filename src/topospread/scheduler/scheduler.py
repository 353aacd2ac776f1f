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
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from topospread.client.source import NODES, PODS, RESOURCES, Resource
from topospread.engine.cycle import NO_NODES_AVAILABLE, CycleResult, NodeSearch, schedule_one
from topospread.errors import ClusterError
from topospread.framework.cycle_state import CycleState
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
from topospread.framework.node_info import ClusterObjects
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, is_success
from topospread.model.kinds import KINDS
from topospread.model.objects import Node, Pod
from topospread.model.resources import pod_request_amounts
from topospread.plugins.dynamicresources import resolve_claims
from topospread.plugins.dynamicresources import unsupported_reasons as dra_unsupported_reasons
from topospread.plugins.registry import registry as plugin_registry
from topospread.scheduler.api import (
    EventRecorder,
    bind_pod,
    delete_pod,
    patch_pod_status,
    truncate_message,
)
from topospread.scheduler.binding import ApiBinding
from topospread.scheduler.cache import OBJECT_FIELDS, SchedulerCache, decode_one
from topospread.scheduler.informer import Reflector, StreamingTransport, object_key
from topospread.scheduler.leader import micro_time
from topospread.scheduler.metrics import SchedulerMetrics
from topospread.scheduler.options import SchedulerOptions
from topospread.scheduler.queue import (
    QueuedPodInfo,
    SchedulingQueue,
    build_queueing_hint_map,
)

__all__ = ["INFORMER_RESOURCES", "Scheduler"]

log = logging.getLogger("topospread.scheduler")

INFORMER_RESOURCES: Final = tuple(RESOURCES[k.kind] for k in KINDS if k.watched)
"""What the scheduler watches, the table's watched rows (:data:`topospread.model.kinds.KINDS`):
the informers of kube-scheduler that topospread models (DeviceTaintRules only to refuse the
pods whose devices they may taint)."""

POD_FIELD_SELECTOR: Final = "status.phase!=Succeeded,status.phase!=Failed"
"""The scheduler's pod informer leaves out terminated pods (``NewInformerFactory``)."""

UNSUPPORTED_CLAIMS_MESSAGE: Final = (
    "unsupported: topospread cannot decide this pod's devices as kube-scheduler does; "
    "leave this pod to kube-scheduler"
)


@dataclass(frozen=True, slots=True)
class Reservation:
    """A pod on its way to a node: the framework (profile) whose binding cycle runs and
    the cycle's state, which holds what its plugins' Reserve assumed (Unreserve undoes it)."""

    framework: Framework
    state: CycleState
    node: str


PREEMPTION_CONDITION_MESSAGE: Final = "{}: preempting to accommodate a higher priority pod"


def _spec(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = raw.get("spec")
    return spec if isinstance(spec, dict) else {}


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
        hostname: str | None = None,
        seed: int | None = None,
    ) -> None:
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
        )
        self.metrics.watch_queue(self.queue.pending_pods)
        self.profiles = {p.scheduler_name for p in self.configuration.profiles}
        self.search = NodeSearch(self.configuration.percentage_of_nodes_to_score)
        self._rng = random.Random(seed)
        self.binding = ApiBinding(transport, self.cache, stopped=lambda: self._stop.is_set())
        """The binding port the plugins' Reserve / PreBind / Unreserve write through."""
        self._frameworks: dict[str, Framework] = {}
        self._frameworks_generation = -1
        # buildQueueingHintMap: each profile's requeue events, from its enabled plugins.
        self.queue.queueing_hints = {
            name: build_queueing_hint_map(framework.enqueue_extensions())
            for name, framework in self._framework_map().items()
        }
        self.reflectors = [
            Reflector(
                transport,
                resource,
                self,
                field_selector=POD_FIELD_SELECTOR if resource is PODS else None,
                lock=self.cache.lock,
                on_error=self._informer_error_counter(resource),
            )
            for resource in INFORMER_RESOURCES
        ]
        self.events = EventRecorder(transport, self.hostname)
        self._binder = ThreadPoolExecutor(bind_workers, thread_name_prefix="bind")
        self._writer = ThreadPoolExecutor(4, thread_name_prefix="status")
        self._in_flight_binds = 0
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

    def run(self) -> None:
        """``ScheduleOne`` in a loop until :meth:`stop`."""
        while not self._stop.is_set():
            info = self.queue.pop(timeout=0.5)
            if info is None:
                continue
            try:
                self.schedule_one(info)
            except Exception:  # a bug must not kill the scheduling loop
                log.exception("scheduling cycle failed", extra={"pod": info.key})
                self.queue.add_unschedulable_if_not_present(
                    info, self.queue.scheduling_cycle, error=True
                )

    def stop(self, *, drain_timeout: float = 30.0) -> None:
        """Stop scheduling, let in-flight binds finish, stop the informers and writers."""
        self._stop.set()
        self.queue.close()
        self.drain(drain_timeout)
        self._binder.shutdown(wait=True)
        self._writer.shutdown(wait=True)
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
            self.queue.delete(key)
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
            pod = decode_one(new)
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
        pod = decode_one(new)
        if isinstance(pod, Pod):
            if old is None:
                self.queue.add(pod, new)
            else:
                self.queue.update(pod, new)

    # -- the scheduling cycle ------------------------------------------------------------

    def _framework_map(self) -> dict[str, Framework]:
        # Frameworks read the listed objects through their handle: rebuilt when any changed.
        if self._frameworks_generation != self.cache.objects_generation:
            handle = Handle(
                self.cache.snapshot,
                self.cache.cluster_objects(),
                self.configuration.parallelism,
                binding=self.binding,
            )
            frameworks = {}
            for profile in self.configuration.profiles:
                framework = Framework(profile, self.registry, handle, self.features)
                framework.nominated_pods_for_node = self.queue.nominated_pods_for_node
                framework.nominated_node_names = self.queue.nominated_node_names
                frameworks[profile.scheduler_name] = framework
            self._frameworks = frameworks
            self._frameworks_generation = self.cache.objects_generation
        return self._frameworks

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One ``ScheduleOne``: the cycle, then an async bind or the failure handling."""
        pod = info.pod
        cycle = self.queue.scheduling_cycle
        start = time.perf_counter()
        profile = pod.scheduler_name
        with self.cache.lock:
            if self.cache.pods.get(pod.key) is not None or pod.metadata.deletion_timestamp:
                self.queue.done(pod.key)  # bound meanwhile, or being deleted
                return
            objects = self.cache.cluster_objects()
            if pod.resource_claims or objects.device_classes:
                unsupported = dra_unsupported_reasons(pod, objects)
                if unsupported:
                    self._refuse_claims(info, cycle, unsupported)
                    return
                if pod.resource_claims and self._claims_not_ready(info, cycle, objects):
                    return
            framework = self._framework_map()[profile]
            result = schedule_one(
                framework, pod, self.search, skip_single_node_scoring=True, lean=True
            )
            node = result.selected_node
            if node is not None and len(result.tied_nodes) > 1:
                node = self._rng.choice(result.tied_nodes)
            assumed = self.cache.assume_pod(pod, node) if node is not None else None
            reserve_error = ""
            if assumed is not None and node is not None:
                # schedulingCycle's end: Reserve, then Permit, with the binding cycle's
                # state (the plugins assume through the binding port, under the lock).
                reservation = Reservation(framework, CycleState(), node)
                status = framework.run_reserve_plugins_reserve(reservation.state, pod, node)
                if is_success(status):
                    status = framework.run_permit_plugins(reservation.state, pod, node)
                if not is_success(status):
                    reserve_error = status.message
        if node is None or assumed is None:
            self._failure(info, result, cycle, start)
            return
        if reserve_error:
            self._binding_cycle_failed(info, assumed, reservation, cycle, start, reserve_error)
            return
        # assume(): a pod on its way to a node is no longer a nominated one.
        self.queue.nominate(pod, "")
        with self._binds_done:
            self._in_flight_binds += 1
        self._binder.submit(self._bind, info, assumed, node, cycle, start, reservation)

    def _claims_not_ready(self, info: QueuedPodInfo, cycle: int, objects: ClusterObjects) -> bool:
        # DynamicResources' PreEnqueue: a pod whose claims are not all there (created from
        # its templates, not being deleted, its own) waits without a scheduling attempt or
        # an Event, until a claim or the pod's claim statuses change.
        _, reason = resolve_claims(info.pod, objects)
        if reason is None:
            return False
        log.debug("pre-enqueue", extra={"pod": info.key, "reason": reason})
        info.unschedulable_plugins = frozenset({"DynamicResources"})
        self.queue.add_unschedulable_if_not_present(info, cycle)
        return True

    def _unreserve(self, pod: Pod, reservation: Reservation) -> None:
        """Unreserve, in the reverse order of Reserve."""
        reservation.framework.run_reserve_plugins_unreserve(
            reservation.state, pod, reservation.node
        )

    def _bind(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        node: str,
        cycle: int,
        start: float,
        reservation: Reservation,
    ) -> None:
        try:
            self._bind_once(info, assumed, node, cycle, start, reservation)
        except Exception:
            log.exception("bind failed", extra={"pod": info.key, "node": node})
            self.cache.forget_pod(assumed)
            self._unreserve(info.pod, reservation)
            self.queue.add_unschedulable_if_not_present(info, cycle, error=True)
        finally:
            with self._binds_done:
                self._in_flight_binds -= 1
                self._binds_done.notify_all()

    def _bind_once(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        node: str,
        cycle: int,
        start: float,
        reservation: Reservation,
    ) -> None:
        pod = info.pod
        profile = pod.scheduler_name
        framework, state = reservation.framework, reservation.state
        # bindingCycle: PreBind, Bind (the plugins', else DefaultBinder's API bind here),
        # PostBind.
        status = framework.run_pre_bind_plugins(state, pod, node)
        if not is_success(status):
            self._binding_cycle_failed(info, assumed, reservation, cycle, start, status.message)
            return
        bound = framework.run_bind_plugins(state, pod, node)
        if not bound.is_skip:
            if not is_success(bound):
                self._binding_cycle_failed(info, assumed, reservation, cycle, start, bound.message)
                return
            http_status, detail = 201, ""
        else:
            try:
                response = bind_pod(self.transport, pod, node)
                http_status = response.status
                detail = response.data[:300].decode(errors="replace")
            except ClusterError as error:
                http_status, detail = 0, str(error)
        if 200 <= http_status < 300:
            framework.run_post_bind_plugins(state, pod, node)
            self.cache.finish_binding(assumed)
            self.queue.done(pod.key)
            self.scheduled += 1
            elapsed = time.perf_counter() - start
            self.metrics.schedule_attempts.labels("scheduled", profile).inc()
            self.metrics.attempt_duration.labels("scheduled", profile).observe(elapsed)
            self.metrics.binds.labels("bound").inc()
            if info.initial_attempt_timestamp is not None:
                self.metrics.sli_duration.labels(str(min(info.attempts, 15))).observe(
                    time.monotonic() - info.initial_attempt_timestamp
                )
            self.metrics.pod_scheduling_attempts.observe(info.attempts)
            self.events.event(
                profile,
                pod,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {pod.namespace}/{pod.name} to {node}",
            )
            log.debug("bound", extra={"pod": pod.key, "node": node})
            return
        self.cache.forget_pod(assumed)
        self._unreserve(pod, reservation)
        if http_status in (404, 409):
            # Deleted, or bound by another client, while in flight: the informer has (or
            # will have) the pod as it is; nothing to retry.
            self.queue.done(pod.key)
            self.metrics.binds.labels("conflict").inc()
            log.info("bind dropped", extra={"pod": pod.key, "node": node, "status": http_status})
            return
        self.metrics.binds.labels("error").inc()
        self.metrics.schedule_attempts.labels("error", profile).inc()
        self.metrics.attempt_duration.labels("error", profile).observe(time.perf_counter() - start)
        log.warning(
            "bind failed, requeued",
            extra={"pod": pod.key, "node": node, "status": http_status, "detail": detail},
        )
        message = f"Binding rejected: {detail}"
        info.unschedulable_plugins = frozenset()
        self.queue.add_unschedulable_if_not_present(info, cycle, error=True)
        self._report_failure(pod, info.raw, "SchedulerError", message, None)

    def _refuse_claims(self, info: QueuedPodInfo, cycle: int, reasons: Sequence[str]) -> None:
        # A pod whose devices topospread cannot decide as upstream does is not scheduled.
        pod = info.pod
        message = f"{UNSUPPORTED_CLAIMS_MESSAGE}: pod {pod.key}: {'; '.join(reasons)}"
        log.warning("unsupported", extra={"pod": pod.key, "reason": message})
        info.unschedulable_plugins = frozenset({"DynamicResources"})
        self.queue.add_unschedulable_if_not_present(info, cycle)
        self._report_failure(pod, info.raw, "SchedulerError", message, None)

    def _binding_cycle_failed(
        self,
        info: QueuedPodInfo,
        assumed: Pod,
        reservation: Reservation,
        cycle: int,
        start: float,
        message: str,
    ) -> None:
        """``handleBindingCycleError``: forget, unreserve, requeue with backoff, report."""
        pod = info.pod
        self.cache.forget_pod(assumed)
        self._unreserve(pod, reservation)
        self.metrics.schedule_attempts.labels("error", pod.scheduler_name).inc()
        self.metrics.attempt_duration.labels("error", pod.scheduler_name).observe(
            time.perf_counter() - start
        )
        log.warning("binding cycle failed", extra={"pod": pod.key, "reason": message})
        info.unschedulable_plugins = frozenset()
        self.queue.add_unschedulable_if_not_present(info, cycle, error=True)
        self._report_failure(pod, info.raw, "SchedulerError", message, None)

    # -- failures and preemption ---------------------------------------------------------

    def _failure(self, info: QueuedPodInfo, result: CycleResult, cycle: int, start: float) -> None:
        pod = info.pod
        profile = pod.scheduler_name
        message = result.message or "no node selected"
        # A FitError ("0/N nodes are available: ...") or ErrNoNodesAvailable, which
        # schedulingCycle reports as UnschedulableAndUnresolvable: rejected, not an error.
        fit_error = message.startswith("0/") or message == NO_NODES_AVAILABLE
        reason = "Unschedulable" if fit_error else "SchedulerError"
        result_label = "unschedulable" if fit_error else "error"
        self.metrics.schedule_attempts.labels(result_label, profile).inc()
        self.metrics.attempt_duration.labels(result_label, profile).observe(
            time.perf_counter() - start
        )
        info.unschedulable_plugins = frozenset(
            s.plugin
            for s in result.statuses.values()
            if s is not None and s.plugin and s.code is not Code.ERROR
        )
        self.queue.add_unschedulable_if_not_present(info, cycle, error=not fit_error)
        # handleSchedulingFailure's nominatingInfo: cleared when no PostFilter ran; a
        # PostFilter result overrides it ("" clears); no result leaves it as it is.
        nominate: str | None = None
        if not result.post_filter_ran:
            nominate = ""
        elif result.post_filter is not None:
            nominate = result.post_filter.nominated_node_name
        if result.post_filter_ran:
            self.metrics.preemption_attempts.inc()
        post = result.post_filter
        status = result.post_filter_status
        if (
            post is not None
            and post.nominated_node_name
            and status is not None
            and (status.code is Code.SUCCESS)
        ):
            victims = list(post.victims.get(post.nominated_node_name, ()))
            self.metrics.preemption_victims.observe(len(victims))
            self._preempt(pod, post.nominated_node_name, victims)
        if nominate is not None:
            self.queue.nominate(pod, nominate)
        log.info(
            "unschedulable" if fit_error else "scheduling error",
            extra={"pod": pod.key, "reason": message},
        )
        self._report_failure(pod, info.raw, reason, message, nominate)

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

    def _preempt(self, preemptor: Pod, node: str, victims: list[Pod]) -> None:
        # prepareCandidate: each victim gets the DisruptionTarget condition, then is
        # deleted (with an Event naming the preemptor); lower-priority pods nominated to
        # the node lose their nomination.
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": PREEMPTION_CONDITION_MESSAGE.format(preemptor.scheduler_name),
            "lastTransitionTime": micro_time().split(".")[0] + "Z",
        }
        for victim in victims:
            self._writer.submit(self._evict, preemptor, victim, node, condition)
        priority = preemptor.priority or 0
        for other in self.queue.nominated_pods_for_node(node):
            if (other.priority or 0) < priority and other.key != preemptor.key:
                self.queue.nominate(other, "")
                self._writer.submit(self._patch_status, other, {"nominatedNodeName": None})

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
