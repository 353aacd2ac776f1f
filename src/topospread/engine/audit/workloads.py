"""Which workload each pod belongs to, and which pod stands for a workload's next pod.

Pods are matched to workloads through controller ownerReferences, followed upwards
through the objects given (Pod → ReplicaSet → Deployment, Pod → Job → CronJob). A
Deployment is counted for the template of its newest ReplicaSet (highest
``deployment.kubernetes.io/revision``), as a pod it creates next carries that
ReplicaSet's ``pod-template-hash`` label; a StatefulSet for the revision of its highest
ordinal (StatefulSets roll from the highest ordinal down). The template becomes a pod as
the API server would admit it (:func:`topospread.model.admission.admit_pod`:
``matchLabelKeys`` merged into selectors, DefaultTolerationSeconds), with a controller
reference, so cluster default constraints derive their selector as for a real pod.
Pods without a controller are grouped by namespace and labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from topospread.model.admission import UNKNOWN_ADMISSION_OBJECTS, AdmissionObjects, admit_pod
from topospread.model.objects import (
    Deployment,
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
    StatefulSet,
)
from topospread.model.workloads import (
    CronJob,
    DaemonSet,
    Job,
    ManifestObject,
    TemplatedWorkload,
    pod_spec_path,
)

__all__ = [
    "ANNOTATION_IGNORE",
    "LABEL_POD_TEMPLATE_HASH",
    "Workload",
    "group_workloads",
    "workload_of_manifest",
]

LABEL_POD_TEMPLATE_HASH: Final = "pod-template-hash"
LABEL_CONTROLLER_REVISION_HASH: Final = "controller-revision-hash"
ANNOTATION_REVISION: Final = "deployment.kubernetes.io/revision"
ANNOTATION_IGNORE: Final = "topospread.dev/ignore"
"""``RULE[,RULE]``: rules silenced on an object."""

_API_VERSIONS: Final = {
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
_TERMINAL: Final = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload and what the scheduler sees of it."""

    kind: str
    namespace: str
    name: str
    metadata: ObjectMeta
    """The workload object's metadata (a bare pod group: its first pod's)."""
    template: Pod | None
    """The pod template as written (not admitted), or a bare pod as read."""
    counted: Pod | None
    """The pod the spread is counted for: the workload's next pod as the API server
    would store it (a stored pod is used as is)."""
    counted_from: str
    """Which template was counted: ``ReplicaSet web-5d8f``, ``deployment template (no
    ReplicaSet yet)``, ``revision web-7c9``, ``pod web-0``..."""
    replicas: int | None
    """Desired pods (``spec.replicas``, a Job's ``parallelism``); None when unknown."""
    rolling_update: bool = False
    """A Deployment with ``strategy.type: RollingUpdate`` (the default)."""
    pods: tuple[Pod, ...] = ()
    """Its existing, non-terminal pods, in input order."""
    excluded: str = ""
    """Why the workload is not audited (DaemonSets), or ``""``."""
    extra_names: tuple[str, ...] = field(default=())
    """Other bare pods grouped with the first (same namespace and labels)."""
    written: Pod | None = None
    """The counted template as written, before admission (``template`` when None)."""
    selector: LabelSelector | None = None
    """The workload's ``spec.selector``; None for pods, CronJobs and unknown owners."""

    @property
    def ref(self) -> str:
        """``Kind/namespace/name``."""
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def pod_spec_path(self) -> str:
        """``spec.template.spec``, ``spec.jobTemplate.spec.template.spec`` or ``spec``."""
        return pod_spec_path(self.kind)

    @property
    def bound(self) -> tuple[Pod, ...]:
        """Pods with a node."""
        return tuple(p for p in self.pods if p.node_name)

    @property
    def pending(self) -> tuple[Pod, ...]:
        """Pods without a node."""
        return tuple(p for p in self.pods if not p.node_name)


def _key(namespace: str, name: str) -> tuple[str, str]:
    return namespace, name


def _owner(kind: str, name: str, uid: str) -> OwnerReference:
    return OwnerReference(_API_VERSIONS.get(kind, "apps/v1"), kind, name, uid, True)


def next_pod(
    template: Pod,
    namespace: str,
    name: str,
    owner: OwnerReference | None,
    admission: AdmissionObjects = UNKNOWN_ADMISSION_OBJECTS,
) -> Pod:
    """A template as the pod its controller would create next, after admission over the
    LimitRanges, RuntimeClasses and PriorityClasses known (none, for bare manifests)."""
    meta = replace(
        template.metadata,
        name=name,
        namespace=namespace,
        owner_references=(owner,) if owner is not None else (),
    )
    return admit_pod(replace(template, metadata=meta, node_name=""), admission)


def _revision(rs: ReplicaSet) -> int:
    value = rs.metadata.annotations.get(ANNOTATION_REVISION, "")
    return int(value) if value.isdigit() else -1


def _ordinal(pod: Pod, set_name: str) -> int:
    suffix = pod.name[len(set_name) + 1 :]
    return int(suffix) if pod.name.startswith(set_name + "-") and suffix.isdigit() else -1


def _replicas(obj: TemplatedWorkload) -> int | None:
    if isinstance(obj, Job | CronJob):
        return 1 if obj.parallelism is None else obj.parallelism
    if isinstance(obj, DaemonSet):
        return None
    return 1 if obj.replicas is None else obj.replicas


def workload_of_manifest(
    obj: TemplatedWorkload | Pod, admission: AdmissionObjects = UNKNOWN_ADMISSION_OBJECTS
) -> Workload:
    """A workload from a manifest alone (no ReplicaSets, no pods): what ``lint`` inspects."""
    meta = obj.metadata
    if isinstance(obj, Pod):
        stored = obj if obj.metadata.uid else admit_pod(obj, admission)
        return Workload(
            "Pod", meta.namespace, meta.name, meta, obj, stored, f"pod {meta.name}", None
        )
    kind = type(obj).__name__
    template = obj.template
    counted: Pod | None = None
    if template is not None and not isinstance(obj, DaemonSet):
        owner_kind = "ReplicaSet" if isinstance(obj, Deployment) else kind
        if isinstance(obj, CronJob):
            owner_kind = "Job"
        counted = next_pod(
            template,
            meta.namespace,
            f"{meta.name}-new",
            _owner(owner_kind, meta.name, meta.uid),
            admission,
        )
    return Workload(
        kind,
        meta.namespace,
        meta.name,
        meta,
        template,
        counted,
        f"{kind.lower()} template",
        _replicas(obj),
        rolling_update=isinstance(obj, Deployment) and obj.strategy.type == "RollingUpdate",
        excluded=_DAEMONSET_NOTE if isinstance(obj, DaemonSet) else "",
        selector=None if isinstance(obj, CronJob | Job) else obj.selector,
    )


_DAEMONSET_NOTE: Final = (
    "a DaemonSet runs one pod per eligible node and topology spread does not apply; skipped"
)


def group_workloads(objects: Iterable[ManifestObject]) -> tuple[list[Workload], list[str]]:
    """Every workload with its pods, in input order, and notes on what was left out."""
    objs = list(objects)
    # The inputs' LimitRanges and RuntimeClasses shape the pods a template makes; a capture
    # may lack the PriorityClasses its pods name, so priority is left as written.
    admission = replace(AdmissionObjects.of(objs), complete=False)
    notes: list[str] = []
    controllers: dict[tuple[str, str, str], TemplatedWorkload] = {}
    for obj in objs:
        if isinstance(obj, Deployment | ReplicaSet | StatefulSet | DaemonSet | Job | CronJob):
            meta = obj.metadata
            controllers[(type(obj).__name__, meta.namespace, meta.name)] = obj

    def top(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
        # Follow controller references upwards while the owner is in the input.
        seen: set[tuple[str, str, str]] = set()
        key = (kind, namespace, name)
        while key in controllers and key not in seen:
            seen.add(key)
            ref = controllers[key].metadata.controller()
            if ref is None or (ref.kind, namespace, ref.name) not in controllers:
                return key
            key = (ref.kind, namespace, ref.name)
        return key

    pods_of: dict[tuple[str, str, str], list[Pod]] = {}
    bare: dict[tuple[str, tuple[tuple[str, str], ...]], list[Pod]] = {}
    for obj in objs:
        if not isinstance(obj, Pod):
            continue
        if obj.phase in _TERMINAL:
            notes.append(f"pod {obj.key} is {obj.phase}: not counted")
            continue
        ref = obj.metadata.controller()
        if ref is None:
            bare.setdefault((obj.namespace, tuple(sorted(obj.labels.items()))), []).append(obj)
            continue
        pods_of.setdefault(top(ref.kind, obj.namespace, ref.name), []).append(obj)

    # ReplicaSets owned by a Deployment in the input, newest revision last.
    replica_sets: dict[tuple[str, str], list[ReplicaSet]] = {}
    for obj in objs:
        if isinstance(obj, ReplicaSet):
            ref = obj.metadata.controller()
            if ref is not None and ref.kind == "Deployment":
                owner = ("Deployment", obj.metadata.namespace, ref.name)
                if owner in controllers:
                    replica_sets.setdefault(owner[1:], []).append(obj)

    workloads: list[Workload] = []
    for (kind, namespace, name), obj in controllers.items():
        if top(kind, namespace, name) != (kind, namespace, name):
            continue
        pods = tuple(pods_of.pop((kind, namespace, name), ()))
        base = workload_of_manifest(obj, admission)
        if base.excluded:
            notes.append(f"{base.ref}: {base.excluded}")
            continue
        counted, counted_from, written = base.counted, base.counted_from, base.template
        if isinstance(obj, Deployment):
            owned = sorted(
                enumerate(replica_sets.get((namespace, name), [])),
                key=lambda item: (_revision(item[1]), item[0]),
            )
            if owned and owned[-1][1].template is not None:
                newest = owned[-1][1]
                assert newest.template is not None
                rs_ref = _owner("ReplicaSet", newest.metadata.name, newest.metadata.uid)
                counted = next_pod(
                    newest.template, namespace, f"{newest.metadata.name}-new", rs_ref, admission
                )
                counted_from = f"ReplicaSet {newest.metadata.name}"
                written = newest.template
            else:
                counted_from = "deployment template (no ReplicaSet yet)"
        elif isinstance(obj, ReplicaSet):
            counted_from = f"ReplicaSet {name}"
        elif isinstance(obj, StatefulSet) and obj.template is not None:
            ranked = sorted(
                (p for p in pods if _ordinal(p, name) >= 0), key=lambda p: _ordinal(p, name)
            )
            revision = ranked[-1].labels.get(LABEL_CONTROLLER_REVISION_HASH) if ranked else None
            if revision is not None:
                labels = {**obj.template.metadata.labels, LABEL_CONTROLLER_REVISION_HASH: revision}
                template = replace(
                    obj.template, metadata=replace(obj.template.metadata, labels=labels)
                )
                ss_ref = _owner("StatefulSet", name, obj.metadata.uid)
                counted = next_pod(template, namespace, f"{name}-new", ss_ref, admission)
                counted_from = f"revision {revision}"
            else:
                counted_from = "statefulset template"
        workloads.append(
            replace(base, counted=counted, counted_from=counted_from, pods=pods, written=written)
        )

    # Pods whose controller is not in the input: one workload per controller, counted
    # for its first pod as stored (pods read back from a cluster are already admitted).
    for (kind, namespace, name), pods_list in pods_of.items():
        first = pods_list[0]
        counted = first if first.metadata.uid else admit_pod(first, admission)
        workloads.append(
            Workload(
                kind,
                namespace,
                name,
                ObjectMeta(name, namespace, labels=first.labels),
                first,
                counted,
                f"pod {first.name} ({kind} {name} not in the input)",
                None,
                pods=tuple(pods_list),
            )
        )
    for (namespace, _), pods_list in bare.items():
        first = pods_list[0]
        counted = first if first.metadata.uid else admit_pod(first, admission)
        workloads.append(
            Workload(
                "Pod",
                namespace,
                first.name,
                first.metadata,
                first,
                counted,
                f"pod {first.name}",
                len(pods_list),
                pods=tuple(pods_list),
                extra_names=tuple(p.name for p in pods_list[1:]),
            )
        )
    return workloads, notes


def annotation_ignores(annotations: Mapping[str, str]) -> frozenset[str]:
    """Rules silenced by the ``topospread.dev/ignore`` annotation."""
    raw = annotations.get(ANNOTATION_IGNORE, "")
    return frozenset(part.strip() for part in raw.split(",") if part.strip())
