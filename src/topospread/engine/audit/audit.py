"""``audit`` and ``lint``: every workload's effective constraints, counts, and findings.

Counting is PodTopologySpread's own: :meth:`PodTopologySpread.constraints_for` picks and
parses the constraints for the workload's next pod (its own, or the cluster defaults of
the profile serving its ``schedulerName``) and :func:`compute_pre_filter_state` counts
matching pods per eligible domain over the snapshot — the code path PreFilter runs — so
an audit can never disagree with the scheduler. Pending pods get the FailedScheduling
message the scheduling loop's attempt gives them (:func:`topospread.engine.loop.attempt`,
as ``simulate`` and ``topospread scheduler`` try pods). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from topospread.engine.audit.checks import (
    ConstraintAudit,
    MisplacedPod,
    RuleContext,
    domain_rules,
    manifest_rules,
    node_rules,
    overlap_rules,
    pod_rules,
)
from topospread.engine.audit.findings import OPT_IN_RULES, Finding, Severity, rank_findings
from topospread.engine.audit.pool_rules import pool_rules
from topospread.engine.audit.workloads import (
    Workload,
    annotation_ignores,
    group_workloads,
    workload_of_manifest,
)
from topospread.engine.cluster import Cluster
from topospread.engine.loop import ListedNominator, attempt, build_frameworks
from topospread.engine.sim.report import constraint_reports
from topospread.engine.sim.result import ConstraintReport, NodeLayout, PlacedPod
from topospread.errors import FieldError
from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.framework.runtime import Framework
from topospread.model.labels import Selector
from topospread.model.objects import (
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    Node,
    Pod,
    ReplicaSet,
    StatefulSet,
    TopologySpreadConstraint,
)
from topospread.model.pools import NodePool
from topospread.model.validation import validate_pod, validate_pod_template, validate_workload_spec
from topospread.model.workloads import CronJob, DaemonSet, Job, ManifestObject
from topospread.plugins import names
from topospread.plugins.podtopologyspread import PodTopologySpread
from topospread.plugins.podtopologyspread.common import Constraint, SelectorError
from topospread.plugins.registry import registry as plugin_registry

__all__ = [
    "AuditReport",
    "LintObject",
    "LintReport",
    "PendingReport",
    "Scope",
    "WorkloadAudit",
    "audit",
    "count_constraints",
    "lint",
    "validation_errors",
]

_DO_NOT_SCHEDULE, _SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
_MAX_EXPLAINED = 20
"""Pending pods explained per workload; pods of one ReplicaSet share one explanation."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Which workloads to audit: namespaces, a label selector on the workload, a name."""

    namespaces: frozenset[str] | None = None
    """None: every namespace."""
    selector: Selector | None = None
    """Matched against the workload's own labels (a bare pod's labels)."""
    kind: str | None = None
    """``Deployment``, ``StatefulSet``... with ``name``; None: any kind."""
    name: str | None = None

    def includes(self, w: Workload) -> bool:
        """Whether ``w`` is in scope."""
        if self.namespaces is not None and w.namespace not in self.namespaces:
            return False
        if self.selector is not None and not self.selector.matches(w.metadata.labels):
            return False
        if self.kind is not None and w.kind != self.kind:
            return False
        return self.name is None or w.name == self.name or self.name in w.extra_names


@dataclass(frozen=True, slots=True)
class PendingReport:
    """A Pending pod and kube-scheduler's FailedScheduling message for it."""

    pod: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{"pod", "message"}``."""
        return {"pod": self.pod, "message": self.message}


@dataclass(frozen=True, slots=True)
class WorkloadAudit:
    """One workload: its pods, its effective constraints as counted, its pending pods."""

    kind: str
    namespace: str
    name: str
    replicas: int | None
    pods: int
    pending: int
    source: str
    """``pod`` (the template's own constraints, counted or, where no scheduler profile
    serves the pod, not), ``defaults`` or ``none``."""
    counted_from: str
    constraints: tuple[ConstraintAudit, ...]
    pending_pods: tuple[PendingReport, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """``Kind/namespace/name``."""
        return f"{self.kind}/{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, object]:
        """The issue's workload shape, plus the counted template and pending pods."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "replicas": self.replicas,
            "pods": self.pods,
            "pending": self.pending,
            "constraintSource": self.source,
            "countedTemplate": self.counted_from,
            "constraints": [c.to_json() for c in self.constraints],
            "pendingPods": [p.to_json() for p in self.pending_pods],
            "notes": list(self.notes),
        }


def _kubernetes_version() -> str:
    # Imported when used, as engine.explain does: the package root imports the edges.
    from topospread import KUBERNETES_VERSION

    return KUBERNETES_VERSION


def _summary(findings: Sequence[Finding]) -> dict[str, int]:
    return {s.value: sum(1 for f in findings if f.severity is s) for s in Severity}


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What ``audit`` found: workloads with their counts, findings most severe first."""

    workloads: tuple[WorkloadAudit, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    layout: tuple[NodeLayout, ...] = ()
    """Nodes in scheduler order with their pods (for pictures)."""
    kubernetes_version: str = field(default_factory=lambda: _kubernetes_version())

    def to_json(self) -> dict[str, object]:
        """``{"kubernetesVersion", "workloads", "findings", "summary", "notes"}``."""
        return {
            "kubernetesVersion": self.kubernetes_version,
            "workloads": [w.to_json() for w in self.workloads],
            "findings": [f.to_json() for f in self.findings],
            "summary": _summary(self.findings),
            "notes": list(self.notes),
        }


# -- counting: the plugin's own code path ------------------------------------------------------


def count_constraints(
    plugin: PodTopologySpread,
    pod: Pod,
    snapshot: Snapshot | None,
    features: Features = Features(),
) -> list[tuple[str, Constraint, ConstraintReport | None]]:
    """The hard then the soft constraints of ``pod`` as the plugin parses them (its own, or
    the defaults), each counted over ``snapshot`` by ``compute_pre_filter_state`` — the
    PreFilter counting — or None without a snapshot.

    Raises :class:`SelectorError` for a selector the plugin cannot convert.
    """
    result: list[tuple[str, Constraint, ConstraintReport | None]] = []
    for action in (_DO_NOT_SCHEDULE, _SCHEDULE_ANYWAY):
        constraints = plugin.constraints_for(pod, action)
        if snapshot is None or not constraints:
            result.extend((action, c, None) for c in constraints)
            continue
        reports = constraint_reports(pod, constraints, action, snapshot, features)
        result.extend((action, c, report) for c, report in zip(constraints, reports, strict=True))
    return result


def _frameworks(
    configuration: SchedulerConfiguration, snapshot: Snapshot, cluster: Cluster, features: Features
) -> dict[str, Framework]:
    handle = Handle(snapshot, cluster.objects, configuration.parallelism)
    served = (p.scheduler_name for p in configuration.profiles)
    nominator = ListedNominator(cluster.nominated_pods, served)
    return build_frameworks(
        configuration, plugin_registry(), handle, features, nominator=nominator or None
    )


def _misplaced(
    w: Workload, report: ConstraintReport, constraint_selector: Selector, nodes: Mapping[str, Node]
) -> tuple[MisplacedPod, ...]:
    ceiling = report.global_min + report.max_skew
    over = {d for d, n in report.domain_counts.items() if n > ceiling}
    result = []
    for pod in w.bound:
        node = nodes.get(pod.node_name)
        if node is None or pod.metadata.deletion_timestamp is not None:
            continue
        domain = node.labels.get(report.topology_key)
        if domain in over and constraint_selector.matches(pod.labels):
            result.append(MisplacedPod(pod.key, node.name, domain))
    return tuple(result)


@dataclass
class _Effective:
    """A workload's effective constraints and where they come from."""

    constraints: list[ConstraintAudit] = field(default_factory=list)
    source: str = "none"
    system_defaults: bool = False
    hard_defaults: tuple[TopologySpreadConstraint, ...] = ()
    notes: list[str] = field(default_factory=list)


def _effective(
    w: Workload,
    plugin: PodTopologySpread,
    pod: Pod,
    snapshot: Snapshot | None,
    nodes: tuple[Node, ...] | None,
    features: Features,
    *,
    audit_pods: bool,
) -> _Effective:
    result = _Effective()
    try:
        counted = count_constraints(plugin, pod, snapshot, features)
    except (SelectorError, ValueError) as exc:
        result.notes.append(f"constraints cannot be parsed: {exc}")
        counted = []
    own = bool(pod.topology_spread_constraints)
    # Rules read the constraints as written (before admission merged matchLabelKeys);
    # the plugin keeps their order, so the k-th constraint of an action is the k-th
    # written one with that whenUnsatisfiable.
    if own:
        written_pod = w.written or w.template or pod
        written = written_pod.topology_spread_constraints
        if len(written) != len(pod.topology_spread_constraints):
            written = pod.topology_spread_constraints
        prefix = f"{w.pod_spec_path}.topologySpreadConstraints"
    else:
        written = plugin.default_constraints
        result.system_defaults = plugin.system_defaulted
        prefix = (
            "(System default constraints)"
            if plugin.system_defaulted
            else "pluginConfig[PodTopologySpread].args.defaultConstraints"
        )
    indices = {
        action: iter([i for i, c in enumerate(written) if c.when_unsatisfiable == action])
        for action in (_DO_NOT_SCHEDULE, _SCHEDULE_ANYWAY)
    }
    node_map = {n.name: n for n in nodes or ()}
    for action, constraint, report in counted:
        index = next(indices[action])
        misplaced: tuple[MisplacedPod, ...] = ()
        if audit_pods and report is not None and not report.satisfied:
            misplaced = _misplaced(w, report, constraint.selector, node_map)
        result.constraints.append(
            ConstraintAudit(
                f"{prefix}[{index}]",
                written[index],
                constraint,
                action == _DO_NOT_SCHEDULE,
                report,
                misplaced,
            )
        )
    # The pod's own constraints are its source even when none could be counted.
    if own:
        result.source = "pod"
    elif result.constraints:
        result.source = "defaults"
    # Hard List defaults matter to autoscalers when they apply: in a cluster, when the
    # plugin derived a selector for the pod; in a manifest, for any controller's pods
    # (their controller's selector is known at run time).
    applies = result.source == "defaults" or (not audit_pods and w.kind != "Pod")
    if not own and not plugin.system_defaulted and applies:
        result.hard_defaults = tuple(
            c for c in plugin.default_constraints if c.when_unsatisfiable == _DO_NOT_SCHEDULE
        )
    return result


def _inspect(
    w: Workload,
    frameworks: Mapping[str, Framework],
    snapshot: Snapshot | None,
    nodes: tuple[Node, ...] | None,
    features: Features,
    *,
    domain_sizes: Mapping[str, int],
    pending: Sequence[PendingReport],
    audit_pods: bool,
    objects: ClusterObjects | None = None,
    allowed_keys: frozenset[str] | None = None,
    siblings: tuple[Workload, ...] = (),
    pools: Sequence[NodePool] = (),
) -> tuple[WorkloadAudit, list[Finding]]:
    pod = w.counted
    effective = _Effective()
    framework = frameworks.get(pod.scheduler_name) if pod is not None else None
    plugin = framework.plugin(names.POD_TOPOLOGY_SPREAD) if framework is not None else None
    if pod is not None and framework is None:
        effective.notes.append(f'no scheduler profile is named "{pod.scheduler_name}": not counted')
        # Not counted, but the constraints are the pod's own all the same: what is missing
        # is a scheduler (unserved-scheduler-name), not a spread (no-spread).
        if pod.topology_spread_constraints:
            effective.source = "pod"
    if pod is not None and isinstance(plugin, PodTopologySpread):
        effective = _effective(w, plugin, pod, snapshot, nodes, features, audit_pods=audit_pods)
    ctx = RuleContext(
        w,
        tuple(effective.constraints),
        effective.source,
        nodes,
        domain_sizes,
        effective.system_defaults,
        effective.hard_defaults,
        tuple((p.pod, p.message) for p in pending),
        features.enable_taint_toleration_comparison_operators,
        objects,
        allowed_keys,
        siblings,
    )
    findings = [
        *manifest_rules(ctx),
        *domain_rules(ctx),
        *node_rules(ctx),
        *overlap_rules(ctx),
        *pool_rules(ctx, pools),
    ]
    if audit_pods:
        findings.extend(pod_rules(ctx))
    result = WorkloadAudit(
        w.kind,
        w.namespace,
        w.name,
        w.replicas,
        len(w.pods),
        len(w.pending),
        effective.source,
        w.counted_from,
        tuple(effective.constraints),
        tuple(pending),
        tuple(effective.notes),
    )
    return result, findings


def _pending_reports(
    w: Workload, frameworks: Mapping[str, Framework]
) -> tuple[list[PendingReport], list[str]]:
    reports: list[PendingReport] = []
    notes: list[str] = []
    by_owner: dict[str, str] = {}
    for pod in w.pending[:_MAX_EXPLAINED]:
        ref = pod.metadata.controller()
        group = f"{ref.kind}/{ref.name}" if ref is not None else pod.key
        message = by_owner.get(group)
        if message is None:
            # The loop's attempt over the cluster as it is (every node visited).
            tried = attempt(frameworks, pod)
            if tried.result is None and tried.gated is None:
                notes.append(f"pod {pod.key} not explained: {tried.message}")
                continue
            message = tried.why_pending or (
                "a node fits now: the pod should be scheduled on its next attempt"
            )
            by_owner[group] = message
        reports.append(PendingReport(pod.key, message))
    if len(w.pending) > _MAX_EXPLAINED:
        notes.append(f"{len(w.pending) - _MAX_EXPLAINED} more pending pod(s) not explained")
    return reports, notes


def _layout(cluster: Cluster, workloads: Sequence[Workload]) -> tuple[NodeLayout, ...]:
    owner: dict[str, tuple[str, str]] = {}
    for w in workloads:
        for pod in w.pods:
            ref = pod.metadata.controller()
            owner[pod.key] = (f"{w.kind}/{w.name}", ref.name if ref is not None else w.name)
    result = []
    by_node: dict[str, list[Pod]] = {}
    for pod in cluster.pods:
        by_node.setdefault(pod.node_name, []).append(pod)
    for node in cluster.nodes:
        pods = tuple(
            PlacedPod(p.name, p.namespace, *owner.get(p.key, ("", p.name)))
            for p in by_node.get(node.name, ())
        )
        result.append(
            NodeLayout(
                node.name,
                node.labels.get(LABEL_TOPOLOGY_ZONE, node.labels.get("zone", "")),
                node.unschedulable,
                tuple(f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.taints),
                pods,
            )
        )
    return tuple(result)


def _keep(f: Finding, ignored: frozenset[str], disabled: frozenset[str]) -> bool:
    return f.rule not in ignored and f.rule not in disabled


def audit(
    objects: Iterable[ManifestObject],
    configuration: SchedulerConfiguration | None = None,
    scope: Scope = Scope(),
    *,
    disabled: frozenset[str] = frozenset(),
    features: Features = Features(),
    enabled: frozenset[str] = frozenset(),
    allowed_keys: frozenset[str] | None = None,
    pools: Sequence[NodePool] = (),
) -> AuditReport:
    """Audit every workload in ``objects`` (a cluster's Nodes, Pods, ReplicaSets,
    Deployments, StatefulSets, DaemonSets, Jobs, Services... as decoded), with
    ``configuration``'s profiles (upstream defaults when None) and within ``scope``.

    Rules in ``disabled`` and in a workload's ``topospread.dev/ignore`` annotation are
    left out. Pending pods are explained with the same cluster (pending pods are not in it).
    """
    configuration = configuration or default_configuration()
    disabled = disabled | (OPT_IN_RULES - enabled)
    objs = list(objects)
    # Everything the scheduler lists (storage and priority classes included); the workload
    # kinds only grouping reads.
    cluster = Cluster.from_objects(
        o for o in objs if not isinstance(o, Deployment | DaemonSet | Job | CronJob)
    )
    snapshot = cluster.snapshot()
    frameworks = _frameworks(configuration, snapshot, cluster, features)
    workloads, notes = group_workloads(objs)
    notes = list(
        dict.fromkeys([*notes, *(n for n in cluster.notes if "pending: not counted" not in n)])
    )
    audited: list[WorkloadAudit] = []
    findings: list[Finding] = []
    for w in workloads:
        if not scope.includes(w):
            continue
        pending, pending_notes = _pending_reports(w, frameworks)
        a, found = _inspect(
            w,
            frameworks,
            snapshot,
            cluster.nodes,
            features,
            domain_sizes={},
            pending=pending,
            audit_pods=True,
            objects=cluster.objects,
            allowed_keys=allowed_keys,
            pools=pools,
        )
        if pending_notes:
            a = replace(a, notes=(*a.notes, *pending_notes))
        audited.append(a)
        ignored = annotation_ignores(w.metadata.annotations)
        findings.extend(f for f in found if _keep(f, ignored, disabled))
    return AuditReport(
        tuple(audited),
        tuple(rank_findings(findings)),
        tuple(notes),
        _layout(cluster, workloads),
    )


# -- lint -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LintObject:
    """A manifest object and where it came from."""

    obj: ManifestObject
    source: str = ""
    line: int | None = None
    """1-based line of the object's document in ``source``."""
    ignored: frozenset[str] = frozenset()
    """Rules silenced by ``# topospread:ignore RULE`` comments in its document."""
    locate: Callable[[str], int | None] | None = None
    """The line of a field path of the object in ``source`` (None: unknown), so that a
    finding points at the constraint it is about rather than the object's first line."""
    refused: tuple[tuple[str, str], ...] = ()
    """(field path, message) of problems the API server reports besides those
    :func:`validation_errors` finds: strict decoding's unknown fields, which refuse the
    object before validation runs, or missing containers."""


@dataclass(frozen=True, slots=True)
class LintReport:
    """What ``lint`` found, most severe first."""

    findings: tuple[Finding, ...]
    checked: tuple[str, ...]
    """``Kind/namespace/name`` of every object checked."""
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    """``FILE[:LINE]: problem`` of each input that could not be read (the rest was linted)."""

    def to_json(self) -> dict[str, object]:
        """``{"findings", "checked", "summary", "notes", "errors"}``."""
        return {
            "kubernetesVersion": _kubernetes_version(),
            "findings": [f.to_json() for f in self.findings],
            "checked": list(self.checked),
            "summary": _summary(self.findings),
            "notes": list(self.notes),
            "errors": list(self.errors),
        }


def _moved(errors: Iterable[FieldError], old: str, new: str) -> list[FieldError]:
    return [
        FieldError(e.type, new + e.field[len(old) :], e.value, e.detail)
        if e.field == old or e.field.startswith(old + ".")
        else e
        for e in errors
    ]


def validation_errors(obj: ManifestObject) -> list[FieldError]:
    """The API server's validation of a workload or pod, paths as in the object itself."""
    if isinstance(obj, Deployment | ReplicaSet | StatefulSet):
        return validate_workload_spec(obj)
    if isinstance(obj, DaemonSet | Job):
        return validate_pod_template(obj.template, obj.selector, "spec.template")
    if isinstance(obj, CronJob):
        errors = validate_pod_template(obj.template, obj.selector, "spec.template")
        return _moved(errors, "spec.template", "spec.jobTemplate.spec.template")
    if isinstance(obj, Pod):
        return validate_pod(obj, create=not obj.metadata.uid)
    return []


def _line(item: LintObject, path: str) -> int | None:
    found = item.locate(path) if item.locate is not None and path else None
    return found if found is not None else item.line


def _with_required(
    errors: list[tuple[str, str]], refused: Sequence[tuple[str, str]], pod_spec: str
) -> list[tuple[str, str]]:
    # validateContainers runs first in ValidatePodSpec: a missing containers list is
    # reported before the template's scheduling fields.
    if not refused:
        return errors
    at = next((n for n, (path, _) in enumerate(errors) if path.startswith(pod_spec)), len(errors))
    return [*errors[:at], *refused, *errors[at:]]


def lint(
    items: Iterable[LintObject],
    configuration: SchedulerConfiguration | None = None,
    *,
    domains: Mapping[str, int] | None = None,
    cluster: Cluster | None = None,
    disabled: frozenset[str] = frozenset(),
    features: Features = Features(),
    enabled: frozenset[str] = frozenset(),
    allowed_keys: frozenset[str] | None = None,
    pools: Sequence[NodePool] = (),
) -> LintReport:
    """Check manifests without running them: the API server's validation, then the rules
    that need no cluster; ``domains`` (topology key -> number of domains) or ``cluster``
    (its nodes and pods) let the domain- and node-dependent rules run too."""
    configuration = configuration or default_configuration()
    disabled = disabled | (OPT_IN_RULES - enabled)
    items = list(items)
    workloads = {
        id(item): workload_of_manifest(item.obj)
        for item in items
        if isinstance(
            item.obj, Deployment | ReplicaSet | StatefulSet | DaemonSet | Job | CronJob | Pod
        )
    }
    # Workloads overlap only within one input (a chart's or kustomization's output):
    # separate files may be separate clusters or environments.
    groups: dict[tuple[str, str], list[Workload]] = {}
    if "selector-overlap" not in disabled:
        for item in items:
            o = workloads.get(id(item))
            if o is not None and not o.excluded and o.kind != "Pod":
                groups.setdefault((item.source, o.namespace), []).append(o)
    kube = cluster if cluster is not None else Cluster()
    snapshot = kube.snapshot() if cluster is not None else None
    frameworks = _frameworks(configuration, kube.snapshot(), kube, features)
    findings: list[Finding] = []
    checked: list[str] = []
    notes: list[str] = []
    for item in items:
        obj = item.obj
        if not isinstance(
            obj, Deployment | ReplicaSet | StatefulSet | DaemonSet | Job | CronJob | Pod
        ):
            continue
        w = workloads[id(item)]
        where = f"{item.source}: " if item.source else ""
        if w.excluded:
            notes.append(f"{where}{w.ref}: {w.excluded}")
            continue
        checked.append(w.ref)
        ignored = item.ignored | annotation_ignores(w.metadata.annotations)
        strict = [(path, message) for path, message in item.refused if "strict decoding" in message]
        errors = strict or _with_required(
            [(e.field, str(e)) for e in validation_errors(obj)], item.refused, w.pod_spec_path
        )
        found = [
            Finding(
                "api-validation",
                Severity.ERROR,
                w.ref,
                path,
                message,
                "change the field as the message says: the API server rejects the object",
            )
            for path, message in errors
        ]
        if not errors:
            found.extend(
                _inspect(
                    w,
                    frameworks,
                    snapshot,
                    kube.nodes if cluster is not None else None,
                    features,
                    domain_sizes=domains or {},
                    pending=(),
                    audit_pods=False,
                    allowed_keys=allowed_keys,
                    siblings=tuple(
                        o for o in groups.get((item.source, w.namespace), ()) if o is not w
                    ),
                    pools=pools,
                )[1]
            )
        findings.extend(
            replace(f, source=item.source, line=_line(item, f.field_path))
            for f in found
            if _keep(f, ignored, disabled)
        )
    return LintReport(tuple(rank_findings(findings)), tuple(checked), tuple(notes))
