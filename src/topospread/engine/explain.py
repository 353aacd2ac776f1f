"""One scheduling attempt, explained: every node's verdict, the spread arithmetic, scores.

Runs the profile exactly as kube-scheduler's ``schedulePod`` would, with two deliberate
differences that only add information: every node is evaluated (no
percentageOfNodesToScore cut-off) and feasible nodes are scored even when only one
passes. Ties for the best score go to the node kube-scheduler v1.37.1's score heap pops
over the nodes in input order (:func:`~topospread.engine.cycle.upstream_pick`; upstream's
feasible order varies with its parallel Filter workers); ``tie_break="random"`` picks one
with a seeded generator instead, reproducibly; :attr:`Explanation.tied_nodes` lists them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from topospread.engine.cluster import Cluster
from topospread.engine.cycle import CycleResult, fit_error_message, schedule_one
from topospread.engine.loop import ListedNominator
from topospread.errors import InputError, UnsupportedError
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.status import Code, Status
from topospread.model.admission import admit_pod
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.dynamicresources.support import (
    unsupported_reasons as dra_unsupported_reasons,
)
from topospread.plugins.podtopologyspread import PodTopologySpread
from topospread.plugins.podtopologyspread.common import Constraint
from topospread.plugins.podtopologyspread.filtering import (
    PreFilterState,
    SkewCheck,
    check_constraint,
    get_pre_filter_state,
)
from topospread.plugins.podtopologyspread.scoring import PreScoreState, get_pre_score_state
from topospread.plugins.registry import registry as plugin_registry

__all__ = [
    "TIE_BREAKS",
    "Explanation",
    "FilterVerdict",
    "HardConstraintReport",
    "NodeResult",
    "PreemptionReport",
    "SoftConstraintReport",
    "add_nominated_pods",
    "explain",
    "fit_error_message",
]


TIE_BREAKS = ("first", "random")
"""How ``explain`` picks among nodes tied for the best score."""


@dataclass(frozen=True, slots=True)
class FilterVerdict:
    """A node's filtering outcome: the first rejecting plugin and its reasons."""

    code: Code
    plugin: str | None = None
    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, status: Status | None) -> FilterVerdict:
        """From a framework status (None is success)."""
        if status is None:
            return cls(Code.SUCCESS)
        return cls(status.code, status.plugin, status.reasons)

    @property
    def passed(self) -> bool:
        """Whether the node is feasible."""
        return self.code is Code.SUCCESS


@dataclass(frozen=True, slots=True)
class NodeResult:
    """One node's verdict and, if feasible, its scores."""

    name: str
    filter: FilterVerdict
    scores: Mapping[str, int] = field(default_factory=dict)
    """Normalized score (0..100, before weight) per score plugin that did not Skip."""
    total_score: int | None = None
    """Σ score × weight; None for infeasible nodes."""
    raw_scores: Mapping[str, int] = field(default_factory=dict)
    """PodTopologySpread's raw score before normalization, for the explanation."""
    verdicts: Mapping[str, FilterVerdict] = field(default_factory=dict)
    """Every Filter plugin's own verdict on this node, in profile order (kube-scheduler stops
    at the first rejection; this shows the rest too). Empty when PreFilter rejected the pod
    or narrowed this node out; plugins whose PreFilter returned Skip are left out."""


@dataclass(frozen=True, slots=True)
class HardConstraintReport:
    """A DoNotSchedule constraint: its domains, counts and each node's skew arithmetic."""

    constraint: Constraint
    domain_counts: Mapping[str, int]
    """Eligible domain -> matching pods (sorted by domain)."""
    min_match_num: int
    """The global minimum used by Filter."""
    min_forced_to_zero: bool
    """True when eligible domains < minDomains, which forces the global minimum to 0."""
    checks: Mapping[str, SkewCheck]
    """Node name -> the arithmetic for placing the pod there."""


@dataclass(frozen=True, slots=True)
class SoftConstraintReport:
    """A ScheduleAnyway constraint: domain counts of the scored nodes and its weight."""

    constraint: Constraint
    domain_counts: Mapping[str, int]
    weight: float
    size: int
    """Domains (or, for hostname, scored nodes) the weight ln(size + 2) is computed from."""


@dataclass(frozen=True, slots=True)
class PreemptionReport:
    """What DefaultPreemption (the PostFilter) would do when no node fits."""

    nominated_node: str | None
    """The node the pod would be nominated to once the victims are gone, or None."""
    victims: Mapping[str, tuple[str, ...]]
    """Candidate node -> ``namespace/name`` of the pods to evict there, most important
    first (every node where preemption makes room, not only the nominated one)."""
    tied_nodes: tuple[str, ...] = ()
    """Candidates tied after every criterion; kube-scheduler picks one at random."""
    status: Status | None = None
    """The PostFilter status (Success, or why preemption does not help)."""

    def to_json(self) -> dict[str, object]:
        """``{"nominatedNode": ..., "victims": {node: [...]}, "tiedNodes": [...]}``."""
        return {
            "nominatedNode": self.nominated_node,
            "victims": {node: list(pods) for node, pods in self.victims.items()},
            "tiedNodes": list(self.tied_nodes),
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why each node passed or failed, and where the pod would go."""

    pod: Pod
    profile: str
    nodes: tuple[NodeResult, ...]
    selected_node: str | None
    tied_nodes: tuple[str, ...]
    message: str | None
    """kube-scheduler's FailedScheduling message when no node fits, else None."""
    hard_constraints: tuple[HardConstraintReport, ...] = ()
    soft_constraints: tuple[SoftConstraintReport, ...] = ()
    soft_ignored_nodes: tuple[str, ...] = ()
    spread_source: str = "none"
    """``pod`` (own constraints), ``defaults`` (cluster defaults applied) or ``none``."""
    score_weights: Mapping[str, int] = field(default_factory=dict)
    unimplemented: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Extension point -> enabled upstream plugins that topospread does not run yet."""
    notes: tuple[str, ...] = ()
    preemption: PreemptionReport | None = None
    """What preemption would do; None when it did not run (a node fits, or the profile
    has no PostFilter plugin)."""
    nominated_node_shortcut: bool = False
    """The pod's ``status.nominatedNodeName`` passed the filters first, so kube-scheduler
    places it there without scoring (``selected_node``; no node has scores)."""

    def to_json(self) -> dict[str, object]:
        """The documented JSON shape (``explain --output json``)."""
        from topospread import KUBERNETES_VERSION

        return {
            "pod": self.pod.key,
            "kubernetesVersion": KUBERNETES_VERSION,
            "profile": self.profile,
            "nodes": [
                {
                    "name": n.name,
                    "filter": {
                        "code": n.filter.code.label,
                        "plugin": n.filter.plugin,
                        "reasons": list(n.filter.reasons),
                    },
                    "scores": dict(n.scores),
                    "totalScore": n.total_score,
                    "verdicts": {
                        plugin: {"code": v.code.label, "reasons": list(v.reasons)}
                        for plugin, v in n.verdicts.items()
                    },
                }
                for n in self.nodes
            ],
            "selectedNode": self.selected_node,
            "tiedNodes": list(self.tied_nodes),
            "message": self.message,
            "preemption": None if self.preemption is None else self.preemption.to_json(),
            "unimplementedPlugins": {k: list(v) for k, v in self.unimplemented.items()},
            "nominatedNodeShortcut": self.nominated_node_shortcut,
        }


_UNSUPPORTED_CHECKS: tuple[tuple[str, str], ...] = (
    # Claims with structured parameters are decided; what of dynamic resource allocation
    # is not (admin access, device taints, counters, consumable capacity, DRA-backed
    # extended resources...) is named per pod by dynamicresources.unsupported_reasons.
    (names.DYNAMIC_RESOURCES, "the pod needs dynamic resource allocation features"),
)


def _unsupported_reasons(pod: Pod, cluster: Cluster, filters: set[str]) -> list[str]:
    details = {
        names.DYNAMIC_RESOURCES: (
            dra_unsupported_reasons(pod, cluster.objects)
            if names.DYNAMIC_RESOURCES in filters
            else []
        ),
    }
    return [
        f"{why} ({'; '.join(details[plugin])}), which the {plugin} plugin does not decide"
        for plugin, why in _UNSUPPORTED_CHECKS
        if details[plugin] and plugin in filters
    ]


def explain(
    cluster: Cluster,
    pod: Pod,
    configuration: SchedulerConfiguration,
    *,
    registry: Mapping[str, PluginFactory] | None = None,
    features: Features = Features(),
    tie_break: str = "first",
    seed: int = 0,
) -> Explanation:
    """Run one scheduling attempt of ``pod`` on ``cluster`` and explain every decision.

    ``tie_break``: ``"first"`` selects the first of the best-scored nodes in input order;
    ``"random"`` one of them drawn with ``random.Random(seed)``.

    Raises :class:`InputError` when no profile serves the pod's schedulerName and
    :class:`UnsupportedError` when the answer depends on a plugin topospread lacks.
    """
    pod, cluster, bound_notes = _as_unscheduled(pod, cluster)
    # The pod as the API server stores it, like the cluster's pods (issue 12).
    pod = admit_pod(pod, cluster.admission)
    profile = next(
        (p for p in configuration.profiles if p.scheduler_name == pod.scheduler_name), None
    )
    if profile is None:
        known = ", ".join(f'"{p.scheduler_name}"' for p in configuration.profiles)
        raise InputError(
            "",
            message=f'no profile has schedulerName "{pod.scheduler_name}" '
            f"(profiles: {known}); kube-scheduler would ignore this pod",
        )
    if pod.scheduling_gates:
        raise UnsupportedError(
            f"pod {pod.key} has scheduling gates ({', '.join(pod.scheduling_gates)}): "
            "kube-scheduler does not attempt to schedule it until they are removed"
        )
    snapshot = cluster.snapshot()
    handle = Handle(snapshot, cluster.objects, configuration.parallelism)
    framework = Framework(
        profile, registry if registry is not None else plugin_registry(), handle, features
    )
    add_nominated_pods(framework, cluster, configuration)
    unsupported = _unsupported_reasons(pod, cluster, set(framework.plugins_at("filter")))
    if unsupported:
        raise UnsupportedError(
            f"cannot explain pod {pod.key}: " + "; ".join(unsupported) + " (not implemented yet)"
        )

    cycle = schedule_one(framework, pod)
    state = cycle.state
    raw_spread: dict[str, int] = {}
    spread = framework.plugin(names.POD_TOPOLOGY_SPREAD)
    if (
        cycle.scores
        and isinstance(spread, PodTopologySpread)
        and names.POD_TOPOLOGY_SPREAD not in state.skip_score_plugins
    ):
        for info in cycle.feasible:
            raw_spread[info.name] = spread.score(state, pod, info)[0]
    idle = _idle_scores(framework, features)
    nodes = tuple(
        NodeResult(
            name=info.name,
            filter=FilterVerdict.of(cycle.statuses.get(info.name)),
            scores=({**cycle.scores[info.name], **idle} if info.name in cycle.scores else {}),
            total_score=cycle.totals.get(info.name),
            raw_scores=(
                {names.POD_TOPOLOGY_SPREAD: raw_spread[info.name]}
                if info.name in raw_spread
                else {}
            ),
            verdicts=_every_verdict(framework, cycle, pod, info),
        )
        for info in snapshot.node_infos
    )
    selected, tied, message = cycle.selected_node, tuple(cycle.tied_nodes), cycle.message
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, not {tie_break!r}")
    if tie_break == "random" and len(tied) > 1:
        selected = random.Random(seed).choice(tied)
    return Explanation(
        pod=pod,
        profile=profile.scheduler_name,
        nodes=nodes,
        selected_node=selected,
        tied_nodes=tied,
        message=message,
        hard_constraints=_hard_reports(state, pod, snapshot.node_infos),
        soft_constraints=_soft_reports(state),
        soft_ignored_nodes=_soft_ignored(state),
        spread_source=_spread_source(pod, framework),
        score_weights=dict(framework.score_weights),
        unimplemented={k: tuple(v) for k, v in framework.unimplemented.items()},
        notes=(*bound_notes, *cluster.notes, *_nominated_note(pod, cycle)),
        preemption=_preemption_report(cycle),
        nominated_node_shortcut=cycle.nominated_node_shortcut,
    )


def add_nominated_pods(
    framework: Framework, cluster: Cluster, configuration: SchedulerConfiguration
) -> None:
    """Give ``framework`` the scheduling queue's nominator: the cluster's pending nominated
    pods of this scheduler's profiles (``responsibleForPod``), per nominated node, in input
    order (the bulk search re-checks those nodes with them)."""
    served = (p.scheduler_name for p in configuration.profiles)
    nominator = ListedNominator(cluster.nominated_pods, served)
    if nominator:
        framework.nominated_pods_for_node = nominator.nominated_pods_for_node
        framework.nominated_node_names = nominator.nominated_node_names


NOMINATED_NOTE = (
    "the pod is nominated to node {node} (status.nominatedNodeName) and fits there: "
    "kube-scheduler tries that node first and places the pod on it without scoring"
)


def _as_unscheduled(pod: Pod, cluster: Cluster) -> tuple[Pod, Cluster, tuple[str, ...]]:
    """A pod read from the cluster it is explained on (``kubectl get pod -o yaml`` beside
    a capture: the same uid among the cluster's pods) is explained as if it were being
    scheduled now, on the cluster without its own copy, which would otherwise count for
    its spread, affinity and resources, as ``explain pod/NAME`` reads a live cluster. A
    bound one loses ``spec.nodeName``, with a note. A pod of its own (a manifest, no such
    copy) keeps its ``spec.nodeName``: the NodeName plugin reads it as the node asked for.
    """
    uid = pod.metadata.uid
    if not uid or not any(
        p.metadata.uid == uid
        for p in (*cluster.pods, *cluster.pending_pods, *cluster.nominated_pods)
    ):
        return pod, cluster, ()
    cluster = replace(
        cluster,
        pods=tuple(p for p in cluster.pods if p.metadata.uid != uid),
        pending_pods=tuple(p for p in cluster.pending_pods if p.metadata.uid != uid),
        nominated_pods=tuple(p for p in cluster.nominated_pods if p.metadata.uid != uid),
    )
    if not pod.node_name:
        return pod, cluster, ()
    note = (
        f"pod {pod.key} is already bound to {pod.node_name}; explaining where it would be "
        "placed if scheduled now"
    )
    return replace(pod, node_name=""), cluster, (note,)


def _nominated_note(pod: Pod, cycle: CycleResult) -> tuple[str, ...]:
    if not cycle.nominated_node_shortcut:
        return ()
    return (NOMINATED_NOTE.format(node=pod.nominated_node_name),)


def _preemption_report(cycle: CycleResult) -> PreemptionReport | None:
    if not cycle.post_filter_ran:
        return None
    post = cycle.post_filter
    victims = {} if post is None else post.victims
    return PreemptionReport(
        nominated_node=cycle.nominated_node,
        victims={node: tuple(p.key for p in pods) for node, pods in victims.items()},
        tied_nodes=() if post is None else post.tied_nodes,
        status=cycle.post_filter_status,
    )


def _idle_scores(framework: Framework, features: Features) -> dict[str, int]:
    """The unimplemented score plugins that upstream runs and that score 0 on every node for
    the pods explain accepts (none today: DynamicResources, which has no PreScore, scores
    itself, 0 without ``firstAvailable`` requests)."""
    idle = {names.DYNAMIC_RESOURCES: True}
    return {name: 0 for name in framework.unimplemented.get("score", ()) if idle.get(name)}


def _every_verdict(
    framework: Framework, cycle: CycleResult, pod: Pod, info: NodeInfo
) -> dict[str, FilterVerdict]:
    # Filters only read the cycle state, so asking each one after the cycle is safe; an
    # early PreFilter rejection leaves later plugins without state, so nothing is asked.
    pre = cycle.pre_filter
    if pre.status is not None:
        return {}
    if (
        pre.result is not None
        and pre.result.node_names is not None
        and info.name not in pre.result.node_names
    ):
        return {}
    verdicts = {}
    for plugin in framework.filter_plugins:
        if plugin.name in cycle.state.skip_filter_plugins:
            continue
        status = plugin.filter(cycle.state, pod, info)
        verdicts[plugin.name] = FilterVerdict.of(
            None if status is None else status.with_plugin(plugin.name)
        )
    return verdicts


def _spread_source(pod: Pod, framework: Framework) -> str:
    if pod.topology_spread_constraints:
        return "pod"
    spread = framework.plugin(names.POD_TOPOLOGY_SPREAD)
    if isinstance(spread, PodTopologySpread) and spread.default_constraints:
        return "defaults"
    return "none"


def _hard_reports(
    state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]
) -> tuple[HardConstraintReport, ...]:
    try:
        s: PreFilterState = get_pre_filter_state(state)
    except StateNotFoundError:
        return ()
    reports = []
    for index, constraint in enumerate(s.constraints):
        counts = s.tp_value_to_match_num[index]
        reports.append(
            HardConstraintReport(
                constraint=constraint,
                domain_counts=dict(sorted(counts.items())),
                min_match_num=s.min_match_num(index),
                min_forced_to_zero=len(counts) < constraint.min_domains,
                checks={
                    info.name: check_constraint(s, index, pod, info.node) for info in node_infos
                },
            )
        )
    return tuple(reports)


def _soft_reports(state: CycleState) -> tuple[SoftConstraintReport, ...]:
    try:
        s: PreScoreState = get_pre_score_state(state)
    except StateNotFoundError:
        return ()
    return tuple(
        SoftConstraintReport(
            constraint=constraint,
            domain_counts=dict(sorted(s.topology_value_to_pod_counts[index].items())),
            weight=s.topology_normalizing_weight[index],
            size=s.topology_sizes[index],
        )
        for index, constraint in enumerate(s.constraints)
    )


def _soft_ignored(state: CycleState) -> tuple[str, ...]:
    try:
        return tuple(sorted(get_pre_score_state(state).ignored_nodes))
    except StateNotFoundError:
        return ()
