"""The rules: each looks at one workload's constraints and yields findings.

Counts are never recomputed here: rules that need them read the
:class:`~topospread.engine.sim.result.ConstraintReport` that
:func:`topospread.engine.audit.audit.count_constraints` built from PodTopologySpread's own
PreFilter counting. Node-level rules reuse the plugin's node rules
(``node_labels_match_spread_constraints``, ``match_node_inclusion_policies``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.engine.audit.findings import Finding, Severity
from topospread.engine.audit.workloads import LABEL_POD_TEMPLATE_HASH, Workload
from topospread.engine.sim.result import ConstraintReport
from topospread.framework.node_info import ClusterObjects
from topospread.model.labels import Selector
from topospread.model.nodeaffinity import required_node_affinity
from topospread.model.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeInclusionPolicy,
    Pod,
    Taint,
    TopologySpreadConstraint,
)
from topospread.model.taints import (
    TAINT_NODE_UNSCHEDULABLE,
    do_not_schedule_taints,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    SelectorError,
    label_selector_as_selector,
    node_labels_match_spread_constraints,
)
from topospread.plugins.volumebinding.binder import check_node_affinity

__all__ = [
    "SPREAD_KINDS",
    "WELL_KNOWN_KEY_PREFIXES",
    "WELL_KNOWN_TOPOLOGY_KEYS",
    "ConstraintAudit",
    "MisplacedPod",
    "RuleContext",
    "domain_rules",
    "manifest_rules",
    "node_rules",
    "overlap_rules",
    "pod_rules",
    "spread_feasible",
    "well_known_topology_key",
]

_MAX_NAMES: Final = 5
_MAX_DOMAINS_LISTED: Final = 8
_SHORT_KEYS: Final = {
    "topology.kubernetes.io/zone": "zone",
    "kubernetes.io/hostname": "hostname",
    "topology.kubernetes.io/region": "region",
}
WELL_KNOWN_TOPOLOGY_KEYS: Final = frozenset(
    {
        # kubelet and the cloud node controllers (k8s.io/api/core/v1 well_known_labels.go)
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "beta.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        # CSI drivers' topology labels
        "topology.ebs.csi.aws.com/zone",
        "topology.gke.io/zone",
        "topology.disk.csi.azure.com/zone",
    }
)
"""Topology keys that nodes carry without anyone labelling them."""
WELL_KNOWN_KEY_PREFIXES: Final = (
    "karpenter.sh/",
    "karpenter.k8s.aws/",
    "karpenter.azure.com/",
    "eks.amazonaws.com/",
    "cloud.google.com/",
    "kubernetes.azure.com/",
    "node.kubernetes.io/",
    "node-role.kubernetes.io/",
)
"""Prefixes of node labels that provisioners and managed node pools set."""
SPREAD_KINDS: Final = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})
"""Workloads of long-running replicas, which the spread practice rules look at."""


def well_known_topology_key(key: str) -> bool:
    """Whether nodes carry ``key`` without being labelled by hand."""
    return key in WELL_KNOWN_TOPOLOGY_KEYS or key.startswith(WELL_KNOWN_KEY_PREFIXES)


@dataclass(frozen=True, slots=True)
class MisplacedPod:
    """A pod in a domain above ``globalMin + maxSkew`` of a constraint."""

    pod: str
    node: str
    domain: str

    def to_json(self) -> dict[str, str]:
        """``{"pod", "node", "domain"}``."""
        return {"pod": self.pod, "node": self.node, "domain": self.domain}


@dataclass(frozen=True, slots=True)
class ConstraintAudit:
    """One effective constraint of a workload: as written, as parsed, and as counted."""

    field_path: str
    """``spec.template.spec.topologySpreadConstraints[0]``, or where a default lives."""
    spec: TopologySpreadConstraint
    """As written (own) or configured (defaults)."""
    constraint: Constraint
    """As the plugin parsed it for the counted pod (defaults, matchLabelKeys merged)."""
    hard: bool
    report: ConstraintReport | None = None
    """The plugin's counts over the cluster's nodes; None without a cluster."""
    misplaced: tuple[MisplacedPod, ...] = ()
    """Pods in domains over ``globalMin + maxSkew`` (hard constraints only)."""

    @property
    def action(self) -> str:
        """``DoNotSchedule`` or ``ScheduleAnyway``."""
        return "DoNotSchedule" if self.hard else "ScheduleAnyway"

    def to_json(self) -> dict[str, object]:
        """The issue's constraint shape plus ``fieldPath``, policies and misplaced pods."""
        c = self.constraint
        result: dict[str, object] = {
            "topologyKey": c.topology_key,
            "whenUnsatisfiable": self.action,
            "maxSkew": c.max_skew,
            "minDomains": c.min_domains,
            "selector": str(c.selector),
        }
        if self.report is not None:
            result.update(self.report.to_json())
        result["fieldPath"] = self.field_path
        result["nodeAffinityPolicy"] = c.node_affinity_policy.value
        result["nodeTaintsPolicy"] = c.node_taints_policy.value
        if self.misplaced:
            result["misplacedPods"] = [m.to_json() for m in self.misplaced]
        return result


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What the rules may look at for one workload."""

    workload: Workload
    constraints: tuple[ConstraintAudit, ...]
    source: str
    """``pod``, ``defaults`` or ``none``. ``pod`` with no ``constraints``: the pod's own
    constraints, not counted (no scheduler profile serves the pod's schedulerName, or they
    cannot be parsed)."""
    nodes: tuple[Node, ...] | None = None
    """The cluster's nodes, when there is a cluster."""
    domain_sizes: Mapping[str, int] = field(default_factory=dict)
    """Topology key -> number of domains (lint ``--domains``); used without nodes."""
    system_defaults: bool = False
    """The constraints are kube-scheduler's System defaults."""
    hard_defaults: tuple[TopologySpreadConstraint, ...] = ()
    """The profile's List default constraints with DoNotSchedule (for the autoscaler rule)."""
    pending_messages: tuple[tuple[str, str], ...] = ()
    """(pod, kube-scheduler's FailedScheduling message) of pending pods."""
    comparison_operators: bool = False
    objects: ClusterObjects | None = None
    """The cluster's listed objects (claims and volumes), when there is a cluster."""
    allowed_keys: frozenset[str] | None = None
    """The topology keys a policy allows (lint ``--allowed-topology-keys``); None: any."""
    siblings: tuple[Workload, ...] = ()
    """The other workloads of the same namespace in the same lint run."""

    @property
    def ref(self) -> str:
        """The workload as ``Kind/namespace/name``."""
        return self.workload.ref

    def finding(self, rule: str, severity: Severity, path: str, message: str, fix: str) -> Finding:
        """A finding about this workload."""
        return Finding(rule, severity, self.ref, path, message, fix)


def _short(key: str) -> str:
    # A bare key (``zone``, ``node``) is quoted: it is not topology.kubernetes.io/zone.
    return _SHORT_KEYS.get(key) or _key_text(key)


def _key_text(key: str) -> str:
    return key if "/" in key else f'"{key}"'


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_MAX_NAMES])
    return shown + (f" and {len(items) - _MAX_NAMES} more" if len(items) > _MAX_NAMES else "")


def _labels(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "(none)"


def _by_action(hard: bool, if_hard: Severity, if_soft: Severity) -> Severity:
    return if_hard if hard else if_soft


def _describe(c: ConstraintAudit) -> str:
    return f"{_key_text(c.constraint.topology_key)} maxSkew {c.constraint.max_skew} {c.action}"


# -- rules on the manifest alone -------------------------------------------------------


def manifest_rules(ctx: RuleContext) -> Iterator[Finding]:
    """Rules that need only the object: selectors, matchLabelKeys, maxSkew vs replicas,
    default constraints autoscalers cannot see."""
    w = ctx.workload
    pod = w.counted
    own = ctx.source == "pod"
    unhashed: list[ConstraintAudit] = []
    for c in ctx.constraints if own else ():
        spec = c.spec
        selector = spec.label_selector
        severity = _by_action(c.hard, Severity.ERROR, Severity.WARNING)
        if selector is None:
            yield ctx.finding(
                "missing-selector",
                severity,
                c.field_path,
                f"the {_describe(c)} constraint has no labelSelector, which matches no pod: "
                "every domain counts 0 and the constraint never spreads anything",
                "add labelSelector.matchLabels with the pod template's labels"
                + (f" ({_labels(w.template.labels)})" if w.template is not None else ""),
            )
            continue
        if c.constraint.selector.empty:
            yield ctx.finding(
                "empty-selector",
                severity,
                c.field_path,
                f"the {_describe(c)} constraint has labelSelector: {{}}, which kube-scheduler "
                "v1.37.1 counts as matching no pods (kubernetes#141339), so it spreads nothing",
                "select the workload's pods explicitly, e.g. labelSelector.matchLabels "
                + (f"{_labels(w.template.labels)}" if w.template is not None else "app=NAME"),
            )
            continue
        if pod is not None:
            try:
                written = label_selector_as_selector(selector)
            except SelectorError:
                continue
            if not written.empty and not written.matches(pod.labels):
                counted = ""
                if c.report is not None:
                    others = sum(c.report.domain_counts.values())
                    counted = f"; it counts {others} other pod(s) instead"
                yield ctx.finding(
                    "ghost-selector",
                    severity,
                    c.field_path,
                    f"labelSelector {written} matches none of the workload's own pods (their "
                    f"labels: {_labels(pod.labels)}), so the {_describe(c)} constraint does not "
                    f"spread this workload{counted}",
                    "make the labelSelector select the pod template's labels",
                )
        if (
            w.kind == "Deployment"
            and w.rolling_update
            and LABEL_POD_TEMPLATE_HASH not in spec.match_label_keys
            and not _mentions(c.constraint.selector, LABEL_POD_TEMPLATE_HASH)
        ):
            unhashed.append(c)
        if c.hard and w.replicas is not None and w.replicas >= 2 and spec.max_skew >= w.replicas:
            yield ctx.finding(
                "max-skew-never-binds",
                Severity.WARNING,
                c.field_path,
                f"maxSkew {spec.max_skew} is at least the {w.replicas} replicas: a domain can "
                f"hold at most {w.replicas} pods, so placing one never exceeds maxSkew and the "
                "constraint never rejects a node",
                f"lower maxSkew below {w.replicas} (usually 1)",
            )
    yield from _template_hash(ctx, unhashed)
    yield from _key_rules(ctx)
    yield from _practice_rules(ctx)
    if ctx.source != "pod" and ctx.hard_defaults and not ctx.system_defaults:
        described = "; ".join(
            f"{d.topology_key} maxSkew {d.max_skew} DoNotSchedule" for d in ctx.hard_defaults
        )
        yield ctx.finding(
            "defaults-invisible-to-autoscaler",
            Severity.WARNING,
            f"{w.pod_spec_path}.topologySpreadConstraints",
            f"the pods set no constraints, so kube-scheduler applies the cluster default "
            f"constraint(s) {described} from its configuration; cluster-autoscaler and "
            "Karpenter simulate scheduling from the pod spec alone and will not add nodes "
            "to satisfy them, so pods can stay Pending",
            "write the constraints into the pod template (with a labelSelector for this "
            "workload) so autoscalers see them",
        )


def _template_hash(ctx: RuleContext, unhashed: Sequence[ConstraintAudit]) -> Iterator[Finding]:
    # One finding per workload: the fix (matchLabelKeys) is the same for every constraint.
    # A rollout can leave pods skewed only when more than one replica remains and some
    # constraint binds: one replica is never skewed, and soft constraints only score.
    replicas = ctx.workload.replicas
    binding = [c for c in unhashed if replicas is None or c.constraint.max_skew < replicas]
    if not binding or (replicas is not None and replicas <= 1):
        return
    hard = any(c.hard for c in binding)
    described = "; ".join(_describe(c) for c in binding)
    yield ctx.finding(
        "missing-pod-template-hash",
        _by_action(hard, Severity.WARNING, Severity.INFO),
        binding[0].field_path,
        f"the {described} constraint(s) count old and new ReplicaSets' pods together, "
        "so during a rolling update the new pods are placed against the old ones' "
        "spread and the old pods' removal leaves the new ones skewed",
        "add matchLabelKeys: [pod-template-hash] so that only the current revision's "
        "pods are counted",
    )


def _key_rules(ctx: RuleContext) -> Iterator[Finding]:
    """Topology keys no node carries by default (without nodes to look at), and keys a
    policy does not allow."""
    if ctx.source != "pod":
        return
    soft = [c for c in ctx.constraints if not c.hard]
    for c in ctx.constraints:
        key = c.constraint.topology_key
        if ctx.allowed_keys is not None and key not in ctx.allowed_keys:
            yield ctx.finding(
                "topology-key-not-allowed",
                Severity.ERROR,
                c.field_path,
                f"topology key {_key_text(key)} is not one of the allowed keys "
                f"({', '.join(sorted(ctx.allowed_keys)) or 'none'})",
                "spread on an allowed key, or add the key to --allowed-topology-keys",
            )
            continue
        if ctx.nodes is not None or well_known_topology_key(key):
            continue
        if ctx.allowed_keys is not None:
            continue  # the policy says nodes carry it
        if c.hard:
            consequence = (
                "unless the nodes are labelled with it by hand, no node is in any domain and "
                "every node is UnschedulableAndUnresolvable: the pods stay Pending"
            )
        else:
            others = [o for o in soft if o is not c]
            consequence = (
                "a node without it is ignored in PodTopologySpread's Score for all of the "
                "pod's ScheduleAnyway constraints, so unless the nodes are labelled with it "
                "by hand this constraint"
                + (f" and the {'; '.join(_describe(o) for o in others)} one(s)" if others else "")
                + " do nothing"
            )
        yield ctx.finding(
            "unknown-topology-key",
            Severity.WARNING,
            c.field_path,
            f"topology key {_key_text(key)} is not a label nodes carry by default "
            f"(topology.kubernetes.io/zone, kubernetes.io/hostname, ...): {consequence}",
            f"use topology.kubernetes.io/zone or kubernetes.io/hostname (the short names "
            f"zone and hostname are not labels), or check with --cluster that the nodes carry "
            f"{_key_text(key)}",
        )


def _spread_by_anti_affinity(pod: Pod | None) -> bool:
    affinity = pod.affinity if pod is not None else None
    return affinity is not None and bool(affinity.pod_anti_affinity_required)


def _practice_rules(ctx: RuleContext) -> Iterator[Finding]:
    """What other linters ask of replicated workloads, with the scheduler's semantics."""
    w = ctx.workload
    if w.kind not in SPREAD_KINDS or w.replicas is None:
        return
    path = f"{w.pod_spec_path}.topologySpreadConstraints"
    if (
        w.replicas >= 2
        and ctx.source != "pod"
        and not ctx.hard_defaults
        and not _spread_by_anti_affinity(w.template)
    ):
        if ctx.system_defaults:
            yield ctx.finding(
                "no-spread",
                Severity.INFO,
                path,
                f"{w.replicas} replicas and no spread of their own: only kube-scheduler's "
                "System defaults spread them (hostname maxSkew 3, zone maxSkew 5, "
                "ScheduleAnyway), which score but never refuse a node, so all replicas "
                "can land in one zone",
                "add topologySpreadConstraints on topology.kubernetes.io/zone and "
                "kubernetes.io/hostname with a labelSelector for this workload",
            )
        else:
            yield ctx.finding(
                "no-spread",
                Severity.WARNING,
                path,
                f"{w.replicas} replicas and nothing spreads them: no topologySpreadConstraints, "
                "no required pod anti-affinity, and the scheduler configuration has no "
                "default constraints, so all replicas can land on one node",
                "add topologySpreadConstraints on topology.kubernetes.io/zone and "
                "kubernetes.io/hostname with a labelSelector for this workload",
            )
    if w.replicas >= 3:
        # The keys as written: constraints of the pod's own are there even uncounted.
        pod = w.counted
        keys = (
            {c.topology_key for c in pod.topology_spread_constraints}
            if ctx.source == "pod" and pod is not None
            else set()
        )
        missing = [k for k in (LABEL_TOPOLOGY_ZONE, LABEL_HOSTNAME) if k not in keys]
        if missing:
            yield ctx.finding(
                "zone-and-hostname-spread",
                Severity.WARNING,
                path,
                f"{w.replicas} replicas without a spread constraint on "
                f"{' and '.join(missing)}: the policy asks workloads of three or more "
                "replicas to spread over both zones and nodes",
                "add topologySpreadConstraints on "
                + " and ".join(missing)
                + " (maxSkew 1; ScheduleAnyway where the zones may not fit the replicas)",
            )


def overlap_rules(ctx: RuleContext) -> Iterator[Finding]:
    """Selectors that also match another workload's pods (lint: the workloads given
    together). A constraint counts those pods; a workload selector fights over them."""
    w = ctx.workload
    if w.template is None or not ctx.siblings:
        return
    own_labels = w.template.labels
    for c in ctx.constraints if ctx.source == "pod" else ():
        selector = c.spec.label_selector
        keys = c.spec.match_label_keys
        if selector is None or LABEL_POD_TEMPLATE_HASH in keys:
            continue  # each revision counts only its own pods
        try:
            written = label_selector_as_selector(selector)
        except SelectorError:
            continue
        if written.empty or not written.matches(own_labels):
            continue
        counted = [
            o.ref
            for o in ctx.siblings
            if o.template is not None
            and written.matches(o.template.labels)
            and all(o.template.labels.get(k) == own_labels.get(k) for k in keys)
        ]
        if counted:
            yield ctx.finding(
                "selector-overlap",
                _by_action(c.hard, Severity.WARNING, Severity.INFO),
                c.field_path,
                f"labelSelector {written} also matches the pods of {_names(counted)}, so the "
                f"{_describe(c)} constraint counts them with this workload's own and spreads "
                "the sum, not this workload",
                "select a label only this workload's pods carry (its selector's labels), or "
                "add matchLabelKeys: [pod-template-hash]",
            )
    workload_selector = w.selector
    if workload_selector is None:
        return
    try:
        selects = label_selector_as_selector(workload_selector)
    except SelectorError:
        return
    claimed = [
        o.ref
        for o in ctx.siblings
        if o.template is not None and not selects.empty and selects.matches(o.template.labels)
    ]
    if claimed:
        yield ctx.finding(
            "selector-overlap",
            Severity.WARNING,
            "spec.selector",
            f"the workload's selector {selects} matches the pod template labels of "
            f"{_names(claimed)}: the controllers count each other's pods, and kube-scheduler's "
            "default spreading, which takes its selector from the workload, spreads them "
            "together",
            "give each workload a selector with a label only its own template carries",
        )


def _mentions(selector: Selector, key: str) -> bool:
    return any(r.key == key for r in selector.requirements or ())


# -- rules that need the number of domains -------------------------------------------------


def spread_feasible(
    replicas: int, zone_sizes: Sequence[int], zone_skew: int, host_skew: int
) -> bool:
    """Whether ``replicas`` pods can sit on nodes grouped in zones of ``zone_sizes`` nodes with
    per-node counts within ``host_skew`` of each other and zone totals within ``zone_skew``.

    Per-node counts in [m, m + host_skew] give a zone of n nodes any total in
    [m·n, (m + host_skew)·n]; zone totals in [L, L + zone_skew]; so the pair of hard
    constraints can hold iff some m, L leave every zone's interval non-empty and the
    intervals' sums bracket ``replicas``.
    """
    sizes = [n for n in zone_sizes if n > 0]
    if not sizes or replicas <= 0:
        return True
    total_nodes = sum(sizes)
    for m in range(replicas // total_nodes + 1):
        for low in range(replicas // len(sizes) + 1):
            lo_sum = hi_sum = 0
            ok = True
            for n in sizes:
                lo = max(m * n, low)
                hi = min((m + host_skew) * n, low + zone_skew)
                if lo > hi:
                    ok = False
                    break
                lo_sum += lo
                hi_sum += hi
            if ok and lo_sum <= replicas <= hi_sum:
                return True
    return False


def _zone_sizes(ctx: RuleContext, zone: ConstraintAudit, host: ConstraintAudit) -> list[int] | None:
    # Hostname domains per zone among the nodes both constraints count.
    if ctx.nodes is not None:
        pod = ctx.workload.counted
        if pod is None:
            return None
        parsed = [c.constraint for c in ctx.constraints if c.hard]
        required = required_node_affinity(pod)
        per_zone: dict[str, set[str]] = {}
        for node in ctx.nodes:
            if not node_labels_match_spread_constraints(node.labels, parsed):
                continue
            if not all(
                c.match_node_inclusion_policies(pod, node, required, ctx.comparison_operators)
                for c in (zone.constraint, host.constraint)
            ):
                continue
            per_zone.setdefault(node.labels[zone.constraint.topology_key], set()).add(
                node.labels[LABEL_HOSTNAME]
            )
        return [len(hosts) for hosts in per_zone.values()]
    zones = ctx.domain_sizes.get(zone.constraint.topology_key)
    hosts = ctx.domain_sizes.get(LABEL_HOSTNAME)
    if not zones or not hosts:
        return None
    return [hosts // zones + (1 if i < hosts % zones else 0) for i in range(zones)]


def _domain_count(ctx: RuleContext, c: ConstraintAudit) -> int | None:
    if c.report is not None:
        return len(c.report.domain_counts)
    return ctx.domain_sizes.get(c.constraint.topology_key)


def domain_rules(ctx: RuleContext) -> Iterator[Finding]:
    """minDomains against the domains that exist; zone and hostname constraints together."""
    w = ctx.workload
    hard = [c for c in ctx.constraints if c.hard]
    for c in hard:
        domains = _domain_count(ctx, c)
        min_domains = c.constraint.min_domains
        if domains == 0 and ctx.nodes is not None:
            # No node is eligible at all: the cause is the pods' node selection or the
            # missing key, not minDomains (which may not even be set).
            yield _no_eligible_nodes(ctx, c)
            continue
        if domains is None or domains >= min_domains:
            continue
        capacity = domains * c.constraint.max_skew
        stuck = w.replicas is not None and w.replicas > capacity
        for_replicas = f" for {w.replicas} replicas" if w.replicas is not None else ""
        yield ctx.finding(
            "min-domains-shortfall",
            Severity.ERROR if stuck else Severity.WARNING,
            c.field_path,
            f"minDomains {min_domains} but only {domains} eligible "
            f"{_short(c.constraint.topology_key)} domain(s): the global minimum is forced to 0, "
            f"so each domain can hold at most maxSkew {c.constraint.max_skew} matching pod(s), "
            f"{capacity} in all{for_replicas}",
            f"lower minDomains to {domains} or add {_short(c.constraint.topology_key)} domains "
            f"(minDomains is meant to make the cluster autoscaler add domains)"
            if domains > 0
            else f"add {_short(c.constraint.topology_key)} domains",
        )
    if w.replicas is None:
        return
    hosts = [c for c in hard if c.constraint.topology_key == LABEL_HOSTNAME]
    zones = [c for c in hard if c.constraint.topology_key != LABEL_HOSTNAME]
    for host in hosts[:1]:
        for zone in zones:
            sizes = _zone_sizes(ctx, zone, host)
            if sizes is None:
                continue
            z, h = zone.constraint.max_skew, host.constraint.max_skew
            if spread_feasible(w.replicas, sizes, z, h):
                continue
            yield ctx.finding(
                "zone-hostname-conflict",
                Severity.ERROR,
                zone.field_path,
                f"{w.replicas} replicas cannot satisfy both {_short(zone.constraint.topology_key)} "
                f"maxSkew {z} and hostname maxSkew {h} (DoNotSchedule) on "
                f"{_short(zone.constraint.topology_key)} domains of "
                f"{', '.join(str(n) for n in sorted(sizes))} node(s): balancing the zones "
                "overloads the nodes of the smallest zone, balancing the nodes unbalances "
                "the zones, so some pods stay Pending",
                "make the domains the same size, raise one maxSkew, or make one of the two "
                "constraints ScheduleAnyway",
            )


# -- rules that need the nodes ---------------------------------------------------------------


def _no_eligible_nodes(ctx: RuleContext, c: ConstraintAudit) -> Finding:
    pod = ctx.workload.counted
    nodes = ctx.nodes or ()
    key = c.constraint.topology_key
    selected = [n for n in nodes if pod is None or required_node_affinity(pod).match(n)]
    if not nodes:
        why = "the cluster has no nodes"
        fix = "give the cluster's Nodes (kubectl get nodes -o yaml) with the other objects"
        consequence = "the pods stay Pending: there is no node to run on"
    elif not selected:
        why = (
            f"none of the {len(nodes)} node(s) matches the pods' nodeSelector and required "
            "node affinity"
        )
        fix = "fix the pods' nodeSelector or node affinity, or label nodes to match it"
        consequence = "NodeAffinity rejects every node and the pods stay Pending"
    elif not any(key in n.labels for n in selected):
        why = f"none of the {len(selected)} node(s) the pods may run on has the label {key}"
        fix = f"label the nodes with {key}, or spread on a key they carry"
        consequence = "every node is UnschedulableAndUnresolvable for the pods"
    else:
        why = "the constraint's node inclusion policies leave out every node that has the key"
        fix = "check nodeAffinityPolicy and nodeTaintsPolicy against the nodes' taints"
        consequence = "every node is UnschedulableAndUnresolvable for the pods"
    return ctx.finding(
        "no-eligible-nodes",
        Severity.ERROR,
        c.field_path,
        f"no {_short(key)} domain is eligible for the {_describe(c)} constraint: {why}, so "
        f"{consequence}",
        fix,
    )


def _blocked(node: Node, pod: Pod, comparison_operators: bool) -> str | None:
    if node.unschedulable and not tolerations_tolerate_taint(
        pod.tolerations, Taint(TAINT_NODE_UNSCHEDULABLE, "NoSchedule"), comparison_operators
    ):
        return "cordoned"
    taint = find_matching_untolerated_taint(
        node.taints, pod.tolerations, do_not_schedule_taints, comparison_operators
    )
    if taint is not None:
        return f"tainted {taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"
    return None


def node_rules(ctx: RuleContext) -> Iterator[Finding]:
    """Nodes missing a topology key; domains wedged by tainted or cordoned nodes."""
    pod = ctx.workload.counted
    if ctx.nodes is None or pod is None or not ctx.constraints:
        return
    required = required_node_affinity(pod)
    # Nodes the pods could otherwise run on: matching their node selection, not cordoned,
    # no untolerated NoSchedule/NoExecute taint (control-plane nodes are not news).
    candidates = [
        n
        for n in ctx.nodes
        if required.match(n) and _blocked(n, pod, ctx.comparison_operators) is None
    ]
    seen: set[str] = set()
    soft = [c for c in ctx.constraints if not c.hard]
    for c in ctx.constraints if not ctx.system_defaults else ():
        key = c.constraint.topology_key
        if key in seen:
            continue
        seen.add(key)
        missing = [n.name for n in candidates if key not in n.labels]
        if not missing:
            continue
        if not c.hard and len(missing) == len(candidates):
            # PreScore ignores every node lacking any soft constraint's key (scoring.go,
            # requireAllTopologies): with the key on no node, every node scores 0 for
            # PodTopologySpread and none of the soft constraints has any effect.
            others = [o for o in soft if o is not c]
            also = f" and the {'; '.join(_describe(o) for o in others)} one(s)" if others else ""
            yield ctx.finding(
                "soft-spread-void",
                Severity.WARNING,
                c.field_path,
                f"none of the {len(candidates)} node(s) the pods may run on has the label "
                f"{key}: PodTopologySpread's Score ignores every node that lacks a "
                f"ScheduleAnyway constraint's key, so the {_describe(c)} constraint{also} "
                "do nothing",
                f"spread on a key the nodes carry, or label them with {key}",
            )
            continue
        if c.hard and not any(key in n.labels for n in candidates):
            continue  # no-eligible-nodes says it
        consequence = (
            "the pod is UnschedulableAndUnresolvable there"
            if c.hard
            else "the soft spread leaves them out of its counts"
        )
        yield ctx.finding(
            "missing-topology-key",
            _by_action(c.hard, Severity.WARNING, Severity.INFO),
            c.field_path,
            f"{len(missing)} of {len(candidates)} node(s) the pods may run on lack the label "
            f"{key} ({_names(missing)}): a node missing any constraint's key drops out of every "
            f"constraint's counts and {consequence}",
            f"label those nodes with {key}, or keep the pods off them with a nodeSelector",
        )
    parsed = [c.constraint for c in ctx.constraints if c.hard]
    for c in ctx.constraints:
        report = c.report
        if (
            not c.hard
            or report is None
            or c.constraint.topology_key == LABEL_HOSTNAME
            or c.constraint.node_taints_policy is not NodeInclusionPolicy.IGNORE
            or len(report.domain_counts) < 2
        ):
            continue
        members: dict[str, list[Node]] = {}
        for node in ctx.nodes:
            if node_labels_match_spread_constraints(
                node.labels, parsed
            ) and c.constraint.match_node_inclusion_policies(
                pod, node, required, ctx.comparison_operators
            ):
                members.setdefault(node.labels[c.constraint.topology_key], []).append(node)
        for domain, count in report.domain_counts.items():
            nodes = members.get(domain, [])
            reasons = [_blocked(n, pod, ctx.comparison_operators) for n in nodes]
            if not nodes or any(r is None for r in reasons) or count != report.global_min:
                continue
            why = sorted({r for r in reasons if r is not None})
            yield ctx.finding(
                "wedged-domain",
                Severity.ERROR,
                c.field_path,
                f"{_short(c.constraint.topology_key)} {domain}: all {len(nodes)} node(s) are "
                f"{' or '.join(why)}, but nodeTaintsPolicy is Ignore, so the domain still "
                f"counts with {count} pod(s) and holds the global minimum at {count}: no domain "
                f"can take more than {count} + maxSkew {c.constraint.max_skew} matching pods",
                "set nodeTaintsPolicy: Honor on the constraint (tainted nodes, cordoned ones "
                "included, then drop out of the counts), or uncordon, untaint or remove the "
                "nodes",
            )


# -- rules on the pods that exist (audit) ---------------------------------------------------


def _domain_of(ctx: RuleContext, pod: Pod, key: str) -> str | None:
    node = next((n for n in ctx.nodes or () if n.name == pod.node_name), None)
    return None if node is None else node.labels.get(key)


def _pinned_by_volumes(ctx: RuleContext, key: str, domains: set[str]) -> dict[str, str]:
    """Pods in ``domains`` with a bound volume that only nodes of their own domain can use
    (its PersistentVolume's node affinity): VolumeBinding sends a replacement, which keeps
    the claim, back to that domain. Pod key -> ``claim -> volume``."""
    objects, nodes = ctx.objects, ctx.nodes
    if objects is None or nodes is None:
        return {}
    pinned: dict[str, str] = {}
    for pod in ctx.workload.pods:
        domain = _domain_of(ctx, pod, key)
        if domain not in domains:
            continue
        for volume in pod.volumes:
            claim_name = volume.claim_for(pod.name)
            claim = (
                None
                if claim_name is None
                else objects.persistent_volume_claim(pod.namespace, claim_name)
            )
            bound = None if claim is None else objects.persistent_volume(claim.spec.volume_name)
            if claim is None or bound is None or bound.node_affinity is None:
                continue
            usable = {n.labels.get(key) for n in nodes if check_node_affinity(bound, n.labels)}
            if usable == {domain}:
                pinned[pod.key] = f"{claim.name} -> {bound.name} in {domain}"
                break
    return pinned


def pod_rules(ctx: RuleContext) -> Iterator[Finding]:
    """Skew of the pods as they sit, and pods Pending because of spread."""
    for c in ctx.constraints:
        report = c.report
        if report is None or report.satisfied:
            continue
        ceiling = report.global_min + report.max_skew
        over = {d: n - ceiling for d, n in report.domain_counts.items() if n > ceiling}
        counts = ", ".join(f"{d}={n}" for d, n in report.domain_counts.items())
        if len(report.domain_counts) > _MAX_DOMAINS_LISTED:
            values = report.domain_counts.values()
            counts = f"{len(values)} domains with {min(values)}..{max(values)} pods"
        where = ", ".join(f"{n} in {d}" for d, n in over.items())
        fix = (
            "delete the excess pods in "
            + ", ".join(over)
            + " so that their replacements go to the least-loaded domains (the descheduler's "
            "RemovePodsViolatingTopologySpreadConstraint does this); scale-downs choose victims "
            "blind to topology"
        )
        pinned = _pinned_by_volumes(ctx, report.topology_key, set(over))
        movable = sum(
            1
            for p in ctx.workload.pods
            if p.key not in pinned and _domain_of(ctx, p, report.topology_key) in over
        )
        if pinned:
            held = "; ".join(f"{pod}: {why}" for pod, why in sorted(pinned.items()))
            if movable < sum(over.values()):
                fix = (
                    "deleting pods does not help here: their volumes pin them to their domain "
                    f"({held}), so a replacement keeps its claim and comes back to it; move the "
                    "data to new claims in the least-loaded domains (restore a snapshot into a "
                    "new claim, then delete the pod and its old claim), or accept the skew"
                )
            else:
                fix += f"; not the pods whose volumes pin them to their domain ({held})"
        yield ctx.finding(
            "skew-over-max",
            _by_action(c.hard, Severity.ERROR, Severity.WARNING),
            c.field_path,
            f"{_short(report.topology_key)} counts {counts}: skew {report.skew} (the largest "
            f"count − global minimum {report.global_min}) is over maxSkew {report.max_skew}; "
            f"pods above {ceiling} per domain: {where}",
            fix,
        )
    spread = [(p, m) for p, m in ctx.pending_messages if "topology spread constraints" in m]
    if spread:
        first_hard = next((c.field_path for c in ctx.constraints if c.hard), None)
        path = first_hard or f"{ctx.workload.pod_spec_path}.topologySpreadConstraints"
        pods = [p for p, _ in spread]
        fix = (
            "free or add capacity in the least-loaded domains, relax maxSkew, or make the "
            "constraint ScheduleAnyway"
        )
        nodes = ctx.nodes or ()
        unlabelled = sorted(
            {
                c.constraint.topology_key
                for c in ctx.constraints
                if c.hard and not any(c.constraint.topology_key in n.labels for n in nodes)
            }
        )
        if unlabelled and "missing required label" in spread[0][1]:
            # No capacity or maxSkew helps a pod whose key no node carries.
            fix = f"label the nodes with {', '.join(unlabelled)}, or spread on a key they carry"
        yield ctx.finding(
            "pending-spread",
            Severity.ERROR,
            path,
            f"{len(spread)} pod(s) Pending ({_names(pods)}): {spread[0][1]}",
            fix,
        )
