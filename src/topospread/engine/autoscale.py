"""What an autoscaler would add for Pending pods, and where they would land then.

kube-scheduler knows only existing nodes (the seeds' third limitation). An autoscaler that
knows its pools adds nodes for pods that fit nowhere. This module answers, for the pending
pods of a cluster and the pod being explained, with the scheduler's own cycle
(:func:`topospread.engine.explain.explain`) deciding every fit:

* **Cluster Autoscaler** (``cluster-autoscaler``): each node group is an expansion option,
  estimated as its binpacking estimator does — pods sorted by requests, largest first;
  each goes on a node already added for the option if the scheduler's Filters let it, else
  on a fresh node from the group's template if they let it there, within ``max-size`` — and
  the expander picks among the options that place the explained pod: ``least-waste``
  (least unused cpu and memory on the new nodes, CA's ``leastwaste``), ``most-pods``,
  ``priority`` (the pool's priority) or ``random`` (seeded). A pod the existing nodes
  already take triggers nothing.
* **Karpenter** (``karpenter``): every NodePool at once, by weight. Pods sorted by cpu and
  memory, largest first, go to an existing node the scheduler would place them on, else to
  a node already planned, else to a new node in the zone and pool the scheduler's cycle
  picks among one candidate node per zone a pool offers (Karpenter knows a NodePool's
  zones without nodes, so each is a domain of the spread arithmetic); a new node starts as
  the pool's largest offering in its zone and ends as the cheapest whose allocatable holds
  what was planned onto it, as the KWOK provider launches the cheapest fitting offering.

Then the pod is explained again on the cluster with the new nodes and the other pending
pods where the autoscaler planned them: where kube-scheduler puts it after the scale-up.

Simplifications, each stated: a new node is Ready with its template's labels, taints and
allocatable (startup taints, and Karpenter's ``karpenter.sh/unregistered``, are gone by the
time the pod is scheduled); DaemonSet pods are not added to new nodes; CA's
``balance-similar-node-groups`` is not modelled; Karpenter's consolidation, disruption
budgets and its own topology counting (it places nominations, kube-scheduler binds) are not
modelled — topospread places every planned pod by kube-scheduler's rules. Pure.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from topospread.engine.cluster import Cluster
from topospread.engine.explain import Explanation, explain
from topospread.engine.sim.controllers import selector_matches
from topospread.errors import InputError
from topospread.framework.config.types import SchedulerConfiguration
from topospread.model.admission import admit_pod
from topospread.model.objects import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Node, ObjectMeta, Pod
from topospread.model.pools import LABEL_INSTANCE_TYPE, NodePool, pool_of_node
from topospread.model.quantity import Quantity
from topospread.model.resources import pod_request_amounts

__all__ = [
    "AUTOSCALERS",
    "EXPANDERS",
    "NewNode",
    "PoolOption",
    "ScaleUp",
    "plan_scale_up",
]

AUTOSCALERS: Final = ("cluster-autoscaler", "karpenter")
EXPANDERS: Final = ("least-waste", "most-pods", "priority", "random")
_MARK: Final = "autoscaling.topospread.dev/planned"


@dataclass(frozen=True, slots=True)
class NewNode:
    """A node the autoscaler would add, and the pending pods it plans onto it."""

    name: str
    pool: str
    zone: str | None
    instance_type: str | None
    pods: tuple[str, ...]
    """``namespace/name`` of the pods planned onto it, in planning order."""


@dataclass(frozen=True, slots=True)
class PoolOption:
    """One pool's answer: what it would add, or why it would not help."""

    pool: str
    helps: bool
    nodes: tuple[NewNode, ...] = ()
    pods: int = 0
    """Pending pods the new nodes take."""
    waste: float | None = None
    """CA's least-waste score: unused cpu share + unused memory share of the new nodes."""
    why: str = ""
    """Why it does not help the explained pod (max size, a Filter's reasons...)."""


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """The autoscaler's answer for the pending pods and the explained pod."""

    autoscaler: str
    expander: str
    today: Explanation
    """kube-scheduler's answer with today's nodes."""
    chosen: PoolOption | None = None
    """The scale-up that places the explained pod (None: none does, or none is needed)."""
    options: tuple[PoolOption, ...] = ()
    """Every pool's option (Cluster Autoscaler), or the one combined plan (Karpenter)."""
    after: Explanation | None = None
    """kube-scheduler's answer once the new nodes exist and the other pending pods are
    where the autoscaler planned them."""
    reason: str = ""
    """Why there is no scale-up: the pod fits today, or what keeps every pool from it."""
    new_nodes: tuple[Node, ...] = field(default=(), repr=False)

    @property
    def needed(self) -> bool:
        """Whether the pod needs a scale-up (it fits no node today)."""
        return self.today.selected_node is None

    def to_json(self) -> dict[str, object]:
        """The ``autoscaling`` block of ``explain --output json``."""
        chosen = self.chosen
        return {
            "autoscaler": self.autoscaler,
            "expander": self.expander if self.autoscaler == "cluster-autoscaler" else None,
            "fitsToday": self.today.selected_node is not None,
            "scaleUp": None
            if chosen is None
            else {
                "pool": chosen.pool,
                "zone": _zone_of_pod(chosen.nodes, self.today.pod.key),
                "pools": sorted({n.pool for n in chosen.nodes}),
                "nodes": len(chosen.nodes),
                "byZone": _by_zone(chosen.nodes),
                "newNodes": [_new_node_json(n) for n in chosen.nodes],
                "pods": chosen.pods,
                "landsOn": self.after.selected_node if self.after is not None else None,
            },
            "reason": self.reason or None,
            "options": [
                {
                    "pool": o.pool,
                    "helps": o.helps,
                    "nodes": len(o.nodes),
                    "byZone": _by_zone(o.nodes),
                    "pods": o.pods,
                    "waste": None if o.waste is None else round(o.waste, 4),
                    "why": o.why or None,
                }
                for o in self.options
            ],
            "withScaleUp": None if self.after is None else self.after.to_json(),
        }


def _zone_of_pod(nodes: Sequence[NewNode], pod: str) -> str | None:
    """The zone of the new node the autoscaler plans the pod onto (else of the first)."""
    for node in nodes:
        if pod in node.pods:
            return node.zone
    return nodes[0].zone if nodes else None


def _by_zone(nodes: Sequence[NewNode]) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in nodes:
        out[node.zone or ""] = out.get(node.zone or "", 0) + 1
    return out


def _new_node_json(node: NewNode) -> dict[str, object]:
    return {
        "name": node.name,
        "pool": node.pool,
        "zone": node.zone,
        "instanceType": node.instance_type,
        "pods": list(node.pods),
    }


# -- the simulation --------------------------------------------------------------------------------


def _size(pod: Pod) -> tuple[Fraction, Fraction]:
    amounts = pod_request_amounts(pod)
    return amounts.get("cpu", Fraction(0)), amounts.get("memory", Fraction(0))


def _ordered(pods: Sequence[Pod]) -> list[Pod]:
    # Both autoscalers plan the biggest pods first (CA's binpacking estimator, Karpenter's
    # byCPUAndMemoryDescending queue); equal pods keep their order.
    return sorted(pods, key=lambda p: tuple(-x for x in _size(p)))


@dataclass
class _Plan:
    pools: Sequence[NodePool]
    cluster: Cluster
    configuration: SchedulerConfiguration
    new: list[Node] = field(default_factory=list)
    owner: dict[str, int] = field(default_factory=dict)
    """New node name -> index of its pool in ``pools``."""
    placed: list[Pod] = field(default_factory=list)
    planned: dict[str, list[str]] = field(default_factory=dict)
    counter: dict[str, int] = field(default_factory=dict)

    def snapshot(self, extra: Sequence[Node] = ()) -> Cluster:
        return replace(
            self.cluster,
            nodes=(*self.cluster.nodes, *self.new, *extra),
            pods=(*self.cluster.pods, *self.placed),
        )

    def existing(self, pool: NodePool) -> list[Node]:
        return [n for n in (*self.cluster.nodes, *self.new) if pool_of_node(n) == pool.name]

    def room(self, pool: NodePool, template: Node) -> str | None:
        """Why the pool may not add a node from ``template`` (None: it may)."""
        nodes = self.existing(pool)
        if pool.max_size is not None and len(nodes) >= pool.max_size:
            return f"max size reached ({len(nodes)}/{pool.max_size} nodes)"
        for resource, limit in pool.limits.items():
            used = sum(
                (n.allocatable[resource].amount for n in nodes if resource in n.allocatable),
                Fraction(0),
            )
            adding = template.allocatable.get(resource)
            if adding is not None and used + adding.amount > limit.amount:
                return f"spec.limits.{resource} {limit} reached"
        return None

    def candidate(self, pool_index: int, template: Node, offset: int) -> Node:
        """A node the pool may add next; ``offset`` numbers the step's candidates apart
        (the one materialized is renamed to the pool's next number)."""
        pool = self.pools[pool_index]
        number = self.counter.get(pool.name, len(self.existing(pool))) + 1 + offset
        name = f"{pool.name}-{number}"
        labels = {**template.labels, LABEL_HOSTNAME: name, _MARK: str(pool_index)}
        return replace(template, metadata=replace(template.metadata, name=name, labels=labels))

    def materialize(self, node: Node) -> Node:
        pool_index = int(node.labels[_MARK])
        pool = self.pools[pool_index]
        number = self.counter.get(pool.name, len(self.existing(pool))) + 1
        name = f"{pool.name}-{number}"
        labels = {k: v for k, v in node.labels.items() if k != _MARK}
        labels[LABEL_HOSTNAME] = name
        real = replace(node, metadata=replace(node.metadata, name=name, labels=labels))
        self.counter[pool.name] = number
        self.new.append(real)
        self.owner[real.name] = pool_index
        return real

    def place(self, pod: Pod, node: str) -> None:
        self.placed.append(replace(pod, node_name=node))
        if node in self.owner:
            self.planned.setdefault(node, []).append(pod.key)

    def explain(self, pod: Pod, extra: Sequence[Node] = ()) -> Explanation:
        return explain(self.snapshot(extra), pod, self.configuration)


def _best_new(result: Explanation, names: set[str]) -> str | None:
    best: tuple[int, int] | None = None
    chosen = None
    for index, node in enumerate(result.nodes):
        if node.name not in names or node.total_score is None:
            continue
        key = (node.total_score, -index)
        if best is None or key > best:
            best, chosen = key, node.name
    return chosen


def _why(result: Explanation, names: set[str]) -> str:
    reasons = [
        f"{node.filter.plugin}: {'; '.join(node.filter.reasons)}"
        for node in result.nodes
        if node.name in names and node.filter.plugin
    ]
    if not reasons and result.message:
        return result.message
    return ", ".join(dict.fromkeys(reasons)) or "the pod fits no new node"


def _plan(
    plan: _Plan,
    pods: Sequence[Pod],
    pool_indexes: Sequence[int],
    explained: str,
    karpenter: bool,
) -> str:
    """Plan ``pods``; returns why the explained pod got no node ("" when it got one)."""
    why_not = ""
    for pod in _ordered(pods):
        if not karpenter:
            # Cluster Autoscaler acts for pods kube-scheduler leaves Pending.
            today = plan.explain(pod)
            if today.selected_node is not None:
                plan.place(pod, today.selected_node)
                continue
        candidates: list[Node] = []
        blocked: list[str] = []
        for index in pool_indexes:
            pool = plan.pools[index]
            for group in _candidate_groups(pool, karpenter):
                # Karpenter leaves out the offerings that would breach the NodePool's limits
                # and keeps the rest (the largest that fits stands for the group).
                fitting = [t for t in group if plan.room(pool, t) is None]
                if fitting:
                    candidates.append(plan.candidate(index, fitting[0], len(candidates)))
                else:
                    problem = plan.room(pool, group[-1]) or ""
                    blocked.append(f"pool {pool.name}: {problem}" if karpenter else problem)
                    if not karpenter:
                        break
        if not candidates:
            if karpenter:
                today = plan.explain(pod)
                if today.selected_node is not None:
                    plan.place(pod, today.selected_node)
                    continue
            if pod.key == explained:
                why_not = "; ".join(dict.fromkeys(blocked)) or "no pool may add a node"
            continue
        names = {c.name for c in candidates}
        result = plan.explain(pod, candidates)
        if karpenter:
            # Karpenter counts a NodePool's zones as domains before any node is there
            # (the candidates make them domains here), and uses capacity that exists or
            # is planned before it plans more.
            # For a hostname spread Karpenter takes the global minimum as 0 (a new node is
            # always possible: topologygroup.go's domainMinCount), so no node gets more than
            # maxSkew matching pods.
            real = {
                n.name
                for n in (*plan.cluster.nodes, *plan.new)
                if _under_hostname_skew(plan, pod, n.name)
            }
            existing = _best_new(result, real)
            if existing is not None:
                plan.place(pod, existing)
                continue
        chosen = _best_new(result, names)
        if chosen is None:
            if pod.key == explained:
                why_not = _why(result, names)
            continue
        node = plan.materialize(next(c for c in candidates if c.name == chosen))
        plan.place(pod, node.name)
    return why_not


def _candidate_groups(pool: NodePool, karpenter: bool) -> list[list[Node]]:
    """Candidate shapes, in groups of which one node may be planned: a template pool's
    templates one by one; a Karpenter pool's offerings per zone and capacity type, largest
    first, so that the planned node can take what the largest instance type within the
    limits could (the cheapest fitting one is chosen at the end)."""
    if not karpenter:
        return [[t] for t in pool.templates]
    groups: dict[tuple[str, str], list[Node]] = {}
    for template in pool.templates:
        key = (
            template.labels.get(LABEL_TOPOLOGY_ZONE, ""),
            template.labels.get("karpenter.sh/capacity-type", ""),
        )
        groups.setdefault(key, []).append(template)
    return [sorted(g, key=_capacity, reverse=True) for g in groups.values()]


def _under_hostname_skew(plan: _Plan, pod: Pod, node: str) -> bool:
    for c in pod.topology_spread_constraints:
        if c.topology_key != LABEL_HOSTNAME or c.when_unsatisfiable != "DoNotSchedule":
            continue
        matching = sum(
            1
            for p in (*plan.cluster.pods, *plan.placed)
            if p.node_name == node
            and p.namespace == pod.namespace
            and selector_matches(c.label_selector, p.labels)
        )
        if matching + 1 > c.max_skew:
            return False
    return True


def _capacity(node: Node) -> tuple[Fraction, Fraction]:
    return (
        node.allocatable["cpu"].amount if "cpu" in node.allocatable else Fraction(0),
        node.allocatable["memory"].amount if "memory" in node.allocatable else Fraction(0),
    )


def _cheapest(pool: NodePool, node: Node, pods: Sequence[Pod]) -> Node:
    # The cheapest offering of the node's zone and capacity type whose allocatable holds
    # the planned pods' requests and count.
    cpu = sum((_size(p)[0] for p in pods), Fraction(0))
    memory = sum((_size(p)[1] for p in pods), Fraction(0))
    zone = node.labels.get(LABEL_TOPOLOGY_ZONE)
    capacity_type = node.labels.get("karpenter.sh/capacity-type")
    for template in pool.templates:  # cheapest first
        if template.labels.get(LABEL_TOPOLOGY_ZONE) != zone:
            continue
        if template.labels.get("karpenter.sh/capacity-type") != capacity_type:
            continue
        allocatable = template.allocatable
        if (
            allocatable.get("cpu", Quantity(Fraction(0))).amount >= cpu
            and allocatable.get("memory", Quantity(Fraction(0))).amount >= memory
            and allocatable.get("pods", Quantity(Fraction(110))).amount >= len(pods)
            and all(
                template.labels.get(k) == v
                for p in pods
                for k, v in p.node_selector.items()
                if k != LABEL_HOSTNAME
            )
        ):
            labels = {**template.labels, LABEL_HOSTNAME: node.name}
            return replace(template, metadata=ObjectMeta(node.name, labels=labels))
    return node


def _option(plan: _Plan, pool_name: str, why: str, explained: str) -> PoolOption:
    by_name = {p.key: p for p in plan.placed}
    nodes = []
    for node in plan.new:
        pool = plan.pools[plan.owner[node.name]]
        nodes.append(
            NewNode(
                node.name,
                pool.name,
                node.labels.get(LABEL_TOPOLOGY_ZONE),
                node.labels.get(LABEL_INSTANCE_TYPE),
                tuple(plan.planned.get(node.name, ())),
            )
        )
    helped = any(explained in n.pods for n in nodes) or (
        explained in by_name and by_name[explained].node_name in {n.name for n in plan.new}
    )
    pods = sum(len(n.pods) for n in nodes)
    return PoolOption(
        pool_name,
        helped,
        tuple(nodes),
        pods,
        _waste(plan) if nodes else None,
        "" if helped else (why or "the pod fits no node the pool could add"),
    )


def _waste(plan: _Plan) -> float:
    # CA's least-waste expander: (allocatable - requested) / allocatable for cpu and for
    # memory over the new nodes, summed.
    total = 0.0
    for resource, index in (("cpu", 0), ("memory", 1)):
        available = sum(
            (n.allocatable[resource].amount for n in plan.new if resource in n.allocatable),
            Fraction(0),
        )
        requested = sum(
            (_size(p)[index] for p in plan.placed if p.node_name in plan.owner), Fraction(0)
        )
        if available > 0:
            total += float((available - requested) / available)
    return total


def plan_scale_up(
    cluster: Cluster,
    pod: Pod,
    pending: Sequence[Pod],
    pools: Sequence[NodePool],
    configuration: SchedulerConfiguration,
    *,
    autoscaler: str = "cluster-autoscaler",
    expander: str = "least-waste",
    seed: int = 0,
) -> ScaleUp:
    """What ``autoscaler`` adds for ``pod`` and the cluster's other ``pending`` pods (see
    the module docstring), and where ``pod`` lands afterwards."""
    if autoscaler not in AUTOSCALERS:
        raise InputError(
            "", message=f"unknown autoscaler {autoscaler!r}: one of {', '.join(AUTOSCALERS)}"
        )
    if expander not in EXPANDERS:
        raise InputError(
            "", message=f"unknown expander {expander!r}: one of {', '.join(EXPANDERS)}"
        )
    pod = admit_pod(pod, cluster.admission)
    served = {p.scheduler_name for p in configuration.profiles}
    # The other pending pods this scheduler serves: the autoscaler adds nodes for all.
    others = [
        admit_pod(p, cluster.admission)
        for p in pending
        if p.key != pod.key and (p.scheduler_name or "default-scheduler") in served
    ]
    today = explain(cluster, pod, configuration)
    if not pools:
        return ScaleUp(autoscaler, expander, today, reason="no node pools given")
    everything = [pod, *others]
    options: list[PoolOption] = []
    plans: dict[str, _Plan] = {}
    if autoscaler == "karpenter":
        plan = _Plan(pools, cluster, configuration)
        why = _plan(plan, everything, range(len(pools)), pod.key, karpenter=True)
        plan.new = [
            _cheapest(
                pools[plan.owner[n.name]], n, [p for p in plan.placed if p.node_name == n.name]
            )
            for n in plan.new
        ]
        option = _option(plan, ",".join(p.name for p in pools), why, pod.key)
        options.append(option)
        plans[option.pool] = plan
    else:
        for index, pool in enumerate(pools):
            plan = _Plan(pools, cluster, configuration)
            why = _plan(plan, everything, [index], pod.key, karpenter=False)
            option = _option(plan, pool.name, why, pod.key)
            options.append(option)
            plans[pool.name] = plan
    fits = today.selected_node is not None
    # The question asked: a pod that fits no node needs an option that places it; one that
    # fits today is placed by kube-scheduler, and the scale-up is for the others.
    useful = [o for o in options if o.nodes and (fits or o.helps)]
    if not useful:
        if fits:
            reason = "the pod fits an existing node, and no other pending pod needs a new one"
        else:
            reasons = "; ".join(f"{o.pool}: {o.why}" for o in options)
            reason = f"no pool's new nodes take the pod ({reasons})"
        return ScaleUp(autoscaler, expander, today, options=tuple(options), reason=reason)
    chosen = (
        _expand(useful, pools, expander, seed) if autoscaler == "cluster-autoscaler" else useful[0]
    )
    plan = plans[chosen.pool]
    rest = [p for p in plan.placed if p.key != pod.key]
    after_cluster = replace(cluster, nodes=(*cluster.nodes, *plan.new), pods=(*cluster.pods, *rest))
    after = explain(after_cluster, pod, configuration)
    return ScaleUp(autoscaler, expander, today, chosen, tuple(options), after,
                   new_nodes=tuple(plan.new))  # fmt: skip


def _expand(
    options: Sequence[PoolOption], pools: Sequence[NodePool], expander: str, seed: int
) -> PoolOption:
    priority: Mapping[str, int] = {p.name: p.priority for p in pools}
    if expander == "most-pods":
        return max(options, key=lambda o: (o.pods, -options.index(o)))
    if expander == "priority":
        top = max(priority[o.pool] for o in options)
        best = [o for o in options if priority[o.pool] == top]
        return random.Random(seed).choice(best) if len(best) > 1 else best[0]
    if expander == "random":
        return random.Random(seed).choice(list(options))
    return min(options, key=lambda o: (o.waste if o.waste is not None else 2.0, options.index(o)))
