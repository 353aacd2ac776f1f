"""The autoscaler in the simulator: one more controller feeding the one scheduling loop.

Modelled on Cluster Autoscaler's main loop (``RunOnce``), which runs every
``--scan-interval``; here a scan runs at the next multiple of the scan interval after
something it reacts to happened, so that a settled cluster makes no events and a step
ends (a real autoscaler scanning an idle cluster changes nothing either).

Scale-up. Pods that kube-scheduler left unschedulable (at least one failed attempt) are
planned by :func:`topospread.engine.autoscale.plan_scale_up` — the same planner as
``explain --node-pools``: CA's binpacking estimator per pool and the expander, or
Karpenter's provisioning — over the current cluster *with the nodes still being
provisioned* (CA counts upcoming nodes as existing, so it does not ask twice for the same
pods, and they count towards ``max-size``). The planned nodes become Ready after their
pool's ``provision-delay``, with their template's labels, taints and allocatable; the
scheduling queue retries its unschedulable pods on the node-add event, as for any node.
A pool whose ``provision-delay`` exceeds ``maxNodeProvisionTime`` never delivers: the
scale-up is given up at that time, the nodes are forgotten and the pool is left out of
scale-ups for CA's initial node group backoff (5 minutes).

Scale-down, as CA's FAQ and its planner describe it. A node of a pool is *unneeded* when

* its utilization — the larger of requested cpu / allocatable cpu and requested memory /
  allocatable memory — is below ``scaleDownUtilizationThreshold`` (Karpenter has no
  threshold: with ``kind: karpenter`` every node is a candidate, as its consolidation
  deletes any node whose pods fit elsewhere);
* every pod on it can be moved: none without a controller, none annotated
  ``cluster-autoscaler.kubernetes.io/safe-to-evict: "false"``, none in ``kube-system``
  without a PodDisruptionBudget, none with local storage (``emptyDir``/``hostPath``),
  none whose PodDisruptionBudget allows no disruption (``safe-to-evict: "true"`` lifts the
  checks but the budget's); and kube-scheduler's own cycle places each of them on the
  other nodes, the node and every node already found unneeded left out (so two nodes are
  not emptied onto each other);
* its pool stays at or above ``min-size`` without it, and the node is not annotated
  ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``.

A node unneeded for ``scaleDownUnneededTime`` is removed once no scale-up happened in
the last ``scaleDownDelayAfterAdd`` and no node is being provisioned: all such empty nodes
at once, at most one non-empty node per scan (CA's ``--max-drain-parallelism`` 1). A
non-empty node is tainted ``ToBeDeletedByClusterAutoscaler``, its pods evicted (their
controllers recreate them, the scheduler places them) and the node deleted. Deletions are
immediate, as everywhere in the simulator.

Not modelled: DaemonSet pods, startup taints, CA's ``balance-similar-node-groups``, its
scale-up of node groups below ``min-size`` (``--enforce-node-group-min-size``, off by
default), Karpenter's replacement of a node by a cheaper one. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from topospread.engine.autoscale import plan_scale_up
from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.errors import TopospreadError
from topospread.model.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Node,
    ObjectMeta,
    Pod,
    Taint,
)
from topospread.model.pools import NodePool, pool_of_node
from topospread.model.resources import pod_request_amounts

from .controllers import budgets_blocking
from .result import PoolSize
from .scenario import AutoscalerSettings
from .state import PodRecord

if TYPE_CHECKING:
    from .simulator import Simulator

__all__ = [
    "ANNOTATION_SAFE_TO_EVICT",
    "ANNOTATION_SCALE_DOWN_DISABLED",
    "TAINT_TO_BE_DELETED",
    "Autoscaler",
]

ANNOTATION_SAFE_TO_EVICT: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
ANNOTATION_SCALE_DOWN_DISABLED: Final = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
TAINT_TO_BE_DELETED: Final = "ToBeDeletedByClusterAutoscaler"
INITIAL_BACKOFF: Final = 300
"""CA's ``--initial-node-group-backoff-duration``: a pool whose scale-up failed waits."""
_PODS_NAMED: Final = 6
"""Pods named in one scale-up event; the rest are counted."""


def _share(requested: Fraction, allocatable: Fraction) -> float:
    return float(requested / allocatable) if allocatable > 0 else 0.0


class Autoscaler:
    """Cluster Autoscaler (or Karpenter) over the simulator's cluster; see the module."""

    def __init__(
        self, sim: Simulator, pools: Sequence[NodePool], settings: AutoscalerSettings
    ) -> None:
        self.sim = sim
        self.settings = settings
        self.pools: dict[str, NodePool] = {p.name: p for p in pools}
        self.upcoming: dict[str, Node] = {}
        """Nodes decided but not Ready yet, by name."""
        self.unneeded_since: dict[str, int] = {}
        self.backoff_until: dict[str, int] = {}
        self.last_scale_up: int | None = None
        self._serial: dict[str, int] = {}
        self._scan_at: dict[str, int] = {}
        """``up``/``down`` -> the time of the scan already scheduled."""

    # -- pools ------------------------------------------------------------------------------

    def set_bounds(self, name: str, minimum: int | None, maximum: int | None) -> None:
        """A ``setPool`` step: new bounds, looked at by the next scans."""
        pool = self.pools[name]
        self.pools[name] = replace(
            pool,
            min_size=pool.min_size if minimum is None else minimum,
            max_size=pool.max_size if maximum is None else maximum,
        )
        self.sim._log(
            "autoscaler",
            detail=f"pool {name}: minSize {self.pools[name].min_size}, "
            f"maxSize {self.pools[name].max_size}",
        )
        self.wake_up()
        self.wake_down()

    def nodes_of(self, name: str) -> list[Node]:
        """The pool's nodes (Ready ones), in node order."""
        return [n for n in self.sim.state.nodes.values() if pool_of_node(n) == name]

    def resize(self, name: str, size: int) -> None:
        """A ``scalePool`` step: nodes added from the first template at once, or the newest
        removed (their pods deleted; their controllers replace them)."""
        pool = self.pools[name]
        nodes = self.nodes_of(name)
        if size > len(nodes):
            template = pool.templates[0]
            for _ in range(size - len(nodes)):
                self.sim._add_node(self._new_node(pool, template))
        for node in reversed(nodes[size:]):
            self.sim._remove_node(node.name, f"removed (pool {name} scaled to {size})")

    def sizes(self) -> tuple[PoolSize, ...]:
        """Every pool's size now."""
        out = []
        for pool in self.pools.values():
            nodes = self.nodes_of(pool.name)
            zones: dict[str, int] = {}
            for node in nodes:
                zone = node.labels.get(LABEL_TOPOLOGY_ZONE, "")
                zones[zone] = zones.get(zone, 0) + 1
            upcoming = sum(1 for n in self.upcoming.values() if pool_of_node(n) == pool.name)
            out.append(
                PoolSize(
                    pool.name, len(nodes), upcoming, pool.min_size, pool.max_size,
                    tuple(zones.items()),
                )
            )  # fmt: skip
        return tuple(out)

    def _new_node(self, pool: NodePool, template: Node) -> Node:
        # Names never reused in a run: {pool}-{n}, n counting every node the pool made.
        taken = set(self.sim.state.nodes) | set(self.upcoming)
        number = self._serial.get(pool.name, len(self.nodes_of(pool.name)))
        name = ""
        while not name or name in taken:
            number += 1
            name = f"{pool.name}-{number}"
        self._serial[pool.name] = number
        labels = {**template.labels, LABEL_HOSTNAME: name}
        # A node, not a template: the pool annotations stay on the template.
        annotations = {
            k: v
            for k, v in template.metadata.annotations.items()
            if not k.startswith("autoscaling.topospread.dev/")
        }
        meta = ObjectMeta(name=name, labels=labels, annotations=annotations)
        return replace(template, metadata=meta)

    # -- waking ------------------------------------------------------------------------------

    def _next_tick(self, earliest: int) -> int:
        interval = self.settings.scan_interval
        return -(-earliest // interval) * interval

    def _wake(self, which: str, earliest: int) -> None:
        at = self._next_tick(max(earliest, self.sim.now + 1))
        pending = self._scan_at.get(which)
        if pending is not None and self.sim.now <= pending <= at:
            return
        self._scan_at[which] = at
        scan = self._scale_up if which == "up" else self._scale_down

        def run() -> None:
            if self._scan_at.get(which) != at:
                return  # superseded by an earlier scan
            del self._scan_at[which]
            scan()

        self.sim.schedule(at - self.sim.now, self.sim.CONTROLLER_PRIORITY, run)

    def wake_up(self) -> None:
        """A pod failed to schedule (or a pool changed): the next scan looks for a scale-up."""
        if any(q.attempts for q in self.sim.unschedulable_pods()):
            self._wake("up", self.sim.now)

    def wake_down(self, earliest: int = 0) -> None:
        """The cluster changed: the next scan (not before ``earliest``) looks for unneeded
        nodes."""
        if self.settings.scale_down_enabled:
            self._wake("down", earliest)

    # -- scale-up ----------------------------------------------------------------------------

    def _cluster(self, nodes: Sequence[Node], extra_pods: Sequence[Pod] = ()) -> Cluster:
        sim = self.sim
        sim._framework_map()  # brings the listed objects up to date
        names = {n.name for n in nodes}
        pods = tuple(r.pod for r in sim.state.pods.values() if r.node_name and r.node_name in names)
        return Cluster(
            nodes=tuple(nodes),
            pods=(*pods, *extra_pods),
            objects=sim._objects,
            admission=sim.state.admission_objects(),
        )

    def _scale_up(self) -> None:
        sim = self.sim
        pending = [q.record.pod for q in sim.unschedulable_pods() if q.attempts]
        if not pending:
            return
        pools = [p for p in self.pools.values() if self.backoff_until.get(p.name, -1) <= sim.now]
        if not pools:
            return
        cluster = self._cluster([*sim.state.nodes.values(), *self.upcoming.values()])
        chosen = None
        # The planner answers for one pod and the others with it; a pod no pool can help
        # must not keep the others from a scale-up, so the pods are asked in queue order.
        for pod in pending:
            try:
                answer = plan_scale_up(
                    cluster,
                    pod,
                    pending,
                    pools,
                    sim.configuration,
                    autoscaler=self.settings.kind,
                    expander=self.settings.expander,
                    seed=sim.seed,
                )
            except TopospreadError:
                continue
            if answer.chosen is not None and answer.chosen.nodes:
                chosen = answer
                break
        if chosen is None:
            return
        assert chosen.chosen is not None
        self.last_scale_up = sim.now
        planned = {n.name: n for n in chosen.new_nodes}
        by_pool: dict[str, list[Node]] = {}
        pods: list[str] = []
        for new in chosen.chosen.nodes:
            pool = self.pools[new.pool]
            node = self._new_node(pool, planned[new.name])
            self.upcoming[node.name] = node
            by_pool.setdefault(pool.name, []).append(node)
            pods.extend(new.pods)
        for name, nodes in by_pool.items():
            pool = self.pools[name]
            zones: dict[str, int] = {}
            for node in nodes:
                zone = node.labels.get(LABEL_TOPOLOGY_ZONE, "")
                zones[zone] = zones.get(zone, 0) + 1
            where = ", ".join(f"{z or '(no zone)'}: {n}" for z, n in zones.items())
            named = ", ".join(pods[:_PODS_NAMED]) + (
                f" and {len(pods) - _PODS_NAMED} more" if len(pods) > _PODS_NAMED else ""
            )
            sim._log(
                "autoscaler",
                detail=f"scale-up: pool {name} +{len(nodes)} node(s) ({where}) for "
                f"{len(pending)} unschedulable pod(s), planned onto the new node(s): {named}; "
                f"Ready in {pool.provision_delay}s",
            )
            if pool.provision_delay > self.settings.max_node_provision_time:
                sim.schedule(
                    self.settings.max_node_provision_time,
                    sim.CONTROLLER_PRIORITY,
                    self._give_up(name, [n.name for n in nodes]),
                )
            else:
                for node in nodes:
                    sim.schedule(pool.provision_delay, sim.CONTROLLER_PRIORITY, self._ready(node))

    def _ready(self, node: Node) -> _Action:
        def ready() -> None:
            if self.upcoming.pop(node.name, None) is None:
                return
            self.sim._add_node(node)

        return ready

    def _give_up(self, pool: str, names: list[str]) -> _Action:
        def give_up() -> None:
            for name in names:
                self.upcoming.pop(name, None)
            self.backoff_until[pool] = self.sim.now + INITIAL_BACKOFF
            self.sim._log(
                "autoscaler",
                detail=f"scale-up: pool {pool}: {len(names)} node(s) not Ready within "
                f"maxNodeProvisionTime {self.settings.max_node_provision_time}s; given up, "
                f"the pool backed off for {INITIAL_BACKOFF}s",
            )

        return give_up

    # -- scale-down --------------------------------------------------------------------------

    def _utilization(self, node: Node, pods: Sequence[Pod]) -> float:
        cpu = sum((pod_request_amounts(p).get("cpu", Fraction(0)) for p in pods), Fraction(0))
        memory = sum((pod_request_amounts(p).get("memory", Fraction(0)) for p in pods), Fraction(0))
        allocatable = node.allocatable
        return max(
            _share(cpu, allocatable["cpu"].amount if "cpu" in allocatable else Fraction(0)),
            _share(
                memory, allocatable["memory"].amount if "memory" in allocatable else Fraction(0)
            ),
        )

    def _blocker(self, record: PodRecord) -> str | None:
        """Why CA would not move this pod (None: it may)."""
        pod = record.pod
        annotations = pod.metadata.annotations
        if annotations.get(ANNOTATION_SAFE_TO_EVICT) == "false":
            return f"pod {pod.key} is annotated {ANNOTATION_SAFE_TO_EVICT}=false"
        budgets = budgets_blocking(self.sim.state, record)
        if budgets:
            return f"pod {pod.key}: PodDisruptionBudget {', '.join(budgets)} allows no disruption"
        if annotations.get(ANNOTATION_SAFE_TO_EVICT) == "true":
            return None
        if record.owner is None:
            return f"pod {pod.key} is not managed by a controller"
        if self._local_storage(record):
            return f"pod {pod.key} has local storage (emptyDir or hostPath)"
        if pod.namespace == "kube-system" and not any(
            ns == "kube-system" for ns, _ in self.sim.state.budgets
        ):
            return f"pod {pod.key} is a kube-system pod without a PodDisruptionBudget"
        return None

    def _local_storage(self, record: PodRecord) -> bool:
        marked = self.sim.scenario.local_storage
        pod = record.pod
        if ("Pod", pod.namespace, pod.name) in marked:
            return True
        owner = record.owner
        if owner is None:
            return False
        if owner in marked:
            return True
        rs = self.sim.state.replica_sets.get(owner[1:]) if owner[0] == "ReplicaSet" else None
        return rs is not None and rs.owner in marked

    def _movable(self, node: Node, leaving: set[str]) -> bool:
        sim = self.sim
        records = sim._pods_on(node.name)
        if any(self._blocker(r) is not None for r in records):
            return False
        # Each pod in turn on the nodes that stay, the pods placed before it counted.
        staying = [
            n for n in sim.state.nodes.values() if n.name not in leaving and n.name != node.name
        ]
        placed: list[Pod] = []
        for record in records:
            # The pod as its replacement would come: not bound yet.
            pod = replace(record.pod, node_name="", phase="Pending")
            try:
                result = explain(self._cluster(staying, placed), pod, sim.configuration)
            except TopospreadError:
                return False
            if result.selected_node is None:
                return False
            placed.append(replace(record.pod, node_name=result.selected_node))
        return True

    def _scale_down(self) -> None:
        sim = self.sim
        settings = self.settings
        karpenter = settings.kind == "karpenter"
        leaving: set[str] = set()
        remaining: dict[str, int] = {name: len(self.nodes_of(name)) for name in self.pools}
        unneeded: dict[str, int] = {}
        for node in list(sim.state.nodes.values()):
            pool_name = pool_of_node(node)
            pool = self.pools.get(pool_name or "")
            if (
                pool is None
                or node.metadata.annotations.get(ANNOTATION_SCALE_DOWN_DISABLED) == "true"
            ):
                continue
            if remaining[pool.name] - 1 < pool.min_size:
                continue
            pods = [r.pod for r in sim._pods_on(node.name)]
            if (
                not karpenter
                and self._utilization(node, pods) >= settings.scale_down_utilization_threshold
            ):
                continue
            if not self._movable(node, leaving):
                continue
            leaving.add(node.name)
            remaining[pool.name] -= 1
            unneeded[node.name] = self.unneeded_since.get(node.name, sim.now)
        self.unneeded_since = unneeded
        if not unneeded:
            return
        due = {
            n
            for n, since in unneeded.items()
            if sim.now - since >= settings.scale_down_unneeded_time
        }
        cooldown_end = (
            self.last_scale_up + settings.scale_down_delay_after_add
            if self.last_scale_up is not None
            else 0
        )
        if due and sim.now >= cooldown_end and not self.upcoming:
            empty = [n for n in due if not sim._pods_on(n)]
            busy = [n for n in due if n not in empty]
            # Every empty node at once; one node drained per scan.
            for name in sorted(empty, key=list(sim.state.nodes).index):
                self._remove(name, unneeded[name])
            if busy:
                first = min(busy, key=list(sim.state.nodes).index)
                self._remove(first, unneeded[first])
            self.wake_down()
            return
        # Look again when the first of them is due (the cluster's changes wake it sooner).
        next_due = min(since + settings.scale_down_unneeded_time for since in unneeded.values())
        self.wake_down(max(next_due, cooldown_end))

    def _remove(self, name: str, since: int) -> None:
        sim = self.sim
        node = sim.state.nodes[name]
        pool = pool_of_node(node) or ""
        records = sim._pods_on(name)
        what = "empty" if not records else f"{len(records)} pod(s) moved"
        sim._log(
            "autoscaler",
            node=name,
            detail=f"scale-down: pool {pool} -1 node: {name} ({what}; unneeded since t={since}s)",
        )
        self.unneeded_since.pop(name, None)
        if records:
            # CA taints the node so that nothing new lands there, then evicts its pods.
            taints = (*node.taints, Taint(TAINT_TO_BE_DELETED, "NoSchedule", str(sim.now)))
            sim._update_node(replace(node, taints=taints), "tainted for deletion (scale-down)")
            for record in records:
                sim.state.delete_pod(
                    record.key, f"evicted by the autoscaler's scale-down of {name}"
                )
        sim._remove_node(name, "removed (scale-down)")


if TYPE_CHECKING:
    from collections.abc import Callable

    _Action = Callable[[], None]
