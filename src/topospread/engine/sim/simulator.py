"""The what-if simulator: a deterministic event loop around kube-scheduler's cycle.

Events sit in one heap ordered by ``(time, priority, sequence)`` — the sequence number
is a monotonic counter, so runs are exactly repeatable (P16). Priorities at one
simulated second, in order: scenario steps, API actions (evictions, drain retries),
controller syncs, queue moves, scheduling cycles. So every controller that a change
woke runs before the scheduler takes the pods it created, and the scheduler drains its
active queue one pod per event (one ``schedule_one`` per pod per attempt).

Time is whole simulated seconds. A controller woken by a pod becoming Ready (= bound)
runs one second later; taint-based evictions happen after the pod's
``tolerationSeconds``; ``kubectl drain`` retries a blocked eviction every 5 s.

The scheduling queue, simplified from ``pkg/scheduler/backend/queue``: the active queue
is ordered as PrioritySort orders it (``spec.priority`` descending, then the time the pod
entered the queue). A pod that fails is kept aside as unschedulable; any cluster event
(a node added, changed or removed, a pod bound or deleted) moves every unschedulable
pod back, into the active queue once its backoff (1 s doubling to 10 s, from the
KubeSchedulerConfiguration) has passed. Upstream filters those moves by each plugin's
queueing hints; moving all of them only costs extra attempts, never changes where pods
land. No periodic flush of unschedulable pods.

Preemption as kube-scheduler's DefaultPreemption does it. When a cycle finds no node and
the PostFilter nominates one, the victims on that node are deleted at once (event
``preempted``, naming the preemptor; their controllers replace them), lower-priority pods
nominated to that node lose their nomination (``prepareCandidate``), and the pod gets
``status.nominatedNodeName`` and stays pending with its FailedScheduling message until
its next attempt, which tries the nominated node first (``evaluateNominatedNode``). A
PostFilter result without a node clears the nomination, as does a failure without
PostFilter (no PostFilter plugins, or an error); binding clears it
(ClearingNominatedNodeNameAfterBinding). Meanwhile every Filter counts the pods nominated
to a node with a priority at least the filtered pod's as if they ran there (the
scheduling queue's nominator), so the room a preemption opened is kept for its pod.
PodDisruptionBudgets reach the dry run with ``status.disruptionsAllowed`` as the
disruption controller would compute it now. The async preemption of v1.37.1 (default
on) finishes within the same simulated second here, like every deletion.

Node search as kube-scheduler's (``schedule_one`` with a :class:`NodeSearch`): the
search stops after ``numFeasibleNodesToFind`` feasible nodes (every node below 100
nodes; the scheduler-wide ``percentageOfNodesToScore`` of the configuration, a profile's
own value overriding it) and starts where the previous cycle's search left off, as a
scheduler with parallelism 1 would; a lone feasible node is taken without scoring.

Volumes (:mod:`.volumes`): when a cycle picks a node for a pod with claims, VolumeBinding's
PreBind runs before the binding — the claims it matched get their volumes, the ones to
provision the selected node — and the PV controller and provisioner finish in the same
instant; the storage objects are listed to every cycle like the workloads.

The scheduler's view is ONE long-lived :class:`Snapshot`, updated incrementally as pods
are bound or deleted and nodes change (kube-scheduler's cache).

Costs for big runs (15,000 nodes, 150,000 pods): cycles are lean and, when every
active plugin has a batch form, run Filter and Score as NumPy operations over the
snapshot's node table (``schedule_one``'s bulk path; the per-node path otherwise, and
for pods that fit nowhere, whose rejections and preemption need every status).
PodTopologySpread's counts come from the snapshot's incremental counters, so no cycle
walks the existing pods. The loop itself is O(log events) per event; node steps touch
only the pods of their nodes; the report at the end of each step is O(workloads ×
nodes × pods per node). ``benchmarks/sim_scale.py`` measures it.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Final

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
from topospread.engine.rebalance.plan import RebalancePlan, plan_rebalance
from topospread.errors import InputError, TopospreadError, UnsupportedError
from topospread.framework.binding import (
    AssumedObject,
    BindingGone,
    ClaimAllocation,
    VolumeCheck,
)
from topospread.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    EVENT_NODE_DELETE,
    ActionType,
    ClusterEvent,
    EventResource,
    node_scheduling_properties_change,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, Status
from topospread.framework.waiting import WaitingPods, waiting_key
from topospread.model.objects import (
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    LimitRange,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    RuntimeClass,
    Service,
    StatefulSet,
    Taint,
)
from topospread.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from topospread.model.taints import toleration_tolerates_taint
from topospread.plugins import names
from topospread.plugins.registry import registry as plugin_registry

from .autoscaler import Autoscaler
from .controllers import (
    ANNOTATION_DESIRED_REPLICAS,
    ANNOTATION_MAX_REPLICAS,
    ANNOTATION_REVISION,
    Controllers,
    budgets_blocking,
    disruptions_allowed,
    selector_matches,
    stateful_set_revision,
)
from .report import layout, pending_pods, workload_spreads
from .result import SimEvent, SimulationResult, StepResult
from .scenario import (
    AddNodes,
    Apply,
    Cordon,
    DeletePods,
    Drain,
    FailNodes,
    LabelNodes,
    NodeSet,
    Rebalance,
    RemoveNodes,
    Rollout,
    Scale,
    ScalePool,
    Scenario,
    ScenarioObject,
    SetPool,
    Step,
    TaintNodes,
    Uncordon,
    Wait,
    validate_rolled_out_template,
)
from .state import (
    TAINT_UNREACHABLE,
    ClusterState,
    DeploymentState,
    OwnerKey,
    PodRecord,
    ReplicaSetState,
    StatefulSetState,
)
from .volumes import VolumeControllers

__all__ = [
    "DEFAULT_MAX_EVENTS_PER_STEP",
    "DRAIN_RETRY_SECONDS",
    "PROGRESS_EVERY",
    "EmptySchedule",
    "SimProgress",
    "SimulationLimitError",
    "Simulator",
    "simulate",
]

DRAIN_RETRY_SECONDS: Final = 5
"""kubectl drain waits this long before retrying an eviction a budget refused."""
DRAIN_MAX_RETRIES: Final = 120
"""Give up a drain after this many retries (10 minutes) and say so in the step notes."""
DEFAULT_MAX_EVENTS_PER_STEP: Final = 2_000_000

_PROVISIONED_SHOWN: Final = 12
"""Provisioned volumes a step's note names; the rest are counted (all are events)."""
_RS_ANNOTATIONS: Final = (ANNOTATION_REVISION, ANNOTATION_DESIRED_REPLICAS, ANNOTATION_MAX_REPLICAS)
"""What a stored ReplicaSet carries of the deployment controller's bookkeeping."""

EVENT_STORAGE_CHANGED: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, "StorageChanged"
)
"""A claim, volume or other storage object changed (which one is not tracked)."""

# Event priorities within one simulated second.
_STEP, _API, _CONTROLLER, _QUEUE, _SCHEDULE = range(5)


class EmptySchedule(TopospreadError):
    """``Simulator.step()`` was called with no event left to process."""


class SimulationLimitError(TopospreadError):
    """A step did not settle within the event budget (a controller loop that never ends)."""


@dataclass(frozen=True, slots=True)
class PendingPod:
    """A pod waiting in the scheduling queue: its record, attempts, and why it waits."""

    record: PodRecord
    attempts: int
    message: str


_Action = Callable[[], None]


class _SimulatedBinding:
    """The binding port over the simulated cluster: the volume controllers take the
    volume and claim writes, the simulator the pod's bind."""

    def __init__(self, volumes: VolumeControllers, bind: Callable[[Pod, str], None]) -> None:
        self._volumes = volumes
        self._bind = bind

    def assume_objects(self, assumed: Sequence[AssumedObject]) -> None:
        """Reserve's assumptions."""
        self._volumes.assume_objects(assumed)

    def restore_objects(
        self, assumed: Sequence[AssumedObject], originals: Sequence[AssumedObject]
    ) -> None:
        """Unreserve's restore."""
        self._volumes.restore_objects(assumed, originals)

    def bind_volume(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim, node_name: str
    ) -> None:
        """A static binding."""
        self._volumes.bind_volume(volume, claim, node_name)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """A claim to provision on the node."""
        self._volumes.select_node(claim, node_name)

    def wait_for_volumes(
        self, node_name: str, pod_key: str, check: VolumeCheck, timeout: float
    ) -> None:
        """The controllers finished in the instant of the write."""
        self._volumes.wait_for_volumes(node_name, pod_key, check, timeout)

    def reserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """DynamicResources' writes (refused earlier: the simulator allocates no claims)."""
        self._volumes.reserve_claims(pod, planned)

    def unreserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """DynamicResources' Unreserve write."""
        self._volumes.unreserve_claims(pod, planned)

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder's write."""
        self._bind(pod, node_name)


class Simulator:
    """Runs a :class:`Scenario`; use :meth:`run_scenario`, or drive it with steps.

    ``tie_break`` is ``first`` (kube-scheduler's score heap over the feasible nodes in
    visit order, :func:`~topospread.engine.cycle.upstream_pick`, as at parallelism 1) or
    ``random`` (a seeded choice among the tied nodes: the run-to-run variation parallel
    Filter workers give upstream).
    """

    CONTROLLER_PRIORITY: Final = _CONTROLLER

    def __init__(
        self,
        scenario: Scenario,
        seed: int = 0,
        *,
        tie_break: str = "first",
        registry: Mapping[str, PluginFactory] | None = None,
        features: Features = Features(),
        max_events_per_step: int = DEFAULT_MAX_EVENTS_PER_STEP,
    ) -> None:
        if tie_break not in ("first", "random"):
            raise ValueError(f"tie_break must be 'first' or 'random', not {tie_break!r}")
        self.scenario = scenario
        self.seed = seed
        self.tie_break = tie_break
        self.features = features
        self.registry = dict(registry) if registry is not None else plugin_registry()
        self.max_events_per_step = max_events_per_step
        self.configuration = scenario.configuration
        self.now = 0
        self._heap: list[tuple[int, int, int, _Action]] = []
        self._seq = 0
        self._name_rng = random.Random(seed)
        self._tie_rng = random.Random(f"{seed}/ties")
        self.state = ClusterState(self)
        self.volumes = VolumeControllers(self.state)
        self.controllers = Controllers(self.state, self._name_rng, self._requeue, self.volumes)
        self.snapshot = Snapshot(())
        self.node_search = NodeSearch(self.configuration.percentage_of_nodes_to_score)
        """kube-scheduler's percentageOfNodesToScore and rotating start index."""
        self._frameworks: dict[str, Framework] | None = None
        self._listed: tuple[tuple[object, ...], ...] = ()
        self._objects = ClusterObjects()
        """What the frameworks list: workloads, budgets and the storage objects."""
        self._budgets_in_use: tuple[PodDisruptionBudget, ...] = ()
        """The PDBs, with their live disruptionsAllowed, the frameworks were built with."""
        self._schedule_pending = False
        self._sync_at: dict[OwnerKey, int] = {}
        self._events: list[SimEvent] = []
        self._notes: list[str] = []
        self._provisioned: list[str] = []
        """Volumes provisioned in this step, for its note: where each claim's data lives."""
        self._attempts = 0
        self._attempts_total = 0
        self._bound_total = 0
        self._progress: Callable[[SimProgress], None] | None = None
        self._steps = (0, 0)
        self.autoscaler = (
            Autoscaler(self, scenario.pools, scenario.autoscaler)
            if scenario.autoscaler is not None and scenario.pools
            else None
        )
        """Cluster Autoscaler or Karpenter over the scenario's node pools (None: no pools)."""
        self.waiting_pods = WaitingPods()
        """Pods waiting at Permit."""
        self._assumed: dict[str, Pod] = {}
        """Pods assumed on their node, by key, until bound or forgotten."""
        self.binding = _SimulatedBinding(self.volumes, self._bind_pod)
        """The binding port: the volume controllers' writes, and the pod's bind."""
        self.queue = SchedulingQueue(
            initial_backoff=float(self.configuration.pod_initial_backoff_seconds),
            max_backoff=float(self.configuration.pod_max_backoff_seconds),
            clock=lambda: float(self.now),
            pre_enqueue=self._pre_enqueue,
        )
        """kube-scheduler's queue on the simulated clock (the live scheduler's too)."""
        frameworks = self._framework_map()
        self.queue.queueing_hints = queueing_hints(frameworks)
        self.queue.sort_key = queue_sort_key(frameworks)
        self.loop = SchedulingLoop(
            self.queue,
            self,
            self.node_search,
            tie_break=self._tie_rng if tie_break == "random" else None,
        )
        """The scheduling loop the live scheduler runs, with this simulator as its port."""

    # -- the event loop ---------------------------------------------------------------

    def schedule(self, delay: int, priority: int, action: _Action) -> None:
        """Run ``action`` ``delay`` seconds from now, after earlier-queued equal events."""
        self._seq += 1
        heapq.heappush(self._heap, (self.now + delay, priority, self._seq, action))

    def peek(self) -> int | None:
        """The time of the next event, or None."""
        return self._heap[0][0] if self._heap else None

    def step(self) -> None:
        """Process the next event; :class:`EmptySchedule` if there is none."""
        if not self._heap:
            raise EmptySchedule("no events left")
        time, _, _, action = heapq.heappop(self._heap)
        self.now = self.state.now = time
        action()

    def run(self, until: int | None = None) -> None:
        """Process events until none is left, or until the next one is after ``until``."""
        processed = 0
        while self._heap and (until is None or self._heap[0][0] <= until):
            self.step()
            processed += 1
            if processed > self.max_events_per_step:
                raise SimulationLimitError(
                    f"more than {self.max_events_per_step} events without settling "
                    f"(t={self.now}s); the scenario may loop"
                )
        if until is not None and until > self.now:
            self.now = self.state.now = until

    # -- running a scenario -----------------------------------------------------------

    def run_scenario(
        self, progress: Callable[[SimProgress], None] | None = None
    ) -> SimulationResult:
        """Create the initial cluster, run every step to quiescence, report each one.

        ``progress`` is called after the initial cluster, after each step, and every
        :data:`PROGRESS_EVERY` scheduling attempts within a step.
        """
        total = len(self.scenario.steps) + 1
        self._progress = progress
        self._steps = (0, total)
        results = [self._run_action(-1, "initial", "initial cluster", self._initial)]
        self._report_progress(1)
        for step in self.scenario.steps:
            results.append(self.run_step(step))
            self._report_progress(step.index + 2)
        self._progress = None
        from topospread import KUBERNETES_VERSION

        return SimulationResult(
            self.scenario.name,
            self.scenario.description,
            self.seed,
            KUBERNETES_VERSION,
            tuple(results),
        )

    def run_step(self, step: Step) -> StepResult:
        """Apply one scenario step and run until the cluster settles."""
        return self._run_action(step.index, step.kind, step.title(), lambda: self._apply(step))

    def _run_action(self, index: int, kind: str, title: str, action: _Action) -> StepResult:
        self._events, self._notes, self._attempts = [], [], 0
        self._provisioned = []
        start = self.now + 1 if index >= 0 else 0
        self.now = self.state.now = start
        self.schedule(0, _STEP, action)
        self.run()
        if self.autoscaler is not None:
            self._notes.extend(self._rebalance_advice())
        if self._provisioned:
            # Where each new volume lives decides where its pods may ever run: one note.
            shown = self._provisioned[:_PROVISIONED_SHOWN]
            more = len(self._provisioned) - len(shown)
            self._notes.append(
                "volumes provisioned: "
                + "; ".join(shown)
                + (f"; and {more} more (events of kind volume)" if more else "")
            )
        return StepResult(
            index=index,
            kind=kind,
            title=title,
            started=start,
            settled=self.now,
            events=tuple(self._events),
            layout=layout(self.state, self.snapshot),
            pending=pending_pods(
                self.state,
                {q.record.key: q.message for q in self.unschedulable_pods()},
                {q.record.key: q.attempts for q in self.unschedulable_pods()},
            ),
            spread=workload_spreads(
                self.state, self.snapshot, self._framework_map(), self.features
            ),
            scheduling_attempts=self._attempts,
            notes=tuple(self._notes),
            pools=self.autoscaler.sizes() if self.autoscaler is not None else (),
        )

    # -- the initial cluster and steps ------------------------------------------------

    def _initial(self) -> None:
        self._check_supported(self.scenario.objects)
        self._create_all(self.scenario.objects)

    def _create_all(self, objects: Sequence[ScenarioObject]) -> None:
        # The volume controllers see the objects once all of them exist, so that a claim
        # finds the volume written after it, in any order.
        with self.volumes.deferred():
            for obj in objects:
                self._create(obj)
        # Written as a cluster stores them (a capture, a live cluster), workloads own their
        # ReplicaSets and pods through ownerReferences: their controllers take them over.
        self.controllers.take_over()

    def _apply(self, step: Step) -> None:
        action = step.action
        if isinstance(action, Apply):
            self._check_supported(action.objects)
            self._create_all(action.objects)
        elif isinstance(action, Scale):
            self._scale(action)
        elif isinstance(action, Rollout):
            self._rollout(action, step)
        elif isinstance(action, DeletePods):
            for record in list(self.state.pods.values()):
                pod = record.pod
                if pod.namespace != action.namespace:
                    continue
                if pod.name in action.names or (
                    action.selector is not None and selector_matches(action.selector, pod.labels)
                ):
                    self.state.delete_pod(record.key, "deleted by the scenario")
        elif isinstance(action, Cordon | Uncordon):
            for node in self._nodes(action.nodes):
                self._update_node(
                    replace(node, unschedulable=isinstance(action, Cordon)),
                    "cordoned" if isinstance(action, Cordon) else "uncordoned",
                )
        elif isinstance(action, Drain):
            self._drain(action.nodes)
        elif isinstance(action, FailNodes):
            self._fail(action)
        elif isinstance(action, AddNodes):
            for node in action.nodes:
                self._add_node(node)
        elif isinstance(action, RemoveNodes):
            for node in self._nodes(action.nodes):
                self._remove_node(node.name, "removed")
        elif isinstance(action, LabelNodes):
            for node in self._nodes(action.nodes):
                labels = {
                    k: v for k, v in node.labels.items() if action.labels.get(k, v) is not None
                }
                labels.update({k: v for k, v in action.labels.items() if v is not None})
                meta = replace(node.metadata, labels=labels)
                self._update_node(replace(node, metadata=meta), "labels changed")
        elif isinstance(action, TaintNodes):
            for node in self._nodes(action.nodes):
                kept = [t for t in node.taints if not _taint_removed(t, action.remove)]
                kept.extend(t for t in action.add if t not in kept)
                self._update_node(replace(node, taints=tuple(kept)), "taints changed")
        elif isinstance(action, Wait):
            self.schedule(action.seconds, _STEP, lambda: None)
        elif isinstance(action, SetPool):
            assert self.autoscaler is not None  # the parser checked the pool exists
            self.autoscaler.set_bounds(action.pool, action.min_size, action.max_size)
        elif isinstance(action, ScalePool):
            assert self.autoscaler is not None
            self.autoscaler.resize(action.pool, action.size)
        elif isinstance(action, Rebalance):
            self._rebalance(action)

    def _nodes(self, nodes: NodeSet) -> list[Node]:
        if nodes.zone is not None:
            return [
                n
                for n in self.state.nodes.values()
                if n.labels.get(LABEL_TOPOLOGY_ZONE) == nodes.zone
            ]
        return [self.state.nodes[n] for n in nodes.names if n in self.state.nodes]

    def _create(self, obj: ScenarioObject) -> None:
        state = self.state
        key = (obj.metadata.namespace, obj.metadata.name)
        if isinstance(obj, Node):
            if obj.name in state.nodes:
                self._update_node(obj, "replaced")
            else:
                self._add_node(obj)
        elif isinstance(obj, Pod):
            if obj.key in state.pods:
                state.delete_pod(obj.key, "replaced by the scenario")
            state.create_pod(obj, None)
        elif isinstance(obj, Deployment):
            assert obj.template is not None
            existing = state.deployments.get(key)
            replicas = 1 if obj.replicas is None else obj.replicas
            if existing is not None:
                existing.obj, existing.replicas, existing.template = obj, replicas, obj.template
            else:
                state.deployments[key] = DeploymentState(
                    obj, obj.metadata.uid or state.new_uid(), self.now, replicas, obj.template
                )
            self._requeue(("Deployment", *key))
        elif isinstance(obj, ReplicaSet):
            assert obj.template is not None
            replicas = 1 if obj.replicas is None else obj.replicas
            existing_rs = state.replica_sets.get(key)
            if existing_rs is not None:
                existing_rs.obj, existing_rs.replicas = obj, replicas
            else:
                # The deployment controller's annotations, as a stored ReplicaSet has them.
                annotations = {
                    k: v for k, v in obj.metadata.annotations.items() if k in _RS_ANNOTATIONS
                }
                state.replica_sets[key] = ReplicaSetState(
                    obj, obj.metadata.uid or state.new_uid(), self.now, replicas, None, annotations
                )
            self._objects_changed()
            self._requeue(("ReplicaSet", *key))
        elif isinstance(obj, StatefulSet):
            assert obj.template is not None
            replicas = 1 if obj.replicas is None else obj.replicas
            revision = stateful_set_revision(obj.metadata.name, obj.template)
            existing_ss = state.stateful_sets.get(key)
            if existing_ss is not None:
                existing_ss.obj, existing_ss.replicas = obj, replicas
                existing_ss.template, existing_ss.revision = obj.template, revision
            else:
                state.stateful_sets[key] = StatefulSetState(
                    obj,
                    obj.metadata.uid or state.new_uid(),
                    self.now,
                    replicas,
                    obj.template,
                    revision,
                )
            self._objects_changed()
            self._requeue(("StatefulSet", *key))
        elif isinstance(obj, PodDisruptionBudget):
            state.budgets[key] = obj
        elif isinstance(obj, PriorityClass):
            state.priority_classes[obj.name] = obj
        elif isinstance(obj, LimitRange):
            state.limit_ranges[key] = obj
        elif isinstance(obj, RuntimeClass):
            state.runtime_classes[obj.name] = obj
        elif isinstance(obj, Service):
            state.services[key] = obj
            self._objects_changed()
        elif isinstance(obj, Namespace):
            state.namespaces[obj.name] = obj
            self._objects_changed()
        elif isinstance(obj, ReplicationController):
            state.replication_controllers[key] = obj
            self._objects_changed()
        elif isinstance(obj, PersistentVolumeClaim):
            # Replaced as a new claim (an ephemeral claim made for a pod written before it,
            # say): the PV controller binds it again if it can.
            self.state.claims.pop(key, None)
            self.volumes.create_claim(obj, "applied")
        elif isinstance(obj, PersistentVolume):
            self.volumes.add_volume(obj, "applied")
        elif isinstance(
            obj, StorageClass | CSINode | CSIDriver | CSIStorageCapacity | VolumeAttachment
        ):
            what = f"{type(obj).__name__} {obj.metadata.name} applied"
            state.put_storage(obj, what)
            # A new class may be what an unbound claim was waiting for.
            self.volumes.sync_all()
        else:
            self._notes.append(f"{type(obj).__name__} {obj.metadata.name}: not simulated")

    def _scale(self, action: Scale) -> None:
        ref = action.workload
        key = (ref.namespace, ref.name)
        if ref.kind == "Deployment" and key in self.state.deployments:
            self.state.deployments[key].replicas = action.replicas
        elif ref.kind == "ReplicaSet" and key in self.state.replica_sets:
            self.state.replica_sets[key].replicas = action.replicas
        elif ref.kind == "StatefulSet" and key in self.state.stateful_sets:
            self.state.stateful_sets[key].replicas = action.replicas
        else:
            self._notes.append(f"{ref} does not exist (any more): nothing to scale")
            return
        self._requeue((ref.kind, *key))

    def _rollout(self, action: Rollout, step: Step) -> None:
        ref = action.workload
        key = (ref.namespace, ref.name)
        target: DeploymentState | ReplicaSetState | StatefulSetState | None
        if ref.kind == "Deployment":
            target = self.state.deployments.get(key)
        elif ref.kind == "StatefulSet":
            target = self.state.stateful_sets.get(key)
        else:
            target = self.state.replica_sets.get(key)
        if target is None:
            self._notes.append(f"{ref} does not exist (any more): nothing to roll out")
            return
        old = target.template if not isinstance(target, ReplicaSetState) else target.obj.template
        assert old is not None
        template = _changed_template(old, action, self.now)
        problems = validate_rolled_out_template(template, f"steps[{step.index}].{step.kind}")
        selector = target.obj.selector
        if selector is not None and not selector_matches(selector, template.metadata.labels):
            problems.append(
                f"steps[{step.index}].{step.kind}.labels: the new labels no longer match "
                f"the selector of {ref}"
            )
        if problems:
            raise InputError(self.scenario.source, problems)
        if isinstance(target, DeploymentState):
            target.template = template
        elif isinstance(target, StatefulSetState):
            target.template = template
            target.revision = stateful_set_revision(ref.name, template)
        else:
            # A bare ReplicaSet does not replace running pods: only new pods use the template.
            target.obj = replace(target.obj, template=template)
            self._notes.append(f"{ref}: a ReplicaSet changes only pods it creates from now on")
        self._requeue((ref.kind, *key))

    # -- nodes --------------------------------------------------------------------------

    def _add_node(self, node: Node) -> None:
        self.state.nodes[node.name] = node
        self.snapshot.add_node(node)
        self._log("node", node=node.name, detail="added")
        self._cluster_event(EVENT_NODE_ADD, None, node)

    def _update_node(self, node: Node, what: str) -> None:
        previous = self.state.nodes.get(node.name)
        self.state.nodes[node.name] = node
        self.snapshot.update_node(node)
        self._log("node", node=node.name, detail=what)
        if previous is None:
            self._cluster_event(EVENT_NODE_ADD, None, node)
            return
        # updateNodeInCache: one move per UpdateNode* event the change amounts to.
        for event in node_scheduling_properties_change(node, previous):
            self._cluster_event(event, previous, node)

    def _remove_node(self, name: str, what: str) -> None:
        for record in self._pods_on(name):
            self.state.delete_pod(record.key, f"node {name} {what}")
        previous = self.state.nodes.pop(name)
        self.snapshot.remove_node(name)
        self._log("node", node=name, detail=what)
        self._cluster_event(EVENT_NODE_DELETE, previous, None)

    def _pods_on(self, node_name: str) -> list[PodRecord]:
        # From the snapshot's NodeInfo: O(pods on the node), not O(pods in the cluster).
        info = self.snapshot.get(node_name)
        if info is None:
            return []
        return [self.state.pods[p.key] for p in info.pods if p.key in self.state.pods]

    def _fail(self, action: FailNodes) -> None:
        for node in self._nodes(action.nodes):
            if action.mode == "remove":
                self._remove_node(node.name, "failed (removed)")
                continue
            # The node lifecycle controller taints an unreachable node NoSchedule and
            # NoExecute; the taint eviction controller then deletes each pod once its
            # toleration of the NoExecute taint runs out (300 s by default admission).
            taints = [t for t in node.taints if t.key != TAINT_UNREACHABLE]
            taints += [
                Taint(TAINT_UNREACHABLE, "NoSchedule"),
                Taint(TAINT_UNREACHABLE, "NoExecute"),
            ]
            self._update_node(replace(node, taints=tuple(taints)), "failed (NotReady, unreachable)")
            no_execute = Taint(TAINT_UNREACHABLE, "NoExecute")
            for record in self._pods_on(node.name):
                seconds = _toleration_seconds(record.pod, no_execute)
                if seconds is None:
                    continue
                self.schedule(max(0, seconds), _API, self._evict_later(record, node.name))

    def _evict_later(self, record: PodRecord, node: str) -> _Action:
        def evict() -> None:
            current = self.state.pods.get(record.key)
            if current is None or current.uid != record.uid or current.node_name != node:
                return
            if not any(
                t.key == TAINT_UNREACHABLE
                for t in self.state.nodes.get(node, Node(ObjectMeta(""))).taints
            ):
                return
            self.state.delete_pod(record.key, f"evicted: node {node} unreachable (taint eviction)")

        return evict

    def _drain(self, nodes: NodeSet, attempt: int = 0) -> None:
        targets = self._nodes(nodes)
        if attempt == 0:
            for node in targets:
                if not node.unschedulable:
                    self._update_node(replace(node, unschedulable=True), "cordoned (drain)")
        blocked: list[tuple[PodRecord, list[str]]] = []
        for node in targets:
            for record in self._pods_on(node.name):
                budgets = budgets_blocking(self.state, record)
                if budgets:
                    blocked.append((record, budgets))
                    continue
                self.state.delete_pod(record.key, f"evicted by drain of {node.name}")
        if not blocked:
            return
        if attempt >= DRAIN_MAX_RETRIES:
            for record, budgets in blocked:
                self._notes.append(
                    f"drain gave up on {record.key}: evicting it would violate "
                    f"PodDisruptionBudget {', '.join(budgets)}"
                )
            return
        self.schedule(DRAIN_RETRY_SECONDS, _API, lambda: self._drain(nodes, attempt + 1))

    # -- the autoscaler and rebalance ---------------------------------------------------------

    def unschedulable_pods(self) -> list[PendingPod]:
        """Pending pods of the scheduling queue, in the order they were queued."""
        pending = []
        for info in self.queue.pods():
            record = self.state.pods.get(info.key)
            if record is not None and not record.node_name:
                pending.append(PendingPod(record, info.attempts, info.message))
        return pending

    def cluster_objects(self) -> list[object]:
        """The cluster as ``audit`` and ``rebalance`` read it: nodes, pods, workloads with
        their current spec, budgets and Services."""
        state = self.state
        objects: list[object] = [*state.nodes.values()]
        objects.extend(r.pod for r in state.pods.values())
        for d in state.deployments.values():
            meta = replace(d.obj.metadata, uid=d.uid)
            objects.append(replace(d.obj, metadata=meta, replicas=d.replicas, template=d.template))
        for rs in state.replica_sets.values():
            meta = replace(rs.obj.metadata, uid=rs.uid)
            objects.append(replace(rs.obj, metadata=meta, replicas=rs.replicas))
        for ss in state.stateful_sets.values():
            meta = replace(ss.obj.metadata, uid=ss.uid)
            objects.append(
                replace(ss.obj, metadata=meta, replicas=ss.replicas, template=ss.template)
            )
        objects.extend(self._live_budgets())
        objects.extend(state.services.values())
        return objects

    def _rebalance_plan(self) -> RebalancePlan | None:
        # Only when a hard constraint is over maxSkew: what `topospread rebalance` would do.
        over = any(
            c.when_unsatisfiable == "DoNotSchedule" and not c.satisfied
            for w in workload_spreads(
                self.state, self.snapshot, self._framework_map(), self.features
            )
            for c in w.constraints
        )
        if not over:
            return None
        return plan_rebalance(
            self.cluster_objects(),  # type: ignore[arg-type]
            self.configuration,
            features=self.features,
        )

    def _rebalance_advice(self) -> list[str]:
        plan = self._rebalance_plan()
        if plan is None:
            return []
        if not plan.evictions:
            return [f"rebalance: no eviction brings the spread back ({plan.reason})"]
        moves = "; ".join(
            f"evict {e.pod} from {e.node} (replacement expected on {e.expected_node})"
            for e in plan.evictions[:_PROVISIONED_SHOWN]
        )
        more = len(plan.evictions) - _PROVISIONED_SHOWN
        return [
            f"rebalance would fix it with {len(plan.evictions)} eviction(s) "
            f"({'converged' if plan.converged else 'not converged: ' + str(plan.reason)}): "
            + moves
            + (f"; and {more} more" if more > 0 else "")
            + " (a rebalance step carries them out)"
        ]

    def _rebalance(self, action: Rebalance) -> None:
        plan = self._rebalance_plan()
        if plan is None:
            self._notes.append("rebalance: every hard constraint is within maxSkew already")
            return
        evictions = plan.evictions[: action.max_evictions]
        if not evictions:
            self._notes.append(f"rebalance: nothing to evict ({plan.reason})")
            return
        # One eviction per second: each replacement is created and placed by the
        # scheduler before the next eviction, as `rebalance --apply` waits for it.
        for i, eviction in enumerate(evictions):
            self.schedule(i, _API, self._evict_for_rebalance(eviction.pod, i + 1, len(evictions)))

    def _evict_for_rebalance(self, key: str, number: int, total: int) -> _Action:
        def evict() -> None:
            record = self.state.pods.get(key)
            if record is None:
                return
            blocking = budgets_blocking(self.state, record)
            if blocking:
                self._notes.append(
                    f"rebalance: {key} not evicted: PodDisruptionBudget {', '.join(blocking)}"
                )
                return
            self.state.delete_pod(key, f"evicted by rebalance ({number}/{total})")

        return evict

    # -- controllers --------------------------------------------------------------------

    def _requeue(self, owner: OwnerKey, delay: int = 0) -> None:
        # The controllers' work queue: one pending sync per controller; a request is met
        # by any sync that runs at or after the requested time.
        at = self.now + delay
        pending = self._sync_at.get(owner)
        if pending is not None and pending <= at:
            return
        self._sync_at[owner] = at

        def sync() -> None:
            if self._sync_at.get(owner) != at:
                return  # superseded by an earlier sync
            del self._sync_at[owner]
            self.controllers.sync(owner)

        self.schedule(delay, _CONTROLLER, sync)

    def _objects_changed(self) -> None:
        self._frameworks = None

    # -- Listener (ClusterState callbacks) ---------------------------------------------

    def pod_created(self, record: PodRecord) -> None:
        """A pod exists: bound pods join the snapshot, pending ones the active queue."""
        self._log("created", pod=record.key)
        # The ephemeral volume controller creates the pod's claims before it is scheduled.
        self.volumes.pod_created(record)
        if record.node_name:
            info = self.snapshot.get(record.node_name)
            if info is not None:
                info.add_pod(record.pod)
            self._cluster_event(EVENT_ASSIGNED_POD_ADD, None, record.pod)
            return
        # The queue's Add (a pod created with status.nominatedNodeName keeps it).
        self.queue.add(record.pod)
        self._wake_scheduler()

    def pod_deleted(self, record: PodRecord, reason: str) -> None:
        """A pod is gone: out of the snapshot or out of the queue."""
        kind = next((k for k in ("evicted", "preempted") if reason.startswith(k)), "deleted")
        self._log(kind, pod=record.key, node=record.node_name, detail=reason)
        self.queue.delete(record.key)
        if self.waiting_pods.reject(waiting_key(record.pod), "", "removed"):
            # RejectWaitingPod: the assumed pod leaves; its room may help others.
            self._cluster_event(EVENT_ASSIGNED_POD_DELETE, record.pod, None)
        if record.node_name:
            info = self.snapshot.get(record.node_name)
            if info is not None:
                info.remove_pod(record.pod)
            self._cluster_event(EVENT_ASSIGNED_POD_DELETE, record.pod, None)
        # The garbage collector: claims the pod owned go with it.
        self.volumes.pod_deleted(record)

    def storage_changed(self, what: str, provisioned: str = "") -> None:
        """A claim, volume or other storage object changed: logged, and pending pods retried."""
        self._log("volume", detail=what)
        if provisioned:
            self._provisioned.append(provisioned)
        # Which storage object changed is not tracked here: every pending pod is asked
        # again (a wildcard event), as the scheduler would on each of those events.
        self._cluster_event(EVENT_STORAGE_CHANGED, None, None)

    def workload_changed(self, owner: OwnerKey) -> None:
        """A controller's pods changed: it syncs, and so does a Deployment above it."""
        self._wake(owner, 0)

    def _wake(self, owner: OwnerKey, delay: int) -> None:
        # The deployment controller watches its ReplicaSets' status, which follows pods.
        self._requeue(owner, delay)
        if owner[0] == "ReplicaSet":
            rs = self.state.replica_sets.get(owner[1:])
            if rs is not None and rs.owner is not None:
                self._requeue(rs.owner, delay)

    # -- the scheduling queue -----------------------------------------------------------

    def _wake_scheduler(self) -> None:
        if not self._schedule_pending:
            self._schedule_pending = True
            self.schedule(0, _SCHEDULE, self._schedule_next)

    def _cluster_event(self, event: ClusterEvent, old: object | None, new: object | None) -> None:
        # MoveAllToActiveOrBackoffQueue, as the live informers' handlers call it.
        if self.autoscaler is not None:
            self.autoscaler.wake_down()
        if self.queue.move_all_to_active_or_backoff(event, old, new):
            self._wake_scheduler()

    def _schedule_next(self) -> None:
        # One ScheduleOne per event; the backoff flush the queue runs every second.
        self._schedule_pending = False
        if self.queue.backing_off():
            self.queue.flush_backoff_completed()
        info = self.queue.pop(timeout=0)
        if info is None:
            return
        before = self.loop.attempts
        self.loop.schedule_one(info)
        tried = self.loop.attempts - before
        self._attempts += tried
        self._attempts_total += tried
        if self._progress is not None and tried and self._attempts_total % PROGRESS_EVERY == 0:
            self._report_progress()
        self._wake_scheduler()

    # -- the scheduling loop's port (engine/loop.ClusterPort) ---------------------------

    def _pre_enqueue(self, pod: Pod) -> Status:
        # The frameworks as last built: the loop asks again, up to date, when it pops.
        frameworks = self._frameworks if self._frameworks is not None else self._framework_map()
        framework = frameworks.get(pod.scheduler_name)
        if framework is None:
            return Status(Code.SUCCESS)
        return framework.run_pre_enqueue_plugins(pod)

    def cycle_lock(self) -> AbstractContextManager[object]:
        """Nothing runs beside the loop here."""
        return nullcontext()

    def frameworks(self) -> dict[str, Framework]:
        """The profiles' frameworks over the simulated cluster as it is now."""
        return self._framework_map()

    def is_pending(self, pod: Pod) -> bool:
        """The pod exists and is not bound."""
        record = self.state.pods.get(pod.key)
        return record is not None and not record.node_name

    def assume(self, pod: Pod, node: str) -> Pod | None:
        """Into the snapshot as it will be once bound (running there, its nomination
        cleared), until bound or forgotten (``AssumePod``)."""
        info = self.snapshot.get(node)
        if info is None:
            return None
        assumed = replace(pod, node_name=node, nominated_node_name="", phase="Running")
        info.add_pod(assumed)
        self._assumed[pod.key] = assumed
        return assumed

    def forget(self, assumed: Pod) -> None:
        """Out of the snapshot again (``ForgetPod``)."""
        self._assumed.pop(assumed.key, None)
        info = self.snapshot.get(assumed.node_name)
        if info is not None:
            info.remove_pod(assumed)

    def binding_cycle_started(self) -> None:
        """Nothing to count: binding cycles run at once."""

    def binding_cycle_ended(self) -> None:
        """Nothing to count: binding cycles run at once."""

    def run_binding_cycle(self, work: Callable[[], None]) -> None:
        """At once: the simulated API answers in the same instant."""
        work()

    def after(self, seconds: float, action: Callable[[], None]) -> Callable[[], None]:
        """An event ``seconds`` (rounded up to whole simulated seconds) from now."""
        cancelled = False

        def run() -> None:
            if not cancelled:
                action()

        def cancel() -> None:
            nonlocal cancelled
            cancelled = True

        self.schedule(max(0, math.ceil(seconds)), _API, run)
        return cancel

    def _bind_pod(self, pod: Pod, node: str) -> None:
        # DefaultBinder's write: the pod is bound (its nomination cleared, binding clears
        # it: ClearingNominatedNodeNameAfterBinding) and joins the snapshot.
        record = self.state.pods.get(pod.key)
        if record is None or record.node_name:
            raise BindingGone(f'pods "{pod.name}" not found')
        # The assumed copy in the snapshot is the pod as bound.
        self.state.bind(record, node, self._assumed.pop(pod.key, None))
        self._bound_total += 1
        self._log("scheduled", pod=record.key, node=node)
        self._cluster_event(EVENT_ASSIGNED_POD_ADD, None, record.pod)
        if record.owner is not None:
            # The pod is Ready now; its controller notices one second later.
            self._wake(record.owner, 1)

    def bound(self, info: QueuedPodInfo, assumed: Pod, node: str, start: float) -> None:
        """Bound: the snapshot and the controllers were told by the bind itself."""
        del info, assumed, node, start

    def gone(self, info: QueuedPodInfo, node: str) -> None:
        """Cannot happen in the simulated cluster's single thread."""
        del info, node

    def failed(self, info: QueuedPodInfo, failure: Failure, start: float) -> None:
        """The pod waits; its nomination follows the loop's; the autoscaler looks."""
        del start
        record = self.state.pods.get(info.key)
        if (
            record is not None
            and failure.nominate is not None
            and record.pod.nominated_node_name != failure.nominate
        ):
            record.pod = replace(record.pod, nominated_node_name=failure.nominate)
        if self.autoscaler is not None:
            self.autoscaler.wake_up()

    def preempt(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        """``prepareCandidate``: delete every victim (upstream first marks it with a
        DisruptionTarget condition; deletions are immediate here)."""
        priority = preemptor.priority or 0
        for victim in victims:
            current = self.state.pods.get(victim.key)
            if current is None or current.node_name != node:
                continue
            self.state.delete_pod(
                victim.key, f"preempted by {preemptor.key} (priority {priority}) on {node}"
            )

    def nomination_cleared(self, pod: Pod) -> None:
        """The pod's ``status.nominatedNodeName`` is cleared."""
        record = self.state.pods.get(pod.key)
        if record is not None and record.pod.nominated_node_name:
            record.pod = replace(record.pod, nominated_node_name="")

    def stale(self, result: CycleResult) -> bool:
        """Whether the dry run weighed the victims against budgets that changed since."""
        return self._budgets_changed(result)

    def _report_progress(self, steps_done: int | None = None) -> None:
        if self._progress is None:
            return
        if steps_done is not None:
            self._steps = (steps_done, self._steps[1])
        self._progress(
            SimProgress(self._steps[0], self._steps[1], self._bound_total, self._attempts_total)
        )

    def _framework_map(self) -> dict[str, Framework]:
        state = self.state
        # The scheduler lists Services, RCs, ReplicaSets and StatefulSets (their selectors
        # are the default spread constraints' selectors); controllers create and replace
        # ReplicaSets at any time, so the lists are compared by identity every cycle.
        # Storage objects change as claims are bound and volumes provisioned: the same.
        current = ClusterObjects(
            tuple(state.services.values()),
            tuple(state.replication_controllers.values()),
            tuple(rs.obj for rs in state.replica_sets.values()),
            tuple(ss.obj for ss in state.stateful_sets.values()),
            persistent_volumes=tuple(state.volumes.values()),
            persistent_volume_claims=tuple(state.claims.values()),
            storage_classes=tuple(state.storage_classes.values()),
            csi_nodes=tuple(state.csi_nodes.values()),
            csi_drivers=tuple(state.csi_drivers.values()),
            csi_storage_capacities=tuple(state.storage_capacities.values()),
            volume_attachments=tuple(state.volume_attachments.values()),
            namespaces=tuple(state.namespaces.values()),
        )
        listed = (
            current.namespaces,
            current.services,
            current.replication_controllers,
            current.replica_sets,
            current.stateful_sets,
            current.persistent_volumes,
            current.persistent_volume_claims,
            current.storage_classes,
            current.csi_nodes,
            current.csi_drivers,
            current.csi_storage_capacities,
            current.volume_attachments,
        )
        if self._frameworks is not None and not _same_objects(listed, self._listed):
            self._frameworks = None
        if self._frameworks is None:
            self._listed = listed
            self._budgets_in_use = self._live_budgets()
            objects = replace(current, pod_disruption_budgets=self._budgets_in_use)
            self._objects = objects
            handle = Handle(
                self.snapshot,
                objects,
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
        return self._frameworks

    # -- preemption and the nominator ----------------------------------------------------

    def _live_budgets(self) -> tuple[PodDisruptionBudget, ...]:
        # The PDB lister's view: status.disruptionsAllowed as the disruption controller
        # computes it now; no disruptedPods (evictions complete at once here).
        return tuple(
            replace(
                pdb,
                disruptions_allowed=disruptions_allowed(self.state, namespace, name),
                disrupted_pods=frozenset(),
            )
            for (namespace, name), pdb in self.state.budgets.items()
        )

    def _budgets_changed(self, result: CycleResult) -> bool:
        # Budgets matter only when the preemption dry run found victims; computing them
        # costs a pass over the pods, so they are refreshed only then, and the frameworks
        # rebuilt when they changed since the frameworks were built.
        post = result.post_filter
        if post is None or not post.victims:
            return False
        if not self.state.budgets and not self._budgets_in_use:
            return False
        if self._live_budgets() == self._budgets_in_use:
            return False
        self._frameworks = None
        return True

    def _check_supported(self, objects: tuple[ScenarioObject, ...]) -> None:
        frameworks = self._framework_map()
        for obj in objects:
            template = obj if isinstance(obj, Pod) else getattr(obj, "template", None)
            if not isinstance(template, Pod):
                continue
            framework = frameworks.get(template.scheduler_name)
            if framework is None:
                continue
            filters = set(framework.plugins_at("filter"))
            needs = {
                names.NODE_PORTS: any(
                    p.host_port
                    for c in (*template.containers, *template.init_containers)
                    for p in c.ports
                ),
                names.INTER_POD_AFFINITY: template.affinity is not None
                and template.affinity.has_pod_affinity,
                names.DYNAMIC_RESOURCES: bool(template.resource_claims),
            }
            for plugin, used in needs.items():
                if used and plugin in filters and framework.plugin(plugin) is None:
                    raise UnsupportedError(
                        f"{type(obj).__name__} {obj.metadata.name}: its pods need the {plugin} "
                        "filter, which topospread does not implement yet"
                    )
                if used and plugin == names.DYNAMIC_RESOURCES and plugin in filters:
                    # explain decides claims; the simulator does not allocate them as pods
                    # bind (nor free them), so later placements would be misjudged.
                    raise UnsupportedError(
                        f"{type(obj).__name__} {obj.metadata.name}: its pods use resource "
                        "claims, which the simulator does not allocate"
                    )

    def _log(self, kind: str, *, pod: str = "", node: str = "", detail: str = "") -> None:
        self._events.append(SimEvent(self.now, kind, pod, node, detail))


@dataclass(frozen=True, slots=True)
class SimProgress:
    """How far a run is: steps done (the initial cluster counts as one) of all, and pods
    bound and scheduling attempts so far."""

    steps_done: int
    steps_total: int
    pods_bound: int
    attempts: int


PROGRESS_EVERY: Final = 250
"""Scheduling attempts between two progress reports within a step."""


def simulate(
    scenario: Scenario,
    seed: int | None = None,
    *,
    tie_break: str = "first",
    progress: Callable[[SimProgress], None] | None = None,
) -> SimulationResult:
    """Run a scenario with ``seed`` (else the scenario's own, else 0) and report every step."""
    if seed is None:
        seed = scenario.seed if scenario.seed is not None else 0
    return Simulator(scenario, seed, tie_break=tie_break).run_scenario(progress)


# -- helpers -----------------------------------------------------------------------------------


def _taint_removed(taint: Taint, removals: tuple[str, ...]) -> bool:
    for spec in removals:
        key, _, effect = spec.partition(":")
        if taint.key == key and (not effect or taint.effect == effect):
            return True
    return False


def _toleration_seconds(pod: Pod, taint: Taint) -> int | None:
    """Seconds until a NoExecute taint evicts the pod: 0 untolerated, None never.

    ``getMinTolerationTime`` of the taint eviction controller: the smallest
    ``tolerationSeconds`` (negative counts as 0) among the tolerations that tolerate the
    taint; tolerations without seconds tolerate forever only if no other has seconds.
    """
    matching = [t for t in pod.tolerations if toleration_tolerates_taint(t, taint)]
    if not matching:
        return 0
    seconds = [max(0, t.toleration_seconds) for t in matching if t.toleration_seconds is not None]
    return min(seconds) if seconds else None


def _changed_template(old: Pod, action: Rollout, now: int) -> Pod:
    labels = {k: v for k, v in old.metadata.labels.items() if action.labels.get(k, v) is not None}
    labels.update({k: v for k, v in action.labels.items() if v is not None})
    annotations = {
        k: v
        for k, v in old.metadata.annotations.items()
        if action.annotations.get(k, v) is not None
    }
    annotations.update({k: v for k, v in action.annotations.items() if v is not None})
    changed = (
        action.image is not None
        or action.labels
        or action.annotations
        or action.topology_spread_constraints is not None
        or action.node_selector is not None
    )
    if not changed:
        # kubectl rollout restart: a template annotation with the time.
        annotations["kubectl.kubernetes.io/restartedAt"] = f"t={now}s"
    template = replace(old, metadata=replace(old.metadata, labels=labels, annotations=annotations))
    if action.image is not None:
        template = replace(
            template, containers=tuple(replace(c, image=action.image) for c in template.containers)
        )
    if action.topology_spread_constraints is not None:
        template = replace(template, topology_spread_constraints=action.topology_spread_constraints)
    if action.node_selector is not None:
        template = replace(template, node_selector=dict(action.node_selector))
    return template


def _same_objects(
    listed: tuple[tuple[object, ...], ...], before: tuple[tuple[object, ...], ...]
) -> bool:
    return len(listed) == len(before) and all(
        len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
        for a, b in zip(listed, before, strict=True)
    )
