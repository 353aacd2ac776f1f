"""Rules that need the node pools an autoscaler grows (``audit``/``lint --node-pools``).

The seeds' third known limitation: "the scheduler doesn't have prior knowledge of all the
zones or other topology domains that a cluster has. They are determined from the existing
nodes in the cluster." With the pools known, topospread can say which domains exist only in
pools at zero nodes, which minDomains no pool configuration can ever satisfy, and which
pools cannot hold a workload's spread once a zone is lost.

A pool's nodes are eligible for a workload when its template matches the pods'
``nodeSelector`` and required node affinity and its taints are tolerated (NoSchedule and
NoExecute). Capacities are of empty nodes: an upper bound, other workloads share them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from topospread.engine.audit.checks import ConstraintAudit, RuleContext, _short
from topospread.engine.audit.findings import Finding, Severity
from topospread.model.nodeaffinity import match_node_selector_terms
from topospread.model.objects import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Node, Pod
from topospread.model.pools import NodePool, pool_of_node
from topospread.model.resources import pod_request_amounts
from topospread.model.taints import toleration_tolerates_taint

__all__ = ["pool_rules"]


def _eligible(pod: Pod, node: Node) -> bool:
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    affinity = pod.affinity
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required
        if required is not None and not match_node_selector_terms(node, required)[0]:
            return False
    return all(
        any(toleration_tolerates_taint(t, taint, False) for t in pod.tolerations)
        for taint in node.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


def _domains(nodes: Sequence[Node], key: str) -> set[str]:
    return {n.labels[key] for n in nodes if key in n.labels}


def _pods_per_node(pod: Pod, node: Node) -> int:
    requests = pod_request_amounts(pod)
    fits: list[int] = []
    for name, amount in requests.items():
        if amount <= 0:
            continue
        available = node.allocatable.get(name)
        fits.append(0 if available is None else int(available.amount / amount))
    pods = node.allocatable.get("pods")
    if pods is not None:
        fits.append(int(pods.amount))
    return min(fits) if fits else 110


def _hold(capacities: Sequence[int], max_skew: int) -> int:
    # The most pods zones of these capacities hold with counts within maxSkew: every zone
    # at most the smallest's count plus maxSkew.
    if not capacities:
        return 0
    low = min(capacities)
    return sum(min(c, low + max_skew) for c in capacities)


def pool_rules(ctx: RuleContext, pools: Sequence[NodePool]) -> Iterator[Finding]:
    """The pool rules for one workload (see the module docstring)."""
    pod = ctx.workload.counted
    if not pools or pod is None or ctx.nodes is None:
        return
    nodes = [n for n in ctx.nodes if _eligible(pod, n)]
    templates: dict[str, list[Node]] = {
        p.name: [t for t in p.templates if _eligible(pod, t)] for p in pools
    }
    at_zero = {p.name for p in pools if not any(pool_of_node(n) == p.name for n in ctx.nodes)}
    for c in ctx.constraints:
        key = c.constraint.topology_key
        if key == LABEL_HOSTNAME:
            continue  # every new node is a new hostname domain
        existing = _domains(nodes, key)
        only_in_zero: dict[str, list[str]] = {}
        ever = set(existing)
        for pool in pools:
            for domain in _domains(templates[pool.name], key):
                ever.add(domain)
                if domain not in existing and pool.name in at_zero:
                    only_in_zero.setdefault(domain, []).append(pool.name)
        if only_in_zero:
            yield _only_in_pools_at_zero(ctx, c, existing, only_in_zero)
        if c.hard and c.constraint.min_domains > len(ever):
            yield ctx.finding(
                "min-domains-unreachable",
                Severity.ERROR,
                c.field_path,
                f"minDomains {c.constraint.min_domains} but the existing nodes and every "
                f"node pool together offer only {len(ever)} eligible {_short(key)} domain(s) "
                f"({', '.join(sorted(ever)) or 'none'}): no scale-up can satisfy it",
                f"lower minDomains to {len(ever)} or add a node pool in another "
                f"{_short(key)} domain",
            )
        if c.hard and key == LABEL_TOPOLOGY_ZONE and ctx.workload.replicas:
            finding = _zone_loss(ctx, c, pod, nodes, pools, templates)
            if finding is not None:
                yield finding


def _only_in_pools_at_zero(
    ctx: RuleContext, c: ConstraintAudit, existing: set[str], missing: Mapping[str, list[str]]
) -> Finding:
    key = c.constraint.topology_key
    named = ", ".join(f"{d} (pool {', '.join(p)})" for d, p in sorted(missing.items()))
    blocked = c.hard and c.constraint.min_domains > len(existing)
    effect = (
        f"until a node exists there, only {len(existing)} domain(s) count for minDomains "
        f"{c.constraint.min_domains}: the pods stay Pending unless the autoscaler knows "
        "these domains"
        if blocked
        else f"the spread is computed over the {len(existing)} domain(s) that have nodes"
    )
    return ctx.finding(
        "domains-only-in-pools-at-zero",
        Severity.WARNING if c.hard else Severity.INFO,
        c.field_path,
        f"{_short(key)} domain(s) {named} exist only in node pools at zero nodes; the "
        "scheduler doesn't have prior knowledge of all the topology domains, they are "
        "determined from the existing nodes, and these won't be considered until there is "
        f"at least one node in them: {effect}",
        "use an autoscaler that is aware of the pools' domains (Karpenter reads a "
        "NodePool's zones; Cluster Autoscaler needs a node group per zone), or keep one "
        "node in each (min-size 1)",
    )


def _zone_loss(
    ctx: RuleContext,
    c: ConstraintAudit,
    pod: Pod,
    nodes: Sequence[Node],
    pools: Sequence[NodePool],
    templates: Mapping[str, list[Node]],
) -> Finding | None:
    # Capacity per zone in pods: the eligible nodes there, plus what each pool may still
    # add there (up to max-size; a pool spanning zones may put all of it in one).
    replicas = ctx.workload.replicas or 0
    capacity: dict[str, int] = {}
    for node in nodes:
        zone = node.labels.get(LABEL_TOPOLOGY_ZONE)
        if zone is not None:
            capacity[zone] = capacity.get(zone, 0) + _pods_per_node(pod, node)
    for pool in pools:
        current = sum(1 for n in (ctx.nodes or ()) if pool_of_node(n) == pool.name)
        headroom = None if pool.max_size is None else max(0, pool.max_size - current)
        for template in templates[pool.name]:
            zone = template.labels.get(LABEL_TOPOLOGY_ZONE)
            if zone is None:
                continue
            per_node = _pods_per_node(pod, template)
            added = per_node * headroom if headroom is not None else replicas
            capacity[zone] = capacity.get(zone, 0) + added
    if len(capacity) < 2:
        return None
    max_skew = c.constraint.max_skew
    worst: tuple[int, str] | None = None
    for lost in sorted(capacity):
        rest = [v for z, v in capacity.items() if z != lost]
        held = _hold(rest, max_skew)
        if held < replicas and (worst is None or held < worst[0]):
            worst = (held, lost)
    if worst is None:
        return None
    held, lost = worst
    return ctx.finding(
        "pools-cannot-survive-zone-loss",
        Severity.WARNING,
        c.field_path,
        f"without zone {lost}, the other zones' nodes and pools (at max-size) hold at most "
        f"{held} of the {replicas} replicas within maxSkew {max_skew}: the rest stay Pending "
        f"while {lost} is down",
        "raise the max-size of the pools in the other zones, or lower the replicas",
    )
