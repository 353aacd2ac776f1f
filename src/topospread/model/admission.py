"""What kube-apiserver v1.37.1 does to a pod or claim before it stores it, as one function.

kube-scheduler only sees stored objects. A pod read from a cluster has been through the API
server; a pod in a manifest, or one the simulator's controllers create, has not. :func:`admit_pod`
turns the latter into what the API server would store, in the API server's order
(``pkg/kubeapiserver/options/plugins.go``, ``AllOrderedPlugins``; the handler runs every
mutating plugin, then the registry's ``PrepareForCreate``, then every validating plugin):

1. decoding's ``SetDefaults_Pod`` (:func:`~topospread.model.defaulting.default_pod`; it runs
   on every decode, so stored pods get it too);
2. the default-on mutating admission plugins that change what the scheduler reads:

   * **LimitRanger** (``plugin/pkg/admission/limitranger``): each LimitRange of the pod's
     namespace, in input order, gives every container and init container the ``Container``
     item's ``default`` limits and ``defaultRequest`` requests it does not set;
   * **Priority** (:func:`~topospread.model.priorityclass.resolve_priority`):
     ``spec.priority`` and ``spec.preemptionPolicy`` from the pod's PriorityClass, the
     global default or 0; a pod that writes a different value is refused;
   * **DefaultTolerationSeconds**: ``node.kubernetes.io/not-ready`` and
     ``node.kubernetes.io/unreachable`` ``NoExecute`` tolerations for 300 s, unless the pod
     already tolerates the taint;
   * **RuntimeClass**: the class named by ``spec.runtimeClassName`` sets ``spec.overhead``
     from ``overhead.podFixed`` and merges ``scheduling.nodeSelector`` (a conflicting key
     is refused) and ``scheduling.tolerations`` (``MergeTolerations``) into the pod;

3. the pod strategy's ``PrepareForCreate``
   (:func:`~topospread.model.defaulting.prepare_for_create`: ``matchLabelKeys`` merged,
   pod-level requests defaulted from the containers' requests LimitRanger may have set);
4. the validating halves: LimitRanger's ``min``, ``max`` and ``maxLimitRequestRatio`` of
   ``Container`` and ``Pod`` items, RuntimeClass's overhead check.

A refusal raises :class:`~topospread.errors.InputError` with the API server's words
(``pods "NAME" is forbidden: ...``). Stored pods (with ``metadata.uid``) only get step 1.
A PersistentVolumeClaim gets **DefaultStorageClass** (:func:`admit_claim`).

Where upstream's order is a cache's order (several LimitRanges of one namespace setting the
same default, or the plugin's live lookup when the informer has none), input order is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from fractions import Fraction
from typing import Final

from topospread.errors import InputError
from topospread.model.defaulting import default_pod, prepare_for_create
from topospread.model.objects import (
    Container,
    LimitRange,
    ObjectMeta,
    Pod,
    PriorityClass,
    ResourceList,
    RuntimeClass,
    Toleration,
)
from topospread.model.priorityclass import resolve_priority
from topospread.model.quantity import Quantity, quantity_text
from topospread.model.storage import (
    BETA_STORAGE_CLASS_ANNOTATION,
    PersistentVolumeClaim,
    StorageClass,
)

__all__ = [
    "ANNOTATION_DEFAULT_STORAGE_CLASS",
    "ANNOTATION_LIMIT_RANGER",
    "DEFAULT_TOLERATION_SECONDS",
    "NO_ADMISSION_OBJECTS",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "UNKNOWN_ADMISSION_OBJECTS",
    "AdmissionObjects",
    "admit_claim",
    "admit_pod",
    "default_storage_class",
    "default_toleration_seconds",
]

TAINT_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS: Final = 300
"""``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``."""
ANNOTATION_LIMIT_RANGER: Final = "kubernetes.io/limit-ranger"
ANNOTATION_DEFAULT_STORAGE_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
_ANNOTATION_BETA_DEFAULT_STORAGE_CLASS: Final = "storageclass.beta.kubernetes.io/is-default-class"
_NO_EXECUTE: Final = "NoExecute"


@dataclass(frozen=True, slots=True)
class AdmissionObjects:
    """The objects the admission plugins read, from the same inputs as the pods."""

    priority_classes: tuple[PriorityClass, ...] = ()
    """Besides the two system classes every API server has."""
    limit_ranges: tuple[LimitRange, ...] = ()
    runtime_classes: tuple[RuntimeClass, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    complete: bool = True
    """Whether these are all the cluster has. ``lint`` on bare manifests knows none: there
    a pod's PriorityClass is not resolved and a RuntimeClass it names but the inputs lack
    is taken as one that exists, whose changes are unknown."""

    @classmethod
    def of(cls, objects: Iterable[object]) -> AdmissionObjects:
        """The admission objects among ``objects``, in input order."""
        items = tuple(objects)
        return cls(
            tuple(o for o in items if isinstance(o, PriorityClass)),
            tuple(o for o in items if isinstance(o, LimitRange)),
            tuple(o for o in items if isinstance(o, RuntimeClass)),
            tuple(o for o in items if isinstance(o, StorageClass)),
        )


NO_ADMISSION_OBJECTS: Final = AdmissionObjects()
"""A cluster with no PriorityClasses (but the system ones), LimitRanges, RuntimeClasses
or StorageClasses."""
UNKNOWN_ADMISSION_OBJECTS: Final = AdmissionObjects(complete=False)
"""Nothing known of the cluster's admission objects (``lint`` on manifests)."""


def admit_pod(pod: Pod, objects: AdmissionObjects = NO_ADMISSION_OBJECTS) -> Pod:
    """The pod as the API server stores it (see the module docstring).

    Raises :class:`InputError` with the API server's words where it refuses the pod.
    """
    pod = default_pod(pod)
    if pod.metadata.uid:
        return pod
    ranges = tuple(r for r in objects.limit_ranges if r.namespace == pod.namespace)
    runtime_class = _runtime_class(pod, objects)
    pod = _limit_ranger_admit(pod, ranges)
    if objects.complete:
        pod = resolve_priority(pod, objects.priority_classes)
    pod = default_toleration_seconds(pod)
    pod = _runtime_class_admit(pod, runtime_class)
    pod = prepare_for_create(pod)
    _limit_ranger_validate(pod, ranges)
    _runtime_class_validate(pod, runtime_class)
    return pod


def _forbidden(pod: Pod, why: str) -> InputError:
    return InputError("", message=f'pods "{pod.name}" is forbidden: {why}')


# -- LimitRanger ----------------------------------------------------------------------------------


def _limit_ranger_admit(pod: Pod, ranges: Sequence[LimitRange]) -> Pod:
    # PodMutateLimitFunc per LimitRange: its Container items' defaults (later items of one
    # LimitRange overwrite earlier ones, defaultContainerResourceRequirements), then each
    # container keeps what it sets (mergeContainerResources).
    notes: list[str] = []
    containers, init_containers = pod.containers, pod.init_containers
    for limit_range in ranges:
        limits: dict[str, Quantity] = {}
        requests: dict[str, Quantity] = {}
        for item in limit_range.limits:
            if item.type == "Container":
                requests.update(item.default_request)
                limits.update(item.default)
        if not limits and not requests:
            continue
        note: list[str] = []
        containers = tuple(_default_container(c, limits, requests, "container", note)
                           for c in containers)  # fmt: skip
        init_containers = tuple(_default_container(c, limits, requests, "init container", note)
                                for c in init_containers)  # fmt: skip
        notes.extend(note)
    if containers is pod.containers and init_containers is pod.init_containers:
        return pod
    annotations = dict(pod.metadata.annotations)
    if notes:
        annotations[ANNOTATION_LIMIT_RANGER] = "LimitRanger plugin set: " + "; ".join(notes)
    return replace(
        pod,
        metadata=replace(pod.metadata, annotations=annotations),
        containers=containers,
        init_containers=init_containers,
    )


def _default_container(
    container: Container,
    limits: Mapping[str, Quantity],
    requests: Mapping[str, Quantity],
    kind: str,
    notes: list[str],
) -> Container:
    set_limits = sorted(k for k in limits if k not in container.limits)
    set_requests = sorted(k for k in requests if k not in container.requests)
    if not set_limits and not set_requests:
        return container
    if set_requests:
        notes.append(", ".join(set_requests) + f" request for {kind} {container.name}")
    if set_limits:
        notes.append(", ".join(set_limits) + f" limit for {kind} {container.name}")
    return replace(
        container,
        requests={**container.requests, **{k: requests[k] for k in set_requests}},
        limits={**container.limits, **{k: limits[k] for k in set_limits}},
    )


def _limit_ranger_validate(pod: Pod, ranges: Sequence[LimitRange]) -> None:
    # PodValidateLimitFunc; the first LimitRange with problems refuses the pod, with all of
    # its problems.
    for limit_range in ranges:
        problems: list[str] = []
        for item in limit_range.limits:
            if item.type == "Container":
                for container in (*pod.containers, *pod.init_containers):
                    problems.extend(
                        _bounds(item.type, item.min, item.max, item.max_limit_request_ratio,
                                container.requests, container.limits)
                    )  # fmt: skip
            elif item.type == "Pod":
                problems.extend(
                    _bounds(item.type, item.min, item.max, item.max_limit_request_ratio,
                            *_pod_totals(pod))
                )  # fmt: skip
        if problems:
            raise _forbidden(pod, _aggregate(problems))


def _aggregate(messages: Sequence[str]) -> str:
    # utilerrors.NewAggregate(...).Error(): one error as is; several deduplicated, and in
    # brackets unless only one distinct message is left.
    if len(messages) == 1:
        return messages[0]
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def _pod_totals(pod: Pod) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    # podRequests / podLimits of the plugin: containers and sidecars add up, each init
    # container runs with the sidecars started before it, the largest of those counts;
    # pod-level cpu and memory override (PodLevelResources is on). A sum keeps the format
    # of its first term (Quantity.Add), a maximum that of the larger (DeepCopy).
    totals = []
    for pick, pod_level in (
        (_requests_of, pod.pod_resources_requests),
        (_limits_of, pod.pod_resources_limits),
    ):
        total: dict[str, Quantity] = {}
        sidecars: dict[str, Quantity] = {}
        init_peak: dict[str, Quantity] = {}
        for container in pod.containers:
            _add(total, pick(container))
        for container in pod.init_containers:
            if container.restart_policy == "Always":
                _add(total, pick(container))
                _add(sidecars, pick(container))
                running = dict(sidecars)
            else:
                running = {}
                _add(running, pick(container))
                _add(running, sidecars)
            _keep_larger(init_peak, running)
        _keep_larger(total, init_peak)
        total.update(
            (name, quantity)
            for name, quantity in (pod_level or {}).items()
            if name in ("cpu", "memory")
        )
        totals.append(total)
    return totals[0], totals[1]


def _requests_of(container: Container) -> ResourceList:
    return container.requests


def _limits_of(container: Container) -> ResourceList:
    return container.limits


def _add(total: dict[str, Quantity], amounts: ResourceList) -> None:
    for name, quantity in amounts.items():
        first = total.get(name)
        total[name] = (
            quantity if first is None else Quantity(first.amount + quantity.amount, first.format)
        )


def _keep_larger(peak: dict[str, Quantity], amounts: ResourceList) -> None:
    for name, quantity in amounts.items():
        if name not in peak or quantity.amount > peak[name].amount:
            peak[name] = quantity


_MAX_MILLI_VALUE: Final = (2**63 - 1) // 1000


def _compared(*quantities: Quantity) -> tuple[int, ...]:
    # requestLimitEnforcedValues: millis where none overflows, else whole units.
    values = tuple(q.value() for q in quantities)
    if all(v <= _MAX_MILLI_VALUE for v in values):
        return tuple(q.milli_value() for q in quantities)
    return values


def _bounds(
    kind: str,
    minimum: ResourceList,
    maximum: ResourceList,
    ratio: ResourceList,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
) -> list[str]:
    zero = Quantity(Fraction(0))
    problems: list[str] = []
    for name, enforced in minimum.items():
        request, limit = requests.get(name), limits.get(name)
        req, lim, bound = _compared(request or zero, limit or zero, enforced)
        text = quantity_text(enforced)
        if request is None:
            problems.append(f"minimum {name} usage per {kind} is {text}.  No request is specified")
        elif req < bound:
            shown = quantity_text(request)
            problems.append(f"minimum {name} usage per {kind} is {text}, but request is {shown}")
        elif limit is not None and lim < bound:
            shown = quantity_text(limit)
            problems.append(f"minimum {name} usage per {kind} is {text}, but limit is {shown}")
    for name, enforced in maximum.items():
        request, limit = requests.get(name), limits.get(name)
        req, lim, bound = _compared(request or zero, limit or zero, enforced)
        text = quantity_text(enforced)
        if limit is None:
            problems.append(f"maximum {name} usage per {kind} is {text}.  No limit is specified")
        elif lim > bound:
            shown = quantity_text(limit)
            problems.append(f"maximum {name} usage per {kind} is {text}, but limit is {shown}")
        elif request is not None and req > bound:
            shown = quantity_text(request)
            problems.append(f"maximum {name} usage per {kind} is {text}, but request is {shown}")
    for name, enforced in ratio.items():
        request, limit = requests.get(name), limits.get(name)
        req, lim, _ = _compared(request or zero, limit or zero, enforced)
        text = quantity_text(enforced)
        if request is None or req == 0:
            problems.append(
                f"{name} max limit to request ratio per {kind} is {text}, but no request is "
                "specified or request is 0"
            )
        elif limit is None or lim == 0:
            problems.append(
                f"{name} max limit to request ratio per {kind} is {text}, but no limit is "
                "specified or limit is 0"
            )
        else:
            observed = lim / req
            ratio_shown = observed
            allowed = float(enforced.value())
            if enforced.value() <= _MAX_MILLI_VALUE:
                observed *= 1000
                allowed = float(enforced.milli_value())
            if observed > allowed:
                problems.append(
                    f"{name} max limit to request ratio per {kind} is {text}, but provided "
                    f"ratio is {ratio_shown:f}"
                )
    return problems


# -- DefaultTolerationSeconds ---------------------------------------------------------------------


def default_toleration_seconds(pod: Pod) -> Pod:
    """DefaultTolerationSeconds: a 300 s ``NoExecute`` toleration of ``not-ready`` and of
    ``unreachable``, each unless a toleration with that key (or an empty key) and effect
    ``NoExecute`` (or an empty effect) is there."""
    added = [
        Toleration(key, "Exists", "", _NO_EXECUTE, DEFAULT_TOLERATION_SECONDS)
        for key in (TAINT_NOT_READY, TAINT_UNREACHABLE)
        if not any(t.key in (key, "") and t.effect in (_NO_EXECUTE, "") for t in pod.tolerations)
    ]
    if not added:
        return pod
    return replace(pod, tolerations=(*pod.tolerations, *added))


# -- RuntimeClass ---------------------------------------------------------------------------------


def _runtime_class(pod: Pod, objects: AdmissionObjects) -> RuntimeClass | None:
    if pod.runtime_class_name is None:
        return None
    for runtime_class in objects.runtime_classes:
        if runtime_class.name == pod.runtime_class_name:
            return runtime_class
    if not objects.complete:
        return None
    raise _forbidden(pod, f'pod rejected: RuntimeClass "{pod.runtime_class_name}" not found')


def _same_resources(a: ResourceList, b: ResourceList) -> bool:
    # apiequality.Semantic: quantities compare by value.
    return a.keys() == b.keys() and all(a[k].amount == b[k].amount for k in a)


def _runtime_class_admit(pod: Pod, runtime_class: RuntimeClass | None) -> Pod:
    if runtime_class is None:
        return pod
    if runtime_class.overhead is not None:
        if pod.overhead and not _same_resources(runtime_class.overhead, pod.overhead):
            raise _forbidden(
                pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
            )
        pod = replace(pod, overhead=dict(runtime_class.overhead))
    if runtime_class.node_selector is None and not runtime_class.tolerations:
        return pod
    selector = dict(pod.node_selector)
    for key, value in (runtime_class.node_selector or {}).items():
        if key in selector and selector[key] != value:
            raise _forbidden(
                pod,
                f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                f"pod.spec.nodeSelector[{key}] = {selector[key]}",
            )
        selector[key] = value
    return replace(
        pod,
        node_selector=selector,
        tolerations=merge_tolerations(pod.tolerations, runtime_class.tolerations),
    )


def _runtime_class_validate(pod: Pod, runtime_class: RuntimeClass | None) -> None:
    if runtime_class is None and pod.runtime_class_name is not None:
        return  # a class the inputs lack (incomplete objects): its overhead is unknown
    if runtime_class is not None and runtime_class.overhead is not None:
        if not _same_resources(runtime_class.overhead, pod.overhead):
            raise _forbidden(
                pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
            )
    elif pod.overhead:
        raise _forbidden(
            pod,
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
        )


def merge_tolerations(
    first: Sequence[Toleration], second: Sequence[Toleration]
) -> tuple[Toleration, ...]:
    """``tolerations.MergeTolerations``: both lists, less each toleration that another
    (kept earlier, or later and different) tolerates a superset of."""
    every = (*first, *second)
    merged: list[Toleration] = []
    for index, toleration in enumerate(every):
        if any(_is_superset(kept, toleration) for kept in merged):
            continue
        if any(
            other != toleration and _is_superset(other, toleration) for other in every[index + 1 :]
        ):
            continue
        merged.append(toleration)
    return tuple(merged)


def _is_superset(ss: Toleration, t: Toleration) -> bool:
    if ss == t:
        return True
    if t.key != ss.key and (ss.key != "" or ss.operator != "Exists"):
        return False
    if t.effect != ss.effect and ss.effect != "":
        return False
    if (
        ss.effect == _NO_EXECUTE
        and ss.toleration_seconds is not None
        and (t.toleration_seconds is None or t.toleration_seconds > ss.toleration_seconds)
    ):
        return False
    if ss.operator in ("Equal", ""):
        return t.operator == "Equal" and t.value == ss.value
    return ss.operator == "Exists"


# -- DefaultStorageClass --------------------------------------------------------------------------


def default_storage_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """``GetDefaultClass``: of the classes annotated default (GA or beta annotation), the
    newest by ``creationTimestamp``, then the first by name."""
    marked = [
        c
        for c in classes
        if "true"
        in (
            c.metadata.annotations.get(ANNOTATION_DEFAULT_STORAGE_CLASS),
            c.metadata.annotations.get(_ANNOTATION_BETA_DEFAULT_STORAGE_CLASS),
        )
    ]
    if not marked:
        return None
    marked.sort(key=lambda c: c.name)
    marked.sort(key=lambda c: _timestamp(c.metadata), reverse=True)
    return marked[0]


def _timestamp(meta: ObjectMeta) -> float:
    if meta.creation_timestamp is None:
        return float("-inf")
    return datetime.fromisoformat(meta.creation_timestamp).timestamp()


def admit_claim(
    claim: PersistentVolumeClaim,
    classes: Iterable[StorageClass],
    limit_ranges: Iterable[LimitRange] = (),
) -> PersistentVolumeClaim:
    """A claim as the API server stores it on create: DefaultStorageClass (a claim that
    names no class — no ``storageClassName``, not even ``""``, and no beta class annotation —
    gets the default class, if there is one), then LimitRanger's validation of the
    ``PersistentVolumeClaim`` items of its namespace's LimitRanges (``min`` and ``max`` of
    ``storage`` against the request; :class:`InputError` in the API server's words).
    A claim with a uid was stored already and is left as it is."""
    if claim.metadata.uid:
        return claim
    if claim.spec.storage_class_name is None and (
        BETA_STORAGE_CLASS_ANNOTATION not in claim.metadata.annotations
    ):
        default = default_storage_class(classes)
        if default is not None:
            claim = replace(claim, spec=replace(claim.spec, storage_class_name=default.name))
    _claim_limits(claim, [r for r in limit_ranges if r.namespace == claim.namespace])
    return claim


def _claim_limits(claim: PersistentVolumeClaim, ranges: Sequence[LimitRange]) -> None:
    # PersistentVolumeClaimValidateLimitFunc: min as minConstraint with no limits, max as
    # maxRequestConstraint, over spec.resources.requests (only storage is read here).
    requests = {} if claim.spec.storage_request is None else {"storage": claim.spec.storage_request}
    zero = Quantity(Fraction(0))
    for limit_range in ranges:
        problems: list[str] = []
        for item in limit_range.limits:
            if item.type != "PersistentVolumeClaim":
                continue
            for name, enforced in item.min.items():
                request = requests.get(name)
                req, bound = _compared(request or zero, enforced)
                text = quantity_text(enforced)
                kind = "PersistentVolumeClaim"
                if request is None:
                    problems.append(
                        f"minimum {name} usage per {kind} is {text}.  No request is specified"
                    )
                elif req < bound:
                    shown = quantity_text(request)
                    problems.append(
                        f"minimum {name} usage per {kind} is {text}, but request is {shown}"
                    )
            for name, enforced in item.max.items():
                request = requests.get(name)
                req, bound = _compared(request or zero, enforced)
                text = quantity_text(enforced)
                kind = "PersistentVolumeClaim"
                if request is None:
                    problems.append(
                        f"maximum {name} usage per {kind} is {text}.  No request is specified"
                    )
                elif req > bound:
                    shown = quantity_text(request)
                    problems.append(
                        f"maximum {name} usage per {kind} is {text}, but request is {shown}"
                    )
        if problems:
            raise InputError(
                "",
                message=f'persistentvolumeclaims "{claim.name}" is forbidden: '
                f"{_aggregate(problems)}",
            )
