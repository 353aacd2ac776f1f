"""``topospread plan``: the fewest nodes per pool that hold workloads through failures.

Given workloads (Deployments, StatefulSets, ReplicaSets with their replicas), node pools
and failure policies, find node counts per pool shape (a template: a zone, an instance
type) such that every pod schedules with every DoNotSchedule constraint held, in at least
``confidence`` of ``runs`` runs — which tied node kube-scheduler takes varies with its
parallel Filter workers, so a
placement is a draw; each run draws its ties from its own seed. Every placement is the
scheduling cycle's (:func:`topospread.engine.cycle.schedule_one` with the profile's
plugins), pods in workload order, each after the previous is bound.

Failure policies (``survive``):

* ``zone-loss``: a zone becomes unreachable, as the node lifecycle controller handles it:
  its nodes are tainted ``node.kubernetes.io/unreachable`` (NoSchedule and NoExecute);
  after the pods' ``tolerationSeconds`` (300 s, DefaultTolerationSeconds) the taint
  manager evicts them and their controllers create replacements, which must schedule.
  The tainted nodes stay: under the default ``nodeTaintsPolicy: Ignore`` the zone is
  still a domain, now with no matching pod, so a DoNotSchedule zone spread caps every
  other zone at maxSkew — no node count helps, and the plan says so and which change
  would (``nodeTaintsPolicy: Honor``, ScheduleAnyway, or KEP-5980's proposal). Every zone
  is lost in turn.
* ``zone-removal``: a zone's nodes are deleted (the zone is gone); its pods' replacements
  must schedule. Every zone in turn.
* ``N-nodes`` (``1-nodes``, ``2-nodes``...): N nodes are deleted: in the first run the N
  holding the most workload pods, in every other run N drawn at random.
* ``rollout``: each RollingUpdate Deployment's surge pods (``maxSurge``, percentages
  rounded up) of a new revision schedule beside every old pod, the peak of a rollout.

The search: from the pools' ``min-size`` (and, for the all-zones plan, one node per zone),
add at each step the node, among the shapes a pool may still add, that lets the most pods
schedule in the first run; then check every run and policy; then remove nodes while the
confidence holds. The result is a local minimum; it is **proven optimal** when it meets
the lower bound (requests over the largest shape's allocatable, and minDomains over
maxSkew). Pure.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from topospread.engine.audit.workloads import next_pod
from topospread.engine.cluster import Cluster
from topospread.engine.loop import MemoryScheduler
from topospread.engine.sim.controllers import LABEL_POD_TEMPLATE_HASH, compute_hash, scaled_value
from topospread.errors import InputError
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.node_info import Snapshot
from topospread.model.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    Node,
    OwnerReference,
    Pod,
    ReplicaSet,
    StatefulSet,
    Taint,
)
from topospread.model.pools import NodePool, pool_of_node
from topospread.model.resources import pod_request_amounts
from topospread.plugins.registry import registry as plugin_registry

__all__ = ["PlanResult", "PoolCount", "Workloads", "parse_survive", "plan_capacity"]

Workloads = Sequence[Deployment | StatefulSet | ReplicaSet]
UNREACHABLE: Final = "node.kubernetes.io/unreachable"
_MAX_STEPS: Final = 400


@dataclass(frozen=True, slots=True)
class PoolCount:
    """Nodes of one pool shape in a plan."""

    pool: str
    zone: str | None
    instance_type: str | None
    nodes: int


@dataclass(frozen=True, slots=True)
class PlanResult:
    """A plan: node counts per pool shape, and what it rests on."""

    counts: tuple[PoolCount, ...]
    runs: int
    confidence: float
    succeeded: int
    """Runs in which every pod scheduled through every failure policy."""
    lower_bound: int
    optimal: bool
    binding: str
    """What one node fewer breaks (a Filter's words), or why no count works."""
    margin: int
    """Pods of the largest workload that would still fit beside the plan (first run)."""
    feasible: bool = True
    notes: tuple[str, ...] = ()
    all_zones: PlanResult | None = None
    """The cheapest plan with a node in every zone the pools offer, when it differs."""

    @property
    def total(self) -> int:
        """Nodes in the plan."""
        return sum(c.nodes for c in self.counts)

    def to_json(self) -> dict[str, object]:
        """``plan --output json``."""
        return {
            "feasible": self.feasible,
            "nodes": self.total,
            "pools": [
                {"pool": c.pool, "zone": c.zone, "instanceType": c.instance_type, "nodes": c.nodes}
                for c in self.counts
                if c.nodes
            ],
            "byPool": _by(self.counts, lambda c: c.pool),
            "byZone": _by(self.counts, lambda c: c.zone or ""),
            "runs": self.runs,
            "succeeded": self.succeeded,
            "confidence": self.confidence,
            "lowerBound": self.lower_bound,
            "provenOptimal": self.optimal,
            "binding": self.binding,
            "marginPods": self.margin,
            "notes": list(self.notes),
            "allZones": None if self.all_zones is None else self.all_zones.to_json(),
        }


def _by(counts: Sequence[PoolCount], key: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        if c.nodes:
            name = key(c)  # type: ignore[operator]
            out[name] = out.get(name, 0) + c.nodes
    return out


def parse_survive(values: Sequence[str]) -> tuple[str, ...]:
    """Validate ``--survive`` values (``zone-loss``, ``zone-removal``, ``rollout``,
    ``N-nodes``); one InputError line per bad value."""
    problems = []
    for value in values:
        if value in ("zone-loss", "zone-removal", "rollout"):
            continue
        head, _, tail = value.partition("-")
        if tail == "nodes" and head.isdigit() and int(head) > 0:
            continue
        problems.append(
            f"--survive {value!r}: one of zone-loss, zone-removal, rollout, N-nodes (N >= 1)"
        )
    if problems:
        raise InputError("", problems)
    return tuple(values)


# -- pods and placement ------------------------------------------------------------------------


def _pods(workloads: Workloads, cluster: Cluster, revision: str = "") -> list[Pod]:
    out: list[Pod] = []
    for w in workloads:
        template = w.template
        if template is None:
            continue
        replicas = 1 if w.replicas is None else w.replicas
        meta = w.metadata
        if isinstance(w, Deployment):
            template = _revised(template, revision)
            pod_hash = compute_hash(template)
            template = replace(
                template,
                metadata=replace(
                    template.metadata,
                    labels={**template.metadata.labels, LABEL_POD_TEMPLATE_HASH: pod_hash},
                ),
            )
            owner = OwnerReference("apps/v1", "ReplicaSet", f"{meta.name}-{pod_hash}", "", True)
            prefix = f"{meta.name}-{pod_hash}{revision}"
        else:
            owner = OwnerReference("apps/v1", type(w).__name__, meta.name, "", True)
            prefix = meta.name
        out.extend(
            next_pod(template, meta.namespace, f"{prefix}-{index}", owner, cluster.admission)
            for index in range(replicas)
        )
    return out


def _revised(template: Pod, revision: str) -> Pod:
    if not revision:
        return template
    annotations = {**template.metadata.annotations, "topospread.dev/revision": revision}
    return replace(template, metadata=replace(template.metadata, annotations=annotations))


@dataclass
class _World:
    configuration: SchedulerConfiguration
    cluster: Cluster
    nodes: list[Node]
    rng: random.Random | None
    snapshot: Snapshot = field(init=False)
    scheduler: MemoryScheduler = field(init=False)
    placed: dict[str, str] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rebuild(self.nodes, list(self.cluster.pods))

    def rebuild(self, nodes: Sequence[Node], pods: Sequence[Pod]) -> None:
        self.nodes = list(nodes)
        self.snapshot = Snapshot(tuple(nodes), tuple(pods))
        # The scheduling loop of simulate and the live scheduler, over this world; every
        # node is visited (the planner asks what fits, not what a sampled search finds).
        self.scheduler = MemoryScheduler(
            self.configuration,
            self.snapshot,
            self.cluster.objects,
            registry=plugin_registry(),
            tie_break=self.rng,
            search=False,
        )

    def place(self, pod: Pod) -> str | None:
        """Schedule ``pod``; returns why it fits nowhere (None when it was bound)."""
        why = self.scheduler.schedule(pod)
        if why:
            return why
        node = self.scheduler.placements[pod.key]
        self.placed[pod.key] = node
        self.pods[pod.key] = replace(pod, node_name=node)
        return None

    def all_pods(self) -> list[Pod]:
        return [*self.cluster.pods, *self.pods.values()]


def _shapes(pools: Sequence[NodePool], largest: Pod | None) -> list[tuple[int, Node]]:
    # One shape per (pool, zone): a template pool's templates, a Karpenter pool's cheapest
    # offering in each zone that holds the largest pod.
    shapes: list[tuple[int, Node]] = []
    for index, pool in enumerate(pools):
        if pool.source != "karpenter":
            shapes.extend((index, t) for t in pool.templates)
            continue
        seen: set[str] = set()
        for template in pool.templates:  # cheapest first
            zone = template.labels.get(LABEL_TOPOLOGY_ZONE, "")
            if zone in seen or (largest is not None and not _holds(template, largest)):
                continue
            seen.add(zone)
            shapes.append((index, template))
    return shapes


def _holds(node: Node, pod: Pod) -> bool:
    return all(
        node.allocatable.get(name) is not None and node.allocatable[name].amount >= amount
        for name, amount in pod_request_amounts(pod).items()
        if amount > 0
    )


def _nodes(
    cluster: Cluster,
    shapes: Sequence[tuple[int, Node]],
    pools: Sequence[NodePool],
    counts: Sequence[int],
) -> list[Node]:
    nodes = list(cluster.nodes)
    for (pool_index, template), count in zip(shapes, counts, strict=True):
        pool = pools[pool_index]
        zone = template.labels.get(LABEL_TOPOLOGY_ZONE, "")
        shape = template.labels.get("node.kubernetes.io/instance-type", "")
        for i in range(count):
            name = "-".join(p for p in (pool.name, zone, shape, str(i + 1)) if p)
            labels = {**template.labels, LABEL_HOSTNAME: name}
            nodes.append(
                replace(template, metadata=replace(template.metadata, name=name, labels=labels))
            )
    return nodes


# -- failure policies --------------------------------------------------------------------------


def _replacement(pod: Pod, suffix: str) -> Pod:
    meta = replace(pod.metadata, name=f"{pod.metadata.name}-{suffix}", uid="")
    return replace(pod, metadata=meta, node_name="")


def _replace_all(world: _World, lost: Sequence[Pod], suffix: str) -> str | None:
    for pod in lost:
        why = world.place(_replacement(pod, suffix))
        if why is not None:
            return f"{pod.key}'s replacement: {why}"
    return None


def _survive(
    policy: str,
    world: _World,
    workloads: Workloads,
    run: int,
    rng: random.Random,
) -> str | None:
    """Apply one failure policy to a placed world (copied per case); the first failure."""
    base_nodes, base_pods = list(world.nodes), world.all_pods()
    mine = set(world.pods)
    zones = sorted(
        {n.labels[LABEL_TOPOLOGY_ZONE] for n in base_nodes if LABEL_TOPOLOGY_ZONE in n.labels}
    )
    cases: list[tuple[str, list[Node], list[Pod], list[Pod]]] = []
    if policy in ("zone-loss", "zone-removal"):
        for zone in zones:
            inside = {n.name for n in base_nodes if n.labels.get(LABEL_TOPOLOGY_ZONE) == zone}
            lost = [p for p in base_pods if p.node_name in inside and p.key in mine]
            kept = [p for p in base_pods if p.node_name not in inside]
            if policy == "zone-removal":
                nodes = [n for n in base_nodes if n.name not in inside]
            else:
                # The node lifecycle controller taints the zone's nodes; the taint manager
                # evicts their pods after tolerationSeconds; the nodes and the domain stay.
                taints = (Taint(UNREACHABLE, "NoSchedule"), Taint(UNREACHABLE, "NoExecute"))
                nodes = [
                    replace(n, taints=(*n.taints, *taints)) if n.name in inside else n
                    for n in base_nodes
                ]
                kept = [
                    *kept,
                    *(p for p in base_pods if p.node_name in inside and p.key not in mine),
                ]
            cases.append(
                (
                    f"zone {zone} {'unreachable' if policy == 'zone-loss' else 'removed'}",
                    nodes,
                    kept,
                    lost,
                )
            )
    elif policy.endswith("-nodes"):
        count = int(policy.split("-")[0])
        load: dict[str, int] = {}
        for p in base_pods:
            if p.key in mine:
                load[p.node_name] = load.get(p.node_name, 0) + 1
        names = [n.name for n in base_nodes]
        if run == 0:
            gone = set(sorted(names, key=lambda n: -load.get(n, 0))[:count])
        else:
            gone = set(rng.sample(names, min(count, len(names))))
        lost = [p for p in base_pods if p.node_name in gone and p.key in mine]
        kept = [p for p in base_pods if p.node_name not in gone]
        cases.append((f"{len(gone)} node(s) lost ({', '.join(sorted(gone))})",
                      [n for n in base_nodes if n.name not in gone], kept, lost))  # fmt: skip
    elif policy == "rollout":
        surge: list[Pod] = []
        for w in workloads:
            if isinstance(w, Deployment) and w.strategy.type == "RollingUpdate" and w.replicas:
                extra = scaled_value(w.strategy.max_surge, w.replicas, round_up=True)
                revised = replace(w, replicas=extra)
                surge.extend(_pods([revised], world.cluster, revision="r2"))
        cases.append(("a rollout's surge", base_nodes, base_pods, surge))
    for label, nodes, kept, lost in cases:
        world.rebuild(nodes, kept)
        world.pods = {p.key: p for p in kept if p.key in mine}
        why = (
            _replace_all(world, lost, f"after-{policy}")
            if policy != "rollout"
            else next(
                (f"{p.key}: {w}" for p in lost for w in [world.place(p)] if w is not None), None
            )
        )
        if why is not None:
            return f"{label}: {why}"
    return None


# -- evaluation and search ---------------------------------------------------------------------


@dataclass
class _Trial:
    succeeded: int
    placed_first: int
    failure: str


def _evaluate(
    counts: Sequence[int],
    request: _Request,
    runs: int,
) -> _Trial:
    succeeded, placed_first, failure = 0, 0, ""
    nodes = _nodes(request.cluster, request.shapes, request.pools, counts)
    for run in range(runs):
        rng = random.Random(f"{request.seed}/{run}")
        world = _World(
            request.configuration, request.cluster, nodes, rng if request.runs > 1 else None
        )
        why = None
        placed = 0
        for pod in request.pods:
            why = world.place(pod)
            if why is not None:
                why = f"{pod.key}: {why}"
                break
            placed += 1
        if why is None:
            for policy in request.survive:
                why = _survive(policy, world, request.workloads, run, rng)
                if why is not None:
                    break
        if run == 0:
            # Progress for the search: pods placed, replacements through the failures too.
            placed_first = (
                placed + len(world.placed) - len(request.pods)
                if why is None or (placed == len(request.pods))
                else placed
            )
        if why is None:
            succeeded += 1
        elif not failure:
            failure = why
    return _Trial(succeeded, placed_first, failure)


@dataclass
class _Request:
    workloads: Workloads
    pools: Sequence[NodePool]
    cluster: Cluster
    configuration: SchedulerConfiguration
    survive: tuple[str, ...]
    runs: int
    confidence: float
    seed: int
    pods: list[Pod]
    shapes: list[tuple[int, Node]]

    cap: int | None = None
    """The most nodes a search may add (a failure policy no count survives must end)."""

    def enough(self, succeeded: int) -> bool:
        return succeeded >= math.ceil(self.confidence * self.runs - 1e-9)

    def room(self, counts: Sequence[int], index: int) -> bool:
        pool_index = self.shapes[index][0]
        pool = self.pools[pool_index]
        existing = sum(1 for n in self.cluster.nodes if pool_of_node(n) == pool.name)
        total = existing + sum(
            c for (p, _), c in zip(self.shapes, counts, strict=True) if p == pool_index
        )
        return pool.max_size is None or total < pool.max_size


def _search(request: _Request, floor: list[int]) -> tuple[list[int] | None, str]:
    counts = list(floor)
    failure = ""
    for _ in range(_MAX_STEPS):
        trial = _evaluate(counts, request, request.runs)
        if request.enough(trial.succeeded):
            return counts, ""
        failure = trial.failure
        if request.cap is not None and sum(counts) >= request.cap:
            return None, failure
        zone_policy = any(p in ("zone-loss", "zone-removal") for p in request.survive)
        best: tuple[int, int, int, int] | None = None
        choice = -1
        for index in range(len(request.shapes)):
            if not request.room(counts, index):
                continue
            grown = counts[:]
            grown[index] += 1
            quick = _evaluate(grown, replace(request, runs=1), 1)
            # Most progress first; then, when a failure policy takes a zone, the shape whose
            # zone has the fewest nodes so far (the other zones carry the load); then input
            # order. Without one, spreading costs nodes the spread itself does not need.
            in_zone = _nodes_in_zone_of(request, counts, index) if zone_policy else 0
            key = (quick.succeeded, quick.placed_first, -in_zone, -index)
            if best is None or key > best:
                best, choice = key, index
        if choice < 0:
            return None, failure
        counts[choice] += 1
    return None, failure


def _nodes_in_zone_of(request: _Request, counts: Sequence[int], index: int) -> int:
    zone = request.shapes[index][1].labels.get(LABEL_TOPOLOGY_ZONE)
    return sum(
        count
        for (_, template), count in zip(request.shapes, counts, strict=True)
        if template.labels.get(LABEL_TOPOLOGY_ZONE) == zone
    )


def _shrink(request: _Request, counts: list[int], floor: Sequence[int]) -> tuple[list[int], str]:
    binding = ""
    changed = True
    while changed:
        changed = False
        for index in reversed(range(len(counts))):
            if counts[index] <= floor[index]:
                continue
            fewer = counts[:]
            fewer[index] -= 1
            trial = _evaluate(fewer, request, request.runs)
            if request.enough(trial.succeeded):
                counts, changed = fewer, True
            else:
                binding = binding or trial.failure
    if not binding:
        for index in range(len(counts)):
            if counts[index] > floor[index]:
                fewer = counts[:]
                fewer[index] -= 1
                binding = _evaluate(fewer, request, request.runs).failure
                break
    return counts, binding


def _lower_bound(request: _Request) -> int:
    shapes = [t for _, t in request.shapes]
    if not shapes or not request.pods:
        return 0
    bound = 0
    for resource in ("cpu", "memory", "pods"):
        need = sum(
            (
                pod_request_amounts(p).get(resource, Fraction(1 if resource == "pods" else 0))
                for p in request.pods
            ),
            Fraction(0),
        )
        biggest = max(
            (t.allocatable[resource].amount for t in shapes if resource in t.allocatable),
            default=Fraction(0),
        )
        if need > 0 and biggest > 0:
            bound = max(bound, math.ceil(need / biggest))
    for w in request.workloads:
        template = w.template
        replicas = 1 if w.replicas is None else w.replicas
        if template is None:
            continue
        for c in template.topology_spread_constraints:
            if c.when_unsatisfiable == "DoNotSchedule" and c.topology_key == LABEL_HOSTNAME:
                min_domains = c.min_domains or 1
                bound = max(bound, min(min_domains, math.ceil(replicas / c.max_skew)))
    existing = len(request.cluster.nodes)
    return max(0, bound - existing)


def _margin(request: _Request, counts: Sequence[int]) -> int:
    # Extra replicas of the largest workload that still fit (first run, no failure).
    if not request.workloads:
        return 0
    largest = max(request.workloads, key=lambda w: 1 if w.replicas is None else w.replicas)
    nodes = _nodes(request.cluster, request.shapes, request.pools, counts)
    world = _World(request.configuration, request.cluster, nodes, None)
    for pod in request.pods:
        if world.place(pod) is not None:
            return 0
    extra = 0
    pods = _pods([replace(largest, replicas=(largest.replicas or 1) + 64)], request.cluster)
    for pod in pods[(largest.replicas or 1) :]:
        if world.place(pod) is not None:
            break
        extra += 1
    return extra


def _result(
    request: _Request, counts: Sequence[int], binding: str, notes: Sequence[str]
) -> PlanResult:
    trial = _evaluate(counts, request, request.runs)
    bound = _lower_bound(request)
    total = sum(counts)
    grouped: dict[tuple[str, str | None, str | None], int] = {}
    for (pool_index, template), count in zip(request.shapes, counts, strict=True):
        key = (
            request.pools[pool_index].name,
            template.labels.get(LABEL_TOPOLOGY_ZONE),
            template.labels.get("node.kubernetes.io/instance-type"),
        )
        grouped[key] = grouped.get(key, 0) + count
    return PlanResult(
        tuple(PoolCount(p, z, t, n) for (p, z, t), n in grouped.items()),
        request.runs,
        request.confidence,
        trial.succeeded,
        bound,
        total == bound,
        binding
        or "nothing: every node of the plan is at its floor (a pool's min-size, or "
        "the one node per zone of the all-zones plan)",
        _margin(request, counts),
        notes=tuple(notes),
    )


def plan_capacity(
    workloads: Workloads,
    pools: Sequence[NodePool],
    configuration: SchedulerConfiguration,
    cluster: Cluster | None = None,
    *,
    survive: Sequence[str] = (),
    runs: int = 1,
    confidence: float = 1.0,
    seed: int = 0,
) -> PlanResult:
    """The plan for ``workloads`` on ``pools`` (see the module docstring)."""
    if runs < 1:
        raise InputError("", message=f"--runs {runs}: must be at least 1")
    if not 0 < confidence <= 1:
        raise InputError("", message=f"--confidence {confidence}: must be in (0, 1]")
    if not pools:
        raise InputError("", message="no node pools: give --node-pools")
    survive = parse_survive(survive)
    cluster = cluster if cluster is not None else Cluster()
    pods = _pods(workloads, cluster)
    largest = max(
        pods,
        key=lambda p: tuple(pod_request_amounts(p).get(r, Fraction(0)) for r in ("cpu", "memory")),
        default=None,
    )
    shapes = _shapes(pools, largest)
    if largest is not None and not any(_holds(t, largest) for _, t in shapes):
        raise InputError(
            "",
            message=f"no node pool can ever hold {largest.key}: every template's "
            "allocatable is smaller than its requests",
        )
    request = _Request(
        workloads,
        pools,
        cluster,
        configuration,
        tuple(survive),
        runs,
        confidence,
        seed,
        pods,
        shapes,
    )
    floor = [0] * len(shapes)
    for index, (pool_index, _) in enumerate(shapes):
        pool = pools[pool_index]
        first = next(i for i, (p, _) in enumerate(shapes) if p == pool_index)
        if index == first:
            floor[index] = pool.min_size
    notes: list[str] = []
    if survive:
        # Without the failures first: a count the failures need is sought up to twice that
        # plus ten nodes, so that one no count survives ends (a wedged zone outage).
        base, _ = _search(replace(request, survive=()), floor)
        request.cap = None if base is None else 2 * sum(base) + 10
    counts, failure = _search(request, floor)
    if counts is None:
        wedge = _wedged(failure, survive)
        return PlanResult(
            (), runs, confidence, 0, _lower_bound(request), False,
            wedge or f"no node count within the pools' max-size works: {failure}",
            0, feasible=False, notes=tuple(notes),
        )  # fmt: skip
    counts, binding = _shrink(request, counts, floor)
    cheapest = _result(request, counts, binding, notes)
    zones = sorted(
        {t.labels[LABEL_TOPOLOGY_ZONE] for _, t in shapes if LABEL_TOPOLOGY_ZONE in t.labels}
    )
    used = {c.zone for c in cheapest.counts if c.nodes}
    if len(zones) > 1 and used != set(zones):
        every = list(floor)
        for zone in zones:
            first = next(
                i for i, (_, t) in enumerate(shapes) if t.labels.get(LABEL_TOPOLOGY_ZONE) == zone
            )
            every[first] = max(every[first], 1)
        found, _ = _search(request, every)
        if found is not None:
            found, zone_binding = _shrink(request, found, every)
            alternative = _result(request, found, zone_binding, ())
            if alternative.total < cheapest.total:
                # The search is local: started from every zone it found fewer nodes.
                return replace(alternative, notes=tuple(notes))
            cheapest = replace(
                cheapest,
                all_zones=alternative,
                notes=(
                    *cheapest.notes,
                    f"the cheapest plan uses {len(used)} of the {len(zones)} zones the pools offer "
                    f"({cheapest.total} nodes); with a node in every zone it takes "
                    f"{alternative.total} (allZones)",
                ),
            )
    return cheapest


def _wedged(failure: str, survive: Sequence[str]) -> str:
    if "zone-loss" in survive and "unreachable" in failure and "topology spread" in failure:
        return (
            "no node count survives a zone outage: the unreachable zone's tainted nodes still "
            "count as a domain (nodeTaintsPolicy: Ignore, the default) with none of the pods, "
            "so the DoNotSchedule zone spread caps every other zone at maxSkew; set "
            "nodeTaintsPolicy: Honor on the constraint (the tainted nodes then leave the "
            f"domains), or make it ScheduleAnyway ({failure})"
        )
    return ""
