"""The end-of-step picture: node layout, pending pods and each workload's spread.

Spread is counted by PodTopologySpread itself — :meth:`PodTopologySpread.constraints_for`
picks and parses the constraints (own or cluster defaults, ``matchLabelKeys`` merged)
and :func:`compute_pre_filter_state` counts matching pods per eligible domain — so the
report can never disagree with what the scheduler saw. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.model.admission import admit_pod
from topospread.model.objects import LABEL_TOPOLOGY_ZONE, Pod
from topospread.plugins import names
from topospread.plugins.podtopologyspread import PodTopologySpread
from topospread.plugins.podtopologyspread.common import Constraint, SelectorError
from topospread.plugins.podtopologyspread.filtering import compute_pre_filter_state

from .controllers import LABEL_CONTROLLER_REVISION_HASH
from .result import ConstraintReport, NodeLayout, PendingPod, PlacedPod, WorkloadSpread
from .state import ClusterState, OwnerKey

__all__ = ["constraint_reports", "layout", "pending_pods", "workload_of", "workload_spreads"]


def workload_of(state: ClusterState, owner: OwnerKey | None) -> tuple[str, str]:
    """(top workload ``Kind/name``, finer group) of a pod's controller."""
    if owner is None:
        return "", ""
    kind, namespace, name = owner
    if kind == "ReplicaSet":
        rs = state.replica_sets.get((namespace, name))
        if rs is not None and rs.owner is not None:
            return f"{rs.owner[0]}/{rs.owner[2]}", name
    return f"{kind}/{name}", name


def layout(state: ClusterState, snapshot: Snapshot) -> tuple[NodeLayout, ...]:
    """Every node in scheduler order with its pods in the order they were bound."""
    nodes = []
    for info in snapshot.node_infos:
        node = info.node
        pods = []
        for pod in info.pods:
            record = state.pods.get(pod.key)
            workload, group = workload_of(state, record.owner if record else None)
            pods.append(PlacedPod(pod.name, pod.namespace, workload, group))
        nodes.append(
            NodeLayout(
                node.name,
                node.labels.get(LABEL_TOPOLOGY_ZONE, node.labels.get("zone", "")),
                node.unschedulable,
                tuple(f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.taints),
                tuple(pods),
            )
        )
    return tuple(nodes)


def pending_pods(
    state: ClusterState, messages: Mapping[str, str], attempts: Mapping[str, int]
) -> tuple[PendingPod, ...]:
    """Pods without a node, in creation order, with their last FailedScheduling message."""
    result = []
    for record in state.pods.values():
        if record.node_name:
            continue
        workload, _ = workload_of(state, record.owner)
        result.append(
            PendingPod(
                record.pod.name,
                record.pod.namespace,
                workload,
                messages.get(record.key, "not attempted yet"),
                attempts.get(record.key, 0),
            )
        )
    return tuple(result)


def _workloads(state: ClusterState) -> list[tuple[str, Pod, str, list[OwnerKey]]]:
    # (label, newest template as a created pod would carry it, which template, owners).
    found: list[tuple[int, str, tuple[str, Pod, str, list[OwnerKey]]]] = []
    for (namespace, name), d in state.deployments.items():
        rss = state.replica_sets_of((namespace, name))
        owners: list[OwnerKey] = [("ReplicaSet", namespace, rs.name) for rs in rss]
        template, which = d.template, "deployment template (no ReplicaSet yet)"
        if rss:
            newest = rss[-1]
            assert newest.obj.template is not None
            template, which = newest.obj.template, f"ReplicaSet {newest.name}"
        found.append(
            (d.created, d.uid, (f"Deployment/{namespace}/{name}", template, which, owners))
        )
    for (namespace, name), rs in state.replica_sets.items():
        if rs.owner is None and rs.obj.template is not None:
            found.append(
                (
                    rs.created,
                    rs.uid,
                    (
                        f"ReplicaSet/{namespace}/{name}",
                        rs.obj.template,
                        f"ReplicaSet {name}",
                        [("ReplicaSet", namespace, name)],
                    ),
                )
            )
    for (namespace, name), ss in state.stateful_sets.items():
        labels = {**ss.template.metadata.labels, LABEL_CONTROLLER_REVISION_HASH: ss.revision}
        template = replace(ss.template, metadata=replace(ss.template.metadata, labels=labels))
        found.append(
            (
                ss.created,
                ss.uid,
                (
                    f"StatefulSet/{namespace}/{name}",
                    template,
                    f"revision {ss.revision}",
                    [("StatefulSet", namespace, name)],
                ),
            )
        )
    # Bare pods with constraints of their own (the docs' incoming pods).
    found.extend(
        (
            r.created,
            r.uid,
            (f"Pod/{r.pod.namespace}/{r.pod.name}", r.pod, f"pod {r.pod.name}", []),
        )
        for r in state.pods.values()
        if r.owner is None and r.pod.topology_spread_constraints
    )
    found.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in found]


def constraint_reports(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    action: str,
    snapshot: Snapshot,
    features: Features,
) -> list[ConstraintReport]:
    """Each constraint's domain counts, global minimum, skew and minDomains shortfall.

    Counted by the plugin's own PreFilter (:func:`compute_pre_filter_state`, with the
    snapshot's incremental counters), so simulate and audit report what the scheduler sees.
    """
    if not constraints:
        return []
    s = compute_pre_filter_state(
        pod,
        snapshot.node_infos,
        constraints,
        node_inclusion_policy=features.enable_node_inclusion_policy_in_pod_topology_spread,
        comparison_operators=features.enable_taint_toleration_comparison_operators,
        snapshot=snapshot,
    )
    reports = []
    for index, c in enumerate(constraints):
        counts = s.tp_value_to_match_num[index]
        global_min = s.min_match_num(index) if counts else 0
        reports.append(
            ConstraintReport(
                topology_key=c.topology_key,
                when_unsatisfiable=action,
                max_skew=c.max_skew,
                min_domains=c.min_domains,
                selector=str(c.selector),
                domain_counts=dict(sorted(counts.items())),
                global_min=global_min,
                skew=(max(counts.values()) - global_min) if counts else 0,
                # minDomains left unset (1) falls short only without any eligible domain,
                # which is the missing domains' doing, not minDomains'.
                min_domains_shortfall=max(0, c.min_domains - len(counts))
                if c.min_domains > 1
                else 0,
            )
        )
    return reports


def workload_spreads(
    state: ClusterState,
    snapshot: Snapshot,
    frameworks: Mapping[str, Framework],
    features: Features,
) -> tuple[WorkloadSpread, ...]:
    """Each workload's hard then soft constraints, counted for its newest template."""
    result = []
    for label, template, which, owners in _workloads(state):
        # Templates are admitted as a created pod would be; a bare pod already was.
        pod = admit_pod(template, state.admission_objects()) if owners else template
        records = [r for owner in owners for r in state.pods_of(owner)]
        if not owners:
            records = [state.pods[pod.key]] if pod.key in state.pods else []
        pending = sum(1 for r in records if not r.node_name)
        framework = frameworks.get(pod.scheduler_name)
        plugin = framework.plugin(names.POD_TOPOLOGY_SPREAD) if framework is not None else None
        reports: list[ConstraintReport] = []
        own = bool(pod.topology_spread_constraints)
        # No profile serves the pod's schedulerName: nothing is counted, but the constraints
        # it carries are its own all the same (what is missing is a scheduler).
        source = "pod" if own and framework is None else "none"
        if isinstance(plugin, PodTopologySpread):
            try:
                hard = plugin.constraints_for(pod, "DoNotSchedule")
                soft = plugin.constraints_for(pod, "ScheduleAnyway")
            except SelectorError:
                hard, soft = (), ()
            reports = [
                *constraint_reports(pod, hard, "DoNotSchedule", snapshot, features),
                *constraint_reports(pod, soft, "ScheduleAnyway", snapshot, features),
            ]
            if own:
                source = "pod"
            elif reports:
                source = "defaults"
        result.append(WorkloadSpread(label, len(records), pending, source, which, tuple(reports)))
    return tuple(result)
