"""Workload manifests as ``audit`` and ``lint`` read them: every kind that carries a pod template.

:func:`topospread.model.decode.decode_workload` reads Deployments, ReplicaSets and
StatefulSets in full; this module adds the kinds the scheduler never lists but whose pods
it schedules — DaemonSets, Jobs and CronJobs — by decoding them through the same
ReplicaSet-shaped path, so a field of the wrong type is reported exactly as for the
others, with its path in the original object (``spec.jobTemplate.spec.template...`` for a
CronJob). Pure: takes parsed documents, never reads files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from topospread.errors import DecodeError, FieldError
from topospread.model.decode import decode_object, decode_workload
from topospread.model.fieldschema import KINDS
from topospread.model.objects import (
    Deployment,
    KubeObject,
    LabelSelector,
    ObjectMeta,
    Pod,
    ReplicaSet,
    StatefulSet,
)

__all__ = [
    "POD_TEMPLATE_PATHS",
    "CronJob",
    "DaemonSet",
    "DecodedManifests",
    "Job",
    "ManifestObject",
    "TemplatedWorkload",
    "decode_manifest",
    "decode_manifests",
    "pod_spec_path",
    "unknown_builtin_kind",
]


@dataclass(frozen=True, slots=True)
class DaemonSet:
    """An apps/v1 DaemonSet: one pod per eligible node, so spread constraints do not apply."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    template: Pod | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """A batch/v1 Job; ``parallelism`` pods run at once (nil means 1)."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    template: Pod | None = None
    parallelism: int | None = None
    completions: int | None = None


@dataclass(frozen=True, slots=True)
class CronJob:
    """A batch/v1 CronJob; its ``spec.jobTemplate`` is a Job spec."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    template: Pod | None = None
    parallelism: int | None = None
    completions: int | None = None


TemplatedWorkload = Deployment | ReplicaSet | StatefulSet | DaemonSet | Job | CronJob
"""Every kind with a pod template."""

ManifestObject = KubeObject | Deployment | DaemonSet | Job | CronJob
"""Everything :func:`decode_manifest` returns."""

POD_TEMPLATE_PATHS: Final[Mapping[str, str]] = {
    "Deployment": "spec.template",
    "ReplicaSet": "spec.template",
    "StatefulSet": "spec.template",
    "DaemonSet": "spec.template",
    "Job": "spec.template",
    "CronJob": "spec.jobTemplate.spec.template",
    "Pod": "",
}
"""Where each kind keeps its pod (template); a pod is its own template."""

_EXTRA_KINDS: Final[Mapping[tuple[str, str], str]] = {
    ("apps/v1", "DaemonSet"): "DaemonSet",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
}


def pod_spec_path(kind: str) -> str:
    """The path of the pod spec in an object of ``kind``: ``spec.template.spec``, ``spec``..."""
    prefix = POD_TEMPLATE_PATHS.get(kind, "spec.template")
    return f"{prefix}.spec" if prefix else "spec"


def _moved(errors: tuple[FieldError | str, ...], old: str, new: str) -> list[FieldError | str]:
    # Errors of the ReplicaSet-shaped stand-in, with paths as they are in the real object.
    result: list[FieldError | str] = []
    for e in errors:
        if isinstance(e, FieldError) and (e.field == old or e.field.startswith(old + ".")):
            e = FieldError(e.type, new + e.field[len(old) :], e.value, e.detail)
        result.append(e)
    return result


def _count(spec: Mapping[str, Any], key: str, path: str) -> tuple[int | None, list[FieldError]]:
    value = spec.get(key)
    if value is None:
        return None, []
    if isinstance(value, bool) or not isinstance(value, int):
        return None, [FieldError.invalid(f"{path}.{key}", value, "expected int32")]
    return value, []


def _decode_extra(kind: str, doc: Mapping[str, Any], source: str) -> DaemonSet | Job | CronJob:
    spec = doc.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    spec_path = "spec"
    if kind == "CronJob":
        job_template = spec.get("jobTemplate")
        job_template = job_template if isinstance(job_template, dict) else {}
        inner = job_template.get("spec")
        spec = inner if isinstance(inner, dict) else {}
        spec_path = "spec.jobTemplate.spec"
    stand_in = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": doc.get("metadata"),
        "spec": {k: spec[k] for k in ("selector", "template") if k in spec},
    }
    errors: list[FieldError | str] = []
    try:
        decoded = decode_workload(stand_in, "")
    except DecodeError as exc:
        errors.extend(_moved(exc.errors, "spec", spec_path))
        decoded = None
    parallelism, problems = _count(spec, "parallelism", spec_path)
    errors.extend(problems)
    completions, problems = _count(spec, "completions", spec_path)
    errors.extend(problems)
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if errors or not isinstance(decoded, ReplicaSet):
        where = f"{kind} {name}" if isinstance(name, str) and name else kind
        raise DecodeError(f"{source}: {where}" if source else where, errors)
    if kind == "DaemonSet":
        return DaemonSet(decoded.metadata, decoded.selector, decoded.template)
    if kind == "Job":
        return Job(decoded.metadata, decoded.selector, decoded.template, parallelism, completions)
    return CronJob(decoded.metadata, decoded.selector, decoded.template, parallelism, completions)


def decode_manifest(doc: Mapping[str, Any], source: str = "") -> ManifestObject | None:
    """Decode one object of any kind ``audit``/``lint`` read, or ``None`` for other kinds.

    Deployments, ReplicaSets and StatefulSets are read in full (replicas, template,
    strategy) by :func:`decode_workload`; DaemonSets, Jobs and CronJobs here; Nodes,
    Pods, Services and the rest by :func:`decode_object`. Raises :class:`DecodeError`.
    """
    key = (str(doc.get("apiVersion")), str(doc.get("kind")))
    extra = _EXTRA_KINDS.get(key)
    if extra is not None:
        return _decode_extra(extra, doc, source)
    if key in (("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        workload = decode_workload(doc, source)
        assert isinstance(workload, Deployment | ReplicaSet | StatefulSet)
        return workload
    return decode_object(doc, source)


@dataclass(frozen=True, slots=True)
class DecodedManifests:
    """Objects decoded from documents, each with the index of its top-level document."""

    objects: tuple[tuple[int, ManifestObject], ...]
    skipped: tuple[str, ...]
    """``apiVersion/Kind name`` of every object of a kind neither tool reads."""


def _flatten(documents: list[Any]) -> Iterator[tuple[int, str, Any]]:
    for index, document in enumerate(documents):
        where = f"document {index + 1}" if len(documents) > 1 else ""
        yield from _expand(index, where, document)


def _expand(index: int, where: str, doc: Any) -> Iterator[tuple[int, str, Any]]:
    if isinstance(doc, dict):
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            for n, item in enumerate(doc["items"]):
                yield from _expand(index, f"{where} items[{n}]".strip(), item)
            return
    yield index, where, doc


_BUILTIN_VERSIONS: Final = frozenset(key.rpartition("/")[0] for key in KINDS)
"""The group/versions of the built-in API groups topospread reads (the v1.37.1 OpenAPI
document lists every kind each serves)."""


def unknown_builtin_kind(doc: Mapping[str, Any]) -> str | None:
    """kubectl's refusal of a kind its group/version does not serve, for an object of a
    built-in group topospread reads (``apps/v1`` ``Deploymnet``, ``v1`` ``pod``,
    ``apps/v1beta1`` ``Deployment``, removed in 1.16): the API server has no such
    resource. None for every other group, custom resources among them."""
    version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(version, str) or not isinstance(kind, str) or kind == "List":
        return None
    if version not in _BUILTIN_VERSIONS or f"{version}/{kind}" in KINDS:
        return None
    return f'no matches for kind "{kind}" in version "{version}"'


def decode_manifests(documents: list[Any], source: str = "") -> DecodedManifests:
    """Decode parsed documents (``List`` kinds expanded, empty documents skipped).

    Every problem of every document is collected into one :class:`DecodeError`.
    """
    objects: list[tuple[int, ManifestObject]] = []
    skipped: list[str] = []
    errors: list[FieldError | str] = []
    for index, where, doc in _flatten(documents):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            label = f"{where}: " if where else ""
            errors.append(f"{label}expected a Kubernetes object, got {type(doc).__name__}")
            continue
        try:
            obj = decode_manifest(doc, "")
        except DecodeError as exc:
            label = f"{where} ({exc.source})" if where and exc.source else where or exc.source
            errors.extend(f"{label}: {e}" if label else str(e) for e in exc.errors)
            continue
        if obj is None:
            meta = doc.get("metadata")
            name = meta.get("name", "") if isinstance(meta, dict) else ""
            skipped.append(f"{doc.get('apiVersion')}/{doc.get('kind')} {name}".rstrip())
        else:
            objects.append((index, obj))
    if errors:
        raise DecodeError(source, errors)
    return DecodedManifests(tuple(objects), tuple(skipped))
