"""What a simulation reports: per step, what happened and how the pods are spread.

The model is plain frozen data so that any renderer (the terminal view, an HTML report,
a notebook) can be built on it without touching the simulator. :meth:`SimulationResult.to_json`
is the documented JSON shape (README, ``topospread simulate --output json``); every
list in it is in a deterministic order (node order, then pod creation order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "ConstraintReport",
    "NodeLayout",
    "PendingPod",
    "PlacedPod",
    "PoolSize",
    "SimEvent",
    "SimulationResult",
    "StepResult",
    "WorkloadSpread",
]


@dataclass(frozen=True, slots=True)
class PoolSize:
    """A node pool at the end of a step: its nodes (Ready, and still provisioning) and
    its bounds."""

    pool: str
    nodes: int
    upcoming: int
    min_size: int
    max_size: int | None
    by_zone: tuple[tuple[str, int], ...]
    """Ready nodes per zone, in zone order of first appearance."""

    def to_json(self) -> dict[str, object]:
        """``{"pool", "nodes", "upcoming", "minSize", "maxSize", "byZone"}``."""
        return {
            "pool": self.pool,
            "nodes": self.nodes,
            "upcoming": self.upcoming,
            "minSize": self.min_size,
            "maxSize": self.max_size,
            "byZone": dict(self.by_zone),
        }


@dataclass(frozen=True, slots=True)
class SimEvent:
    """One thing that happened, at a simulated second."""

    time: int
    kind: str
    """``created``, ``scheduled``, ``deleted``, ``evicted``, ``preempted``, ``node``,
    ``volume`` (a storage object created, bound, provisioned or deleted) or ``note``."""
    pod: str = ""
    """``namespace/name`` for pod events."""
    node: str = ""
    detail: str = ""
    """Why a pod was deleted (a preempted pod's names its preemptor), what changed on a
    node, a note's text."""

    def to_json(self) -> dict[str, object]:
        """``{"time", "kind", "pod", "node", "detail"}``."""
        return {
            "time": self.time,
            "kind": self.kind,
            "pod": self.pod,
            "node": self.node,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class PlacedPod:
    """A pod on a node, as the layout shows it."""

    name: str
    namespace: str
    workload: str
    """``Kind/name`` of the top controller (Deployment rather than its ReplicaSet), or ``""``."""
    group: str
    """Finer grouping for colours: the ReplicaSet, StatefulSet revision, or the workload."""


@dataclass(frozen=True, slots=True)
class NodeLayout:
    """A node, its zone, its state and its pods."""

    name: str
    zone: str
    """``topology.kubernetes.io/zone`` (else the docs' plain ``zone`` label), or ``""``."""
    unschedulable: bool
    taints: tuple[str, ...]
    """``key=value:Effect`` strings."""
    pods: tuple[PlacedPod, ...]


@dataclass(frozen=True, slots=True)
class PendingPod:
    """A pod left unscheduled at the end of a step."""

    name: str
    namespace: str
    workload: str
    message: str
    """kube-scheduler's FailedScheduling message from the last attempt."""
    attempts: int


@dataclass(frozen=True, slots=True)
class ConstraintReport:
    """One spread constraint of a workload, counted by the plugin's own rules.

    Counting is PodTopologySpread's PreFilter counting (``calPreFilterState``) for a
    pod of the workload's newest template, over every node: eligible domains only
    (nodeAffinityPolicy / nodeTaintsPolicy applied), ``matchLabelKeys`` merged, so
    with ``pod-template-hash`` only the newest ReplicaSet's pods count.
    """

    topology_key: str
    when_unsatisfiable: str
    max_skew: int
    min_domains: int
    selector: str
    domain_counts: Mapping[str, int]
    """Eligible domain -> matching pods, sorted by domain."""
    global_min: int
    """The smallest count, or 0 when there are fewer eligible domains than minDomains."""
    skew: int
    """max(count) − global minimum (0 without domains)."""
    min_domains_shortfall: int
    """minDomains − eligible domains when positive and minDomains was set above 1, else 0
    (with minDomains unset, only a constraint without any eligible domain would fall short,
    and that is for lack of domains: see :attr:`no_eligible_domains`)."""

    @property
    def satisfied(self) -> bool:
        """Whether the skew is within maxSkew."""
        return self.skew <= self.max_skew

    @property
    def no_eligible_domains(self) -> bool:
        """No eligible domain: no node the node inclusion policies admit carries the key.
        A DoNotSchedule constraint then leaves the pod unschedulable (a node without the
        key is UnschedulableAndUnresolvable), a ScheduleAnyway one spreads nothing."""
        return not self.domain_counts

    def to_json(self) -> dict[str, object]:
        """The JSON shape of one constraint."""
        return {
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "maxSkew": self.max_skew,
            "minDomains": self.min_domains,
            "selector": self.selector,
            "domainCounts": dict(self.domain_counts),
            "globalMin": self.global_min,
            "skew": self.skew,
            "satisfied": self.satisfied,
            "minDomainsShortfall": self.min_domains_shortfall,
        }


@dataclass(frozen=True, slots=True)
class WorkloadSpread:
    """A workload's pods and its constraints' domain counts and skew."""

    workload: str
    """``Kind/namespace/name``; bare pods with constraints of their own appear as ``Pod/…``."""
    pods: int
    """Pods of the workload that exist (bound or pending)."""
    pending: int
    source: str
    """Where the constraints come from: ``pod`` (the template's own; not counted where no
    scheduler profile serves the pod), ``defaults`` or ``none``."""
    template: str
    """Which template was counted: the newest ReplicaSet, StatefulSet revision, or pod."""
    constraints: tuple[ConstraintReport, ...]

    def to_json(self) -> dict[str, object]:
        """The JSON shape of one workload."""
        return {
            "workload": self.workload,
            "pods": self.pods,
            "pending": self.pending,
            "constraintSource": self.source,
            "countedTemplate": self.template,
            "constraints": [c.to_json() for c in self.constraints],
        }


@dataclass(frozen=True, slots=True)
class StepResult:
    """A step: what it did, when, and the cluster once it settled."""

    index: int
    """0-based; the initial cluster is reported as step -1 (kind ``initial``)."""
    kind: str
    title: str
    started: int
    settled: int
    """Simulated second of the last event the step caused."""
    events: tuple[SimEvent, ...]
    layout: tuple[NodeLayout, ...]
    pending: tuple[PendingPod, ...]
    spread: tuple[WorkloadSpread, ...]
    scheduling_attempts: int
    notes: tuple[str, ...] = ()
    pools: tuple[PoolSize, ...] = ()
    """Node pools at the end of the step (scenarios with an autoscaler only)."""

    @property
    def placements(self) -> tuple[SimEvent, ...]:
        """The ``scheduled`` events of this step."""
        return tuple(e for e in self.events if e.kind == "scheduled")

    def to_json(self) -> dict[str, object]:
        """The JSON shape of one step."""
        return {
            "index": self.index,
            "kind": self.kind,
            "title": self.title,
            "started": self.started,
            "settled": self.settled,
            "schedulingAttempts": self.scheduling_attempts,
            "placements": [{"pod": e.pod, "node": e.node, "time": e.time} for e in self.placements],
            "events": [e.to_json() for e in self.events],
            "pending": [
                {
                    "pod": f"{p.namespace}/{p.name}",
                    "workload": _qualified(p.workload, p.namespace),
                    "message": p.message,
                    "attempts": p.attempts,
                }
                for p in self.pending
            ],
            "layout": [
                {
                    "node": n.name,
                    "zone": n.zone,
                    "unschedulable": n.unschedulable,
                    "taints": list(n.taints),
                    "pods": [
                        {
                            "pod": f"{p.namespace}/{p.name}",
                            "workload": _qualified(p.workload, p.namespace),
                            "group": p.group,
                        }
                        for p in n.pods
                    ],
                }
                for n in self.layout
            ],
            "spread": [w.to_json() for w in self.spread],
            "notes": list(self.notes),
        } | ({"pools": [p.to_json() for p in self.pools]} if self.pools else {})


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """A whole run: the scenario, the seed, and every step (the initial cluster first)."""

    scenario: str
    description: str
    seed: int
    kubernetes_version: str
    steps: tuple[StepResult, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        """The documented JSON shape (``topospread simulate --output json``)."""
        return {
            "scenario": self.scenario,
            "description": self.description,
            "seed": self.seed,
            "kubernetesVersion": self.kubernetes_version,
            "steps": [s.to_json() for s in self.steps],
        }


def _qualified(workload: str, namespace: str) -> str:
    """``Kind/namespace/name`` in JSON, as ``spread`` names a workload (the text tables
    keep ``Kind/name``, the pod's namespace beside it): a pod's controller lives in the
    pod's namespace. Empty for a pod no controller owns."""
    kind, _, name = workload.partition("/")
    return f"{kind}/{namespace}/{name}" if name else workload
