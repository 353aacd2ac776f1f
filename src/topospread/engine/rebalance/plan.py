"""A plan of evictions that brings every over-skewed workload back within maxSkew.

Pure: no I/O. Each step is simulated as the cluster would play it: the evicted pod turns
Terminating (it still holds its node's resources, as in the scheduler's cache, but no
longer counts for spread, kubernetes#87621), its owning controller creates a replacement
from its *current* template, admitted as the API server admits it (a StatefulSet reuses
the name once the old pod is gone), and the scheduling loop's attempt
(:func:`topospread.engine.loop.attempt`: the profile serving the pod, its PreEnqueue
plugins, the cycle over every node) places it.
kube-scheduler picks at random among nodes tied for the best score, so every tied node
is simulated: a step is accepted only when *every* tied landing keeps
each constraint at or below where it was and the worst landing still brings the targets
closer to balance; the plan continues from that worst landing and marks the step
``certain: false`` when the tied landings do not give the same counts.

The search is greedy, one eviction at a time, minimising (skew above maxSkew, pods above
``globalMin + maxSkew``, sum of squared domain counts) over the target constraints. Every
movable pod a target constraint counts is a candidate, whoever owns it (as the
descheduler's RemovePodsViolatingTopologySpreadConstraint); pods are told apart by
controller, node and spec, never by name, so renaming pods does not change a plan. What
is proven: a lower bound on the evictions any plan needs (each eviction moves one pod, so
per constraint at least ``max(pods above the band, missing pods below
it)`` for the best band ``[L, L + maxSkew]`` with ``D·L ≤ N ≤ D·(L + maxSkew)``); when the
plan's count equals it, the plan is minimal.

Safety rules (as the descheduler's DefaultEvictor, and stricter): never DaemonSet, mirror
or static pods, system-critical pods, pods without a controller, or pods whose controller
does not recreate them (only ReplicaSet and StatefulSet pods are planned); no pods with
local storage (``emptyDir``/``hostPath``) unless allowed; PodDisruptionBudgets as the
Eviction API applies them (:func:`_budget_spent`): one budget per pod, an unready pod
passes only under ``AlwaysAllow`` or a healthy budget, every other covered pod needs
``disruptionsAllowed`` left in the current batch; lower priority first; limits per node,
per namespace and in total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeGuard

from topospread.engine.audit import AuditReport, Scope, audit, count_constraints
from topospread.engine.audit.workloads import Workload, group_workloads
from topospread.engine.cluster import Cluster
from topospread.engine.loop import attempt, build_frameworks
from topospread.engine.sim.controllers import (
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_SS_POD_INDEX,
    LABEL_SS_POD_NAME,
    selector_matches,
)
from topospread.engine.sim.result import ConstraintReport
from topospread.engine.sim.volumes import with_claim_volumes
from topospread.errors import InputError
from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.model.admission import admit_pod
from topospread.model.labels import Selector
from topospread.model.objects import (
    Deployment,
    KubeObject,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    ReplicaSet,
    StatefulSet,
)
from topospread.model.workloads import CronJob, DaemonSet, Job, ManifestObject
from topospread.plugins import names
from topospread.plugins.podtopologyspread import PodTopologySpread
from topospread.plugins.podtopologyspread.common import SelectorError
from topospread.plugins.registry import registry as plugin_registry

__all__ = [
    "ANNOTATION_MIRROR",
    "ConstraintKey",
    "Eviction",
    "RebalanceOptions",
    "RebalancePlan",
    "SkewChange",
    "minimum_moves",
    "plan_rebalance",
]

ANNOTATION_MIRROR = "kubernetes.io/config.mirror"
"""Set by the kubelet on the mirror pod of a static pod."""
_RECREATING_OWNERS = frozenset({"ReplicaSet", "StatefulSet"})
_SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
"""``SystemCriticalPriority``: the descheduler's DefaultEvictor never evicts pods at or above
it (``system-cluster-critical``, ``system-node-critical``) unless told to."""
_TERMINATING = "rebalance"
"""The deletion timestamp given to evicted pods in the simulation (any non-empty value)."""

_ENOUGH_TRIALS = 8
"""Improving candidates compared per step before the best is taken. Candidates come lowest
priority and most crowded host first, so the first few are the likeliest best; the cap
keeps a step's cost bounded on large clusters (each trial is a scheduling cycle plus a
count per tied domain)."""

ConstraintKey = tuple[str, int]
"""(workload ``Kind/namespace/name``, index of the constraint: hard ones first)."""


@dataclass(frozen=True, slots=True)
class RebalanceOptions:
    """What may be evicted and how much."""

    include_soft: bool = False
    """Also balance ScheduleAnyway constraints."""
    allow_local_storage: bool = False
    local_storage: frozenset[str] = frozenset()
    """``namespace/name`` of pods with emptyDir or hostPath volumes (the model does not keep
    volumes; the reader of the raw objects supplies this)."""
    max_evictions: int | None = None
    max_per_node: int | None = None
    max_per_namespace: int | None = None
    batch_size: int = 1
    """Evictions per batch before replacements are awaited (``--apply``)."""


@dataclass(frozen=True, slots=True)
class SkewChange:
    """One target constraint's skew around a step."""

    workload: str
    topology_key: str
    when_unsatisfiable: str
    max_skew: int
    before: int
    after: int

    def to_json(self) -> dict[str, object]:
        """``{"workload", "topologyKey", "whenUnsatisfiable", "maxSkew", "before", "after"}``."""
        return {
            "workload": self.workload,
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "maxSkew": self.max_skew,
            "skewBefore": self.before,
            "skewAfter": self.after,
        }


@dataclass(frozen=True, slots=True)
class Eviction:
    """One planned eviction and where its replacement lands."""

    step: int
    batch: int
    pod: str
    workload: str
    node: str
    domains: Mapping[str, str]
    """The pod's domain per topology key of its workload's constraints."""
    expected_node: str
    """Where the plan continues from: the worst of the tied landings."""
    tied_nodes: tuple[str, ...]
    """Every node the scheduler may pick (ties for the best score are broken at random)."""
    certain: bool
    """Whether every tied landing gives the same domain counts."""
    priority: int
    skew: tuple[SkewChange, ...]
    replacement: str = ""
    """The simulated replacement's name (a StatefulSet's keeps the evicted pod's)."""

    def to_json(self) -> dict[str, object]:
        """The issue's eviction shape plus batch, workload, domains, certainty and skews."""
        return {
            "step": self.step,
            "batch": self.batch,
            "pod": self.pod,
            "workload": self.workload,
            "node": self.node,
            "domains": dict(self.domains),
            "expectedNode": self.expected_node,
            "tiedNodes": list(self.tied_nodes),
            "certain": self.certain,
            "priority": self.priority,
            "skew": [s.to_json() for s in self.skew],
        }


@dataclass(frozen=True, slots=True)
class RebalancePlan:
    """The evictions, the state before and the simulated state after."""

    converged: bool
    reason: str | None
    evictions: tuple[Eviction, ...]
    before: AuditReport
    after: AuditReport
    targets: tuple[str, ...]
    lower_bound: int
    """Evictions any plan needs at least (see the module docstring)."""
    best_effort: tuple[Eviction, ...] = ()
    """When not converged: the steps the search found before it stopped (not to apply)."""
    protected: tuple[str, ...] = ()
    """Pods of the targets that may not be evicted, and why."""
    notes: tuple[str, ...] = ()

    @property
    def proven_minimal(self) -> bool:
        """The plan uses exactly the lower bound's number of evictions."""
        return self.converged and len(self.evictions) == self.lower_bound

    @property
    def batches(self) -> int:
        """How many batches the evictions form."""
        return max((e.batch for e in self.evictions), default=0)

    def to_json(self) -> dict[str, object]:
        """The issue's shape: converged, reason, evictions, before, after (and more keys)."""
        return {
            "converged": self.converged,
            "reason": self.reason,
            "evictions": [e.to_json() for e in self.evictions],
            "targets": list(self.targets),
            "lowerBound": self.lower_bound,
            "provenMinimal": self.proven_minimal,
            "batches": self.batches,
            "bestEffort": [e.to_json() for e in self.best_effort],
            "protected": list(self.protected),
            "before": {"workloads": [w.to_json() for w in self.before.workloads]},
            "after": {"workloads": [w.to_json() for w in self.after.workloads]},
            "notes": list(self.notes),
        }


# -- measuring a state --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Counted:
    workload: str
    namespace: str
    hard: bool
    report: ConstraintReport
    selector: Selector

    @property
    def excess(self) -> int:
        return max(0, self.report.skew - self.report.max_skew)

    @property
    def overflow(self) -> int:
        ceiling = self.report.global_min + self.report.max_skew
        return sum(max(0, n - ceiling) for n in self.report.domain_counts.values())

    @property
    def squares(self) -> int:
        return sum(n * n for n in self.report.domain_counts.values())


class _World:
    """The fixed part of the cluster (nodes, workloads, plugins) and how to count a state."""

    def __init__(
        self,
        objects: Sequence[ManifestObject],
        configuration: SchedulerConfiguration,
        features: Features,
    ) -> None:
        self.configuration = configuration
        self.features = features
        kube = Cluster.from_objects(o for o in objects if _is_kube(o))
        self.base = kube
        self.nodes: tuple[Node, ...] = kube.nodes
        self.node_names = {n.name for n in self.nodes}
        self.node_by_name = {n.name: n for n in self.nodes}
        self.budgets: tuple[PodDisruptionBudget, ...] = kube.objects.pod_disruption_budgets
        self.admission = kube.admission
        self.controllers: dict[tuple[str, str, str], ReplicaSet | StatefulSet] = {
            (type(o).__name__, o.metadata.namespace, o.metadata.name): o
            for o in objects
            if isinstance(o, ReplicaSet | StatefulSet)
        }
        self.copied: set[str] = set()
        """Controllers not in the input: their replacements are copies of the evicted pods."""
        self.workloads, self.notes = group_workloads(objects)
        self.workload_of: dict[str, Workload] = {}
        for w in self.workloads:
            for p in w.pods:
                self.workload_of[p.key] = w
        handle = Handle(Snapshot(self.nodes, ()), kube.objects, configuration.parallelism)
        registry = plugin_registry()
        self.frameworks = build_frameworks(configuration, registry, handle, features)
        self.registry = registry

    def cluster(self, pods: Iterable[Pod]) -> Cluster:
        kept = tuple(p for p in pods if p.node_name in self.node_names and p.phase not in _TERMINAL)
        return replace(self.base, pods=kept)

    def measure(
        self, pods: Iterable[Pod], only: frozenset[str] | None = None
    ) -> dict[ConstraintKey, _Counted]:
        """Every workload's constraints counted over ``pods`` (only the workloads named in
        ``only``, when given)."""
        snapshot = self.cluster(pods).snapshot()
        result: dict[ConstraintKey, _Counted] = {}
        for w in self.workloads:
            if w.counted is None or (only is not None and w.ref not in only):
                continue
            framework = self.frameworks.get(w.counted.scheduler_name)
            plugin = framework.plugin(names.POD_TOPOLOGY_SPREAD) if framework else None
            if not isinstance(plugin, PodTopologySpread):
                continue
            try:
                counted = count_constraints(plugin, w.counted, snapshot, self.features)
            except (SelectorError, ValueError):
                continue
            for index, (action, constraint, report) in enumerate(counted):
                if report is not None:
                    result[(w.ref, index)] = _Counted(
                        w.ref, w.namespace, action == "DoNotSchedule", report, constraint.selector
                    )
        return result

    def replacement(self, pod: Pod, step: int) -> Pod:
        """The pod ``pod``'s controller creates once it is evicted, as the API server
        stores it: the ReplicaSet's or StatefulSet's *current* template (a ReplicaSet whose
        template was edited since ``pod`` was made creates the edited pod), named as the
        controller names it, admitted (``admit_pod``: defaulting, ``matchLabelKeys``,
        LimitRanger, Priority, DefaultTolerationSeconds, RuntimeClass), as the simulator's
        controllers create pods. Raises :class:`InputError` where the API server would refuse it.
        A controller missing from the input leaves only the evicted pod to copy."""
        ref = pod.metadata.controller()
        owner = self.controllers.get((ref.kind, pod.namespace, ref.name)) if ref else None
        template = owner.template if owner is not None else None
        ordinal = pod.name.removeprefix(f"{ref.name}-") if ref is not None else ""
        if ref is None or template is None:
            if ref is not None:
                self.copied.add(f"{ref.kind} {pod.namespace}/{ref.name}")
            return _copy(pod, step)
        labels = dict(template.metadata.labels)
        if isinstance(owner, StatefulSet):
            if not ordinal.isdigit():
                self.copied.add(f"{ref.kind} {pod.namespace}/{ref.name}")
                return _copy(pod, step)
            # newStatefulSetPod: the same name and ordinal labels. The revision label is
            # the evicted pod's: ControllerRevisions are not read, and a set that is not
            # mid-rollout recreates a pod at the revision its pods have.
            name = pod.name
            labels |= {LABEL_SS_POD_NAME: name, LABEL_SS_POD_INDEX: ordinal}
            revision = pod.labels.get(LABEL_CONTROLLER_REVISION_HASH)
            if revision is not None:
                labels[LABEL_CONTROLLER_REVISION_HASH] = revision
        else:
            name = f"{ref.name}-rebalance{step}"
        new = replace(
            template,
            metadata=ObjectMeta(
                name=name,
                namespace=pod.namespace,
                labels=labels,
                annotations=dict(template.metadata.annotations),
                owner_references=(ref,),
            ),
            node_name="",
            phase="Pending",
        )
        if isinstance(owner, StatefulSet):
            new = with_claim_volumes(new, owner, int(ordinal))
        admitted = admit_pod(new, self.admission)
        uid = f"rebalance-{step}-{pod.metadata.uid}"
        return replace(admitted, metadata=replace(admitted.metadata, uid=uid))

    def place(self, pods: Sequence[Pod], pod: Pod) -> tuple[str | None, tuple[str, ...], str]:
        """Where the real cycle puts ``pod``: the first best node, every tied node, and
        the FailedScheduling message when none fits."""
        cluster = self.cluster(pods)
        handle = Handle(cluster.snapshot(), cluster.objects, self.configuration.parallelism)
        frameworks = build_frameworks(self.configuration, self.registry, handle, self.features)
        # The loop's attempt, every node visited: every tied landing is wanted.
        tried = attempt(frameworks, pod)
        cycle = tried.result
        if cycle is None:
            return None, (), tried.message
        if cycle.selected_node is None:
            return None, (), cycle.message or "no node fits"
        return cycle.selected_node, tuple(cycle.tied_nodes) or (cycle.selected_node,), ""


_TERMINAL = frozenset({"Succeeded", "Failed"})


def _is_kube(obj: ManifestObject) -> TypeGuard[KubeObject]:
    # Everything the scheduler lists (storage and priority classes included) but the pods,
    # which are kept apart (the state's pods change from step to step), and the workload
    # kinds only grouping reads.
    return not isinstance(obj, Pod | Deployment | DaemonSet | Job | CronJob)


def minimum_moves(counts: Sequence[int], max_skew: int, min_domains: int) -> int | None:
    """The fewest pods that must change domain for ``counts`` to be within ``max_skew``
    (None: impossible with these domains). Fewer domains than ``min_domains`` force the
    global minimum to 0, so every domain must stay at or below ``max_skew``."""
    domains, total = len(counts), sum(counts)
    if domains == 0:
        return 0
    levels = range(1) if domains < min_domains else range(max(counts) + 1)
    best: int | None = None
    for low in levels:
        high = low + max_skew
        if not domains * low <= total <= domains * high:
            continue
        out = sum(max(0, n - high) for n in counts)
        into = sum(max(0, low - n) for n in counts) if domains >= min_domains else 0
        moves = max(out, into)
        best = moves if best is None else min(best, moves)
    return best


# -- safety -------------------------------------------------------------------------------------


def _ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.conditions)


def _budgets_of(pod: Pod, budgets: Sequence[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    return [
        b
        for b in budgets
        if b.metadata.namespace == pod.namespace and selector_matches(b.selector, pod.labels)
    ]


def _protection(pod: Pod, options: RebalanceOptions) -> str | None:
    """Why ``pod`` may never be evicted by a rebalance, or None."""
    ref = pod.metadata.controller()
    if ANNOTATION_MIRROR in pod.metadata.annotations or (ref is not None and ref.kind == "Node"):
        return "a static (mirror) pod"
    if ref is None:
        return "no controller would recreate it"
    if ref.kind == "DaemonSet":
        return "a DaemonSet pod"
    if ref.kind not in _RECREATING_OWNERS:
        return f"owned by a {ref.kind}, which does not recreate evicted pods as they were"
    if (pod.priority or 0) >= _SYSTEM_CRITICAL_PRIORITY:
        return "system-critical priority (the descheduler's DefaultEvictor keeps it too)"
    if pod.key in options.local_storage and not options.allow_local_storage:
        return "local storage (emptyDir/hostPath; --allow-local-storage)"
    if pod.metadata.deletion_timestamp is not None:
        return "already terminating"
    return None


# -- the search ---------------------------------------------------------------------------------


@dataclass
class _State:
    pods: list[Pod]
    batch: int = 1
    in_batch: int = 0
    budget_left: dict[tuple[str, str], int] = field(default_factory=dict)
    healthy: dict[tuple[str, str], int] = field(default_factory=dict)
    """Each budget's ``currentHealthy`` less the Ready pods evicted in this batch."""
    per_node: Counter[str] = field(default_factory=Counter)
    per_namespace: Counter[str] = field(default_factory=Counter)
    last_uncertain: bool = False


@dataclass(frozen=True, slots=True)
class _Trial:
    pod: Pod
    replacement: Pod
    landing: str
    tied: tuple[str, ...]
    certain: bool
    pods_after: list[Pod]
    measure_after: dict[ConstraintKey, _Counted]
    potential: tuple[int, int, int]
    new_batch: bool


def _potential(
    measure: Mapping[ConstraintKey, _Counted], targets: frozenset[ConstraintKey]
) -> tuple[int, int, int]:
    counted = [measure[k] for k in targets if k in measure]
    return (
        sum(c.excess for c in counted),
        sum(c.overflow for c in counted),
        sum(c.squares for c in counted),
    )


def _copy(pod: Pod, step: int) -> Pod:
    """The evicted pod as its own replacement: only where its controller's template is not
    in the input (a live read always has it)."""
    ref = pod.metadata.controller()
    if ref is not None and ref.kind == "StatefulSet":
        name = pod.name
    else:
        owner = ref.name if ref is not None else pod.name
        name = f"{owner}-rebalance{step}"
    meta = replace(
        pod.metadata, name=name, uid=f"rebalance-{step}-{pod.metadata.uid}", deletion_timestamp=None
    )
    return replace(
        pod,
        metadata=meta,
        node_name="",
        nominated_node_name="",
        phase="Pending",
        conditions=(),
        start_time=None,
    )


def _without(pods: Sequence[Pod], pod: Pod) -> list[Pod]:
    ref = pod.metadata.controller()
    if ref is not None and ref.kind == "StatefulSet":
        # The StatefulSet controller recreates the same name once the old pod is gone.
        return [p for p in pods if p.key != pod.key]
    terminating = replace(pod, metadata=replace(pod.metadata, deletion_timestamp=_TERMINATING))
    return [terminating if p.key == pod.key else p for p in pods]


def _counts_signature(measure: Mapping[ConstraintKey, _Counted]) -> tuple[object, ...]:
    return tuple(
        (k, tuple(sorted(c.report.domain_counts.items()))) for k, c in sorted(measure.items())
    )


def _worsened(
    after: Mapping[ConstraintKey, _Counted],
    now: Mapping[ConstraintKey, _Counted],
    initial: Mapping[ConstraintKey, _Counted],
    targets: frozenset[ConstraintKey],
) -> str | None:
    for key, counted in after.items():
        reference = now.get(key) if key in targets else initial.get(key)
        limit = reference.excess if reference is not None else 0
        if counted.excess > limit:
            report = counted.report
            return (
                f"{counted.workload} {report.topology_key} skew would become {report.skew} "
                f"(maxSkew {report.max_skew})"
            )
    return None


def plan_rebalance(
    objects: Iterable[ManifestObject],
    configuration: SchedulerConfiguration | None = None,
    scope: Scope | None = None,
    options: RebalanceOptions | None = None,
    *,
    features: Features = Features(),
) -> RebalancePlan:
    """Plan the evictions that bring the workloads in ``scope`` within maxSkew.

    ``objects`` are a cluster's objects as ``audit`` reads them (Nodes, Pods, ReplicaSets,
    Deployments, StatefulSets, DaemonSets, PodDisruptionBudgets, Services...).
    """
    configuration = configuration or default_configuration()
    scope = scope or Scope()
    options = options or RebalanceOptions()
    objs = list(objects)
    before = audit(objs, configuration, scope, features=features)
    world = _World(objs, configuration, features)
    pods = [o for o in objs if isinstance(o, Pod)]
    initial = world.measure(pods)
    in_scope = {w.ref for w in world.workloads if scope.includes(w)}

    def considered(key: ConstraintKey, c: _Counted) -> bool:
        return key[0] in in_scope and (c.hard or options.include_soft)

    targets = frozenset(k for k, c in initial.items() if considered(k, c) and c.excess > 0)
    target_workloads = tuple(dict.fromkeys(k[0] for k in sorted(targets)))
    per_workload: list[int] = []
    impossible: list[str] = []
    for ref in target_workloads:
        bounds = []
        for key in targets:
            if key[0] != ref:
                continue
            r = initial[key].report
            moves = minimum_moves(list(r.domain_counts.values()), r.max_skew, r.min_domains)
            if moves is None:
                impossible.append(
                    f"{ref}: {r.topology_key} cannot be within maxSkew {r.max_skew}: "
                    f"{sum(r.domain_counts.values())} pods over {len(r.domain_counts)} "
                    f"eligible domain(s)"
                    + (f" (minDomains {r.min_domains})" if r.min_domains > 1 else "")
                )
            else:
                bounds.append(moves)
        per_workload.append(max(bounds, default=0))
    # Evictions of different workloads add up only when no pod is counted by the
    # constraints of two target workloads (one eviction could then serve both); whose pod
    # it is does not matter, any counted pod may be evicted.
    shared = any(
        len({c.workload for c in _counting(initial, p, targets)}) > 1 for p in pods if p.node_name
    )
    lower_bound = max(per_workload, default=0) if shared else sum(per_workload)

    def finish(
        converged: bool,
        reason: str | None,
        steps: list[Eviction],
        final_pods: list[Pod],
        protected: Sequence[str] = (),
    ) -> RebalancePlan:
        # The end state as it settles: evicted pods gone, replacements in their places.
        settled = [p for p in final_pods if p.metadata.deletion_timestamp != _TERMINATING]
        others = [o for o in objs if not isinstance(o, Pod)]
        after = audit([*others, *settled], configuration, scope, features=features)
        return RebalancePlan(
            converged,
            reason,
            tuple(steps) if converged else (),
            before,
            after,
            target_workloads,
            lower_bound,
            () if converged else tuple(steps),
            tuple(protected),
            (
                *world.notes,
                *(
                    f"{owner} is not in the input: its replacements are simulated as copies "
                    "of the evicted pods, not from its current template"
                    for owner in sorted(world.copied)
                ),
            ),
        )

    for w in world.workloads:
        if w.ref in target_workloads and w.pending:
            world.notes.append(
                f"{w.ref}: {len(w.pending)} pending pod(s) are not simulated; they may take "
                "the room a replacement is planned for"
            )
    if not targets:
        return finish(True, None, [], pods)
    if impossible:
        return finish(False, "; ".join(impossible), [], pods)

    state = _State(list(pods))
    _reset_budgets(world, state)
    steps: list[Eviction] = []
    measure = initial
    protected: dict[str, str] = {}
    while True:
        remaining = [k for k in targets if measure[k].excess > 0]
        if not remaining:
            return finish(True, None, steps, state.pods, sorted(_fmt(protected)))
        if options.max_evictions is not None and len(steps) >= options.max_evictions:
            return finish(
                False,
                f"--max-evictions {options.max_evictions} reached with "
                + _describe_remaining(remaining, measure),
                steps,
                state.pods,
                sorted(_fmt(protected)),
            )
        if state.in_batch > 0 and (state.in_batch >= options.batch_size or state.last_uncertain):
            _start_batch(world, state)
        rejections: Counter[str] = Counter()
        best: _Trial | None = None
        best_key: tuple[int, tuple[int, int, int], bool, int] | None = None
        now_potential = _potential(measure, targets)
        improving = 0
        candidates = _candidates(world, state, measure, remaining, options)
        for index, (pod, new_batch, why_not) in enumerate(candidates):
            if why_not is not None:
                if why_not.startswith("protected: "):
                    protected[pod.key] = why_not.removeprefix("protected: ")
                rejections[why_not.removeprefix("protected: ")] += 1
                continue
            base = _settled(state.pods) if new_batch and state.in_batch > 0 else state.pods
            trial, rejection = _try(world, base, pod, len(steps) + 1, measure, initial, targets)
            if trial is None:
                rejections[rejection] += 1
                continue
            if trial.potential >= now_potential:
                rejections["its replacement would not land in a less crowded domain"] += 1
                continue
            trial = replace(trial, new_batch=new_batch)
            # Ties go to the earlier candidate: the order is name-independent.
            rank = (pod.priority or 0, trial.potential, new_batch, index)
            if best_key is None or rank < best_key:
                best, best_key = trial, rank
            improving += 1
            if improving >= _ENOUGH_TRIALS:
                break
        if best is None:
            return finish(
                False,
                _describe_remaining(remaining, measure)
                + ": no eviction brings it closer: "
                + _summarise(rejections),
                steps,
                state.pods,
                sorted(_fmt(protected)),
            )
        steps.append(_record(world, state, best, len(steps) + 1, measure, targets, options))
        measure = best.measure_after


def _fmt(protected: Mapping[str, str]) -> list[str]:
    return [f"{pod}: {why}" for pod, why in protected.items()]


def _describe_remaining(
    remaining: Sequence[ConstraintKey], measure: Mapping[ConstraintKey, _Counted]
) -> str:
    parts = []
    for key in sorted(remaining):
        r = measure[key].report
        counts = ", ".join(f"{d}={n}" for d, n in r.domain_counts.items())
        parts.append(f"{key[0]} {r.topology_key} skew {r.skew} > maxSkew {r.max_skew} ({counts})")
    return "; ".join(parts)


def _summarise(rejections: Counter[str]) -> str:
    if not rejections:
        return "no pod its selector counts sits in a crowded domain"
    return "; ".join(f"{n} pod(s): {why}" for why, n in rejections.most_common(4))


def _counting(
    measure: Mapping[ConstraintKey, _Counted], pod: Pod, keys: Iterable[ConstraintKey]
) -> list[_Counted]:
    """The constraints among ``keys`` that count ``pod`` (same namespace, selector matches:
    upstream counts every such pod, whoever owns it)."""
    return [
        measure[k]
        for k in keys
        if measure[k].namespace == pod.namespace and measure[k].selector.matches(pod.labels)
    ]


def _class_of(pod: Pod) -> tuple[object, ...]:
    """What makes two pods different evictions, their names aside: the controller that
    replaces them, labels, priority, readiness, phase and the rest of the spec (requests
    free room on the node; a StatefulSet pod's claims pin it)."""
    ref = pod.metadata.controller()
    neutral = replace(
        pod, metadata=ObjectMeta(""), node_name="", conditions=(), start_time=None, phase=""
    )
    return (
        (ref.kind, ref.name) if ref is not None else None,
        tuple(sorted(pod.labels.items())),
        pod.priority or 0,
        _ready(pod),
        pod.phase,
        repr(neutral),
    )


def _candidates(
    world: _World,
    state: _State,
    measure: Mapping[ConstraintKey, _Counted],
    remaining: Sequence[ConstraintKey],
    options: RebalanceOptions,
) -> Iterable[tuple[Pod, bool, str | None]]:
    """Pods worth trying, whether they need a new batch (a budget spent in this one), or
    why not. Every pod a remaining constraint counts in a domain above its global minimum
    is worth trying, whoever owns it (the descheduler's RemovePodsViolatingTopologySpread-
    Constraint evicts any evictable pod the selector matches): another ReplicaSet's pod
    with the same labels moves the counts as well as the workload's own.

    Pods of one class (:func:`_class_of`) in the same domain of every topology key that
    counts them are the same eviction for spread: one is tried. The order, and so the
    choice, never depends on pod names: lower priority, the targets' own pods, the most
    crowded host (most pods of the same workload), the cluster's node order, the class;
    a name only picks among pods of one class on one node, which are interchangeable."""
    target_refs = {k[0] for k in remaining}
    live = [
        p
        for p in state.pods
        if p.node_name in world.node_names and p.metadata.deletion_timestamp is None
    ]
    on_node: Counter[tuple[str, str]] = Counter()
    for p in live:
        w = world.workload_of.get(p.key)
        if w is not None:
            on_node[(w.ref, p.node_name)] += 1
    node_index = {n.name: i for i, n in enumerate(world.nodes)}
    every_key = sorted(measure)
    keys_cache: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[str, ...]] = {}

    def topology_keys(pod: Pod) -> tuple[str, ...]:
        # Every topology key of every constraint (targets or not) that counts the pod.
        cache_key = (pod.namespace, tuple(sorted(pod.labels.items())))
        found = keys_cache.get(cache_key)
        if found is None:
            found = keys_cache[cache_key] = tuple(
                sorted({c.report.topology_key for c in _counting(measure, pod, every_key)})
            )
        return found

    worth: list[tuple[tuple[object, ...], Pod, tuple[object, ...]]] = []
    for pod in live:
        w = world.workload_of.get(pod.key)
        if w is None:
            continue
        labels = world.node_by_name[pod.node_name].labels
        if not any(
            (domain := labels.get(c.report.topology_key)) is not None
            and c.report.domain_counts.get(domain, -1) > c.report.global_min
            for c in _counting(measure, pod, remaining)
        ):
            continue
        klass = _class_of(pod)
        order = (
            pod.priority or 0,
            w.ref not in target_refs,
            -on_node[(w.ref, pod.node_name)],
            node_index[pod.node_name],
            repr(klass),
            pod.key,
        )
        worth.append((order, pod, klass))
    worth.sort(key=lambda item: item[0])

    seen: set[tuple[object, ...]] = set()
    for _, pod, klass in worth:
        why = _protection(pod, options)
        if why is not None:
            yield pod, False, f"protected: {why}"
            continue
        per_node = options.max_per_node
        if per_node is not None and state.per_node[pod.node_name] >= per_node:
            yield pod, False, f"--max-per-node {options.max_per_node} reached on its node"
            continue
        if (
            options.max_per_namespace is not None
            and state.per_namespace[pod.namespace] >= options.max_per_namespace
        ):
            yield pod, False, f"--max-per-namespace {options.max_per_namespace} reached"
            continue
        budget, refused = _budget_spent(pod, world, state)
        if refused is not None:
            yield pod, False, f"protected: {refused}"
            continue
        new_batch = state.in_batch >= options.batch_size or state.last_uncertain
        if budget is not None:
            key = (budget.metadata.namespace, budget.metadata.name)
            if state.budget_left.get(key, 0) <= 0:
                new_batch = True
        labels = world.node_by_name[pod.node_name].labels
        signature = (
            klass,
            tuple(labels.get(k) for k in topology_keys(pod)),
            new_batch,
        )
        if signature in seen:
            continue
        seen.add(signature)
        yield pod, new_batch, None


def _budget_spent(
    pod: Pod, world: _World, state: _State
) -> tuple[PodDisruptionBudget | None, str | None]:
    """The budget whose ``disruptionsAllowed`` evicting ``pod`` spends (None: none), or why
    the Eviction API refuses it, as ``EvictionREST.Create`` decides
    (pkg/registry/core/pod/storage/eviction.go, v1.37.1):

    * a Pending pod (``canIgnorePDB``; bound pods are Pending until their containers start)
      is deleted without looking at budgets;
    * more than one budget: refused;
    * a pod that is not Ready (``IsPodReady``) goes without spending when the budget's
      ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or, under ``IfHealthyBudget``
      (the default), while the budget is healthy: ``currentHealthy >= desiredHealthy``
      and ``desiredHealthy > 0``;
    * otherwise ``checkAndDecrement``: ``disruptionsAllowed`` must be above 0, and is
      spent (an unready pod under an unhealthy budget spends it too).

    ``currentHealthy`` is the budget's status less the Ready pods this batch evicted (the
    disruption controller stops counting them as soon as the API server records them)."""
    if pod.phase == "Pending":
        return None, None
    budgets = _budgets_of(pod, world.budgets)
    if len(budgets) > 1:
        names_ = ", ".join(b.metadata.name for b in budgets)
        return None, f"several PodDisruptionBudgets ({names_}); the Eviction API refuses"
    if not budgets:
        return None, None
    budget = budgets[0]
    key = (budget.metadata.namespace, budget.metadata.name)
    unhealthy = ""
    if not _ready(pod):
        if budget.unhealthy_pod_eviction_policy == "AlwaysAllow":
            return None, None
        healthy = state.healthy.get(key, budget.current_healthy)
        if healthy >= budget.desired_healthy > 0:
            return None, None
        unhealthy = (
            f" (the pod is not Ready and the budget is not healthy: it needs "
            f"{budget.desired_healthy} healthy pods and has {healthy} currently; "
            "unhealthyPodEvictionPolicy AlwaysAllow would let it go)"
        )
    if budget.disruptions_allowed <= 0:
        return None, f"PodDisruptionBudget {budget.metadata.name} allows no disruption{unhealthy}"
    return budget, None


def _try(
    world: _World,
    pods: Sequence[Pod],
    pod: Pod,
    step: int,
    measure: Mapping[ConstraintKey, _Counted],
    initial: Mapping[ConstraintKey, _Counted],
    targets: frozenset[ConstraintKey],
) -> tuple[_Trial | None, str]:
    without = _without(pods, pod)
    try:
        replacement = world.replacement(pod, step)
    except InputError as e:
        return None, f"its controller's new pod would be refused: {e}"
    selected, tied, message = world.place(without, replacement)
    if selected is None:
        return None, f"its replacement would fit nowhere ({message})"
    outcomes = []
    # Only constraints whose selector matches the pod or its replacement (made from the
    # current template, its labels may differ) can change; landings in the same domain of
    # every key they use give the same counts.
    affected = frozenset(
        c.workload
        for c in measure.values()
        if c.namespace == pod.namespace
        and (c.selector.matches(pod.labels) or c.selector.matches(replacement.labels))
    )
    keys = sorted({c.report.topology_key for c in measure.values() if c.workload in affected})
    by_domains: dict[tuple[str | None, ...], dict[ConstraintKey, _Counted]] = {}
    for landing in tied:
        placed = replace(replacement, node_name=landing, phase="Running")
        after_pods = [*without, placed]
        labels = world.node_by_name[landing].labels
        domains = tuple(labels.get(k) for k in keys)
        after = by_domains.get(domains)
        if after is None:
            changed = world.measure(after_pods, affected)
            after = by_domains[domains] = {
                **{k: c for k, c in measure.items() if c.workload not in affected},
                **changed,
            }
        worse = _worsened(after, measure, initial, targets)
        if worse is not None:
            tie = f" (one of {len(tied)} tied nodes)" if len(tied) > 1 else ""
            return None, f"landing on {landing}{tie}: {worse}"
        outcomes.append((_potential(after, targets), landing, after_pods, after))
    certain = len({_counts_signature(o[3]) for o in outcomes}) == 1
    # The worst tied landing; among equals, the scheduler's first.
    worst = max(outcomes, key=lambda o: (o[0], -tied.index(o[1])))
    return (
        _Trial(pod, replacement, worst[1], tied, certain, worst[2], worst[3], worst[0], False),
        "",
    )


def _settled(pods: Sequence[Pod]) -> list[Pod]:
    """``pods`` without the ones this plan evicted: gone by the next batch (they terminate
    while their replacements start; ``--apply`` re-reads the cluster before each batch)."""
    return [p for p in pods if p.metadata.deletion_timestamp != _TERMINATING]


def _start_batch(world: _World, state: _State) -> None:
    """The next batch: its budgets as the disruption controller will have them again (the
    replacements are Ready by then: ``--apply`` waits for them), the evicted pods gone."""
    state.batch += 1
    state.in_batch = 0
    state.last_uncertain = False
    _reset_budgets(world, state)
    state.pods = _settled(state.pods)


def _reset_budgets(world: _World, state: _State) -> None:
    for budget in world.budgets:
        key = (budget.metadata.namespace, budget.metadata.name)
        state.budget_left[key] = budget.disruptions_allowed
        state.healthy[key] = budget.current_healthy


def _record(
    world: _World,
    state: _State,
    trial: _Trial,
    step: int,
    measure: Mapping[ConstraintKey, _Counted],
    targets: frozenset[ConstraintKey],
    options: RebalanceOptions,
) -> Eviction:
    pod = trial.pod
    if trial.new_batch and (state.in_batch > 0):
        # A budget spent in this batch: the trial was simulated in the next one already.
        _start_batch(world, state)
    budget, _ = _budget_spent(pod, world, state)
    state.in_batch += 1
    state.last_uncertain = not trial.certain
    if budget is not None:
        key = (budget.metadata.namespace, budget.metadata.name)
        state.budget_left[key] = state.budget_left.get(key, 0) - 1
    if _ready(pod) and pod.phase != "Pending":
        for b in _budgets_of(pod, world.budgets):
            key = (b.metadata.namespace, b.metadata.name)
            state.healthy[key] = state.healthy.get(key, b.current_healthy) - 1
    state.per_node[pod.node_name] += 1
    state.per_namespace[pod.namespace] += 1
    # The replacement is Ready by the time the next batch starts (--apply waits for it),
    # so it counts for budgets as the pod it replaces did.
    state.pods = [
        replace(p, conditions=pod.conditions) if p.key == trial.replacement.key else p
        for p in trial.pods_after
    ]
    w = world.workload_of[pod.key]
    world.workload_of[trial.replacement.key] = w
    node = world.node_by_name[pod.node_name]
    # The target constraints the eviction moves: those counting the pod, whoever owns it.
    keys = sorted(
        k
        for k in targets
        if k in measure
        and measure[k].namespace == pod.namespace
        and measure[k].selector.matches(pod.labels)
    )
    skews = tuple(
        SkewChange(
            k[0],
            measure[k].report.topology_key,
            measure[k].report.when_unsatisfiable,
            measure[k].report.max_skew,
            measure[k].report.skew,
            trial.measure_after[k].report.skew,
        )
        for k in keys
        if k in trial.measure_after
    )
    domains = {s.topology_key: node.labels.get(s.topology_key, "") for s in skews}
    return Eviction(
        step,
        state.batch,
        pod.key,
        w.ref,
        pod.node_name,
        domains,
        trial.landing,
        trial.tied,
        trial.certain,
        pod.priority or 0,
        skews,
        trial.replacement.name,
    )
