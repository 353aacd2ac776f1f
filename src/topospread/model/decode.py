"""Decoding parsed YAML/JSON documents into :mod:`topospread.model.objects`.

Pure: takes already-parsed Python values (dicts, lists, scalars), never reads files.
Unknown fields are ignored (``kubectl get -o yaml`` output carries many), but a field
that is present with the wrong type is an error naming its path. All problems of a
document are collected and raised together as one :class:`~topospread.errors.DecodeError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from topospread.errors import DecodeError, FieldError
from topospread.model.decode_reader import (
    _claim_spec,
    _csi_source,
    _in_tree_source,
    _join,
    _json_type,
    _label_selector,
    _meta,
    _node_selector_term,
    _Reader,
    _time,
)
from topospread.model.decode_resource import decode_pod_resource_claims, decode_resource_object
from topospread.model.decode_storage import decode_storage_object
from topospread.model.kinds import KINDS, KINDS_BY_NAME, Decoder
from topospread.model.names import is_dns1123_label, is_dns1123_subdomain
from topospread.model.objects import (
    IN_TREE_MIGRATABLE_SOURCES,
    LABEL_METADATA_NAME,
    Affinity,
    ClaimTemplate,
    Container,
    ContainerPort,
    Deployment,
    DeploymentStrategy,
    InlineVolume,
    KubeObject,
    LabelSelector,
    LimitRange,
    LimitRangeItem,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelector,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    PodCondition,
    PodDisruptionBudget,
    PodVolume,
    PreferredSchedulingTerm,
    ReplicaSet,
    ReplicationController,
    RuntimeClass,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from topospread.model.priorityclass import decode_priority_class

__all__ = [
    "SUPPORTED_KINDS",
    "WORKLOAD_KINDS",
    "Decoded",
    "decode_documents",
    "decode_object",
    "decode_pod_update",
    "decode_workload",
    "describe_document",
    "validate_metadata",
]


SUPPORTED_KINDS: Mapping[tuple[str, str], str] = {
    (k.api_version, k.kind): k.kind for k in KINDS if k.decoder is not None
}
"""``(apiVersion, kind)`` of each kind :func:`decode_object` reads: the table's
(:data:`topospread.model.kinds.KINDS`) kinds that have a decoder, each in its one version."""


def _pod_affinity_term(r: _Reader, t: Mapping[str, Any], p: str) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=r.string(t, "topologyKey", p),
        label_selector=_label_selector(r, t, "labelSelector", p),
        namespaces=r.strings(t, "namespaces", p),
        namespace_selector=_label_selector(r, t, "namespaceSelector", p),
        match_label_keys=r.strings(t, "matchLabelKeys", p),
        mismatch_label_keys=r.strings(t, "mismatchLabelKeys", p),
    )


def _weighted_term(r: _Reader, t: Mapping[str, Any], p: str) -> WeightedPodAffinityTerm:
    term = r.obj(t, "podAffinityTerm", p) or {}
    return WeightedPodAffinityTerm(
        weight=r.integer(t, "weight", p) or 0,
        term=_pod_affinity_term(r, term, _join(p, "podAffinityTerm")),
    )


def _affinity(r: _Reader, spec: Mapping[str, Any], path: str) -> Affinity | None:
    raw = r.obj(spec, "affinity", path)
    if raw is None:
        return None
    where = _join(path, "affinity")
    node_affinity = None
    na = r.obj(raw, "nodeAffinity", where)
    if na is not None:
        na_path = _join(where, "nodeAffinity")
        required = None
        req = r.obj(na, "requiredDuringSchedulingIgnoredDuringExecution", na_path)
        if req is not None:
            req_path = _join(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
            required = NodeSelector(
                r.objects(
                    req, "nodeSelectorTerms", req_path, lambda t, p: _node_selector_term(r, t, p)
                )
            )
        preferred = r.objects(
            na,
            "preferredDuringSchedulingIgnoredDuringExecution",
            na_path,
            lambda t, p: PreferredSchedulingTerm(
                weight=r.integer(t, "weight", p) or 0,
                preference=_node_selector_term(
                    r, r.obj(t, "preference", p) or {}, _join(p, "preference")
                ),
            ),
        )
        node_affinity = NodeAffinity(
            required=required,
            preferred=preferred,
            preferred_given=isinstance(
                na.get("preferredDuringSchedulingIgnoredDuringExecution"), list
            ),
        )
    pa = r.obj(raw, "podAffinity", where) or {}
    paa = r.obj(raw, "podAntiAffinity", where) or {}
    pa_path, paa_path = _join(where, "podAffinity"), _join(where, "podAntiAffinity")
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    return Affinity(
        node_affinity=node_affinity,
        pod_affinity_required=r.objects(
            pa, required_key, pa_path, lambda t, p: _pod_affinity_term(r, t, p)
        ),
        pod_affinity_preferred=r.objects(
            pa, preferred_key, pa_path, lambda t, p: _weighted_term(r, t, p)
        ),
        pod_anti_affinity_required=r.objects(
            paa, required_key, paa_path, lambda t, p: _pod_affinity_term(r, t, p)
        ),
        pod_anti_affinity_preferred=r.objects(
            paa, preferred_key, paa_path, lambda t, p: _weighted_term(r, t, p)
        ),
    )


def _constraint(r: _Reader, c: Mapping[str, Any], p: str) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=r.integer(c, "maxSkew", p) or 0,
        topology_key=r.string(c, "topologyKey", p),
        when_unsatisfiable=r.string(c, "whenUnsatisfiable", p),
        label_selector=_label_selector(r, c, "labelSelector", p),
        min_domains=r.integer(c, "minDomains", p),
        node_affinity_policy=r.opt_string(c, "nodeAffinityPolicy", p),
        node_taints_policy=r.opt_string(c, "nodeTaintsPolicy", p),
        match_label_keys=r.strings(c, "matchLabelKeys", p),
    )


def _container(r: _Reader, c: Mapping[str, Any], p: str) -> Container:
    resources = r.obj(c, "resources", p) or {}
    res_path = _join(p, "resources")
    requests = r.resources(resources, "requests", res_path)
    limits = r.resources(resources, "limits", res_path)
    # SetDefaults_Pod (pkg/apis/core/v1/defaults.go): the API server defaults a
    # container's missing requests to its limits, for containers and init containers.
    requests = {**limits, **requests}
    return Container(
        name=r.string(c, "name", p),
        image=r.string(c, "image", p),
        requests=requests,
        limits=limits,
        ports=r.objects(
            c,
            "ports",
            p,
            lambda o, q: ContainerPort(
                container_port=r.integer(o, "containerPort", q) or 0,
                host_port=r.integer(o, "hostPort", q) or 0,
                protocol=r.string(o, "protocol", q, "TCP"),
                host_ip=r.string(o, "hostIP", q),
            ),
        ),
        restart_policy=r.opt_string(c, "restartPolicy", p),
        restart_policy_rule_actions=tuple(
            r.string(rule, "action", q) if isinstance(rule, dict) else ""
            for rule, q in r.items(c, "restartPolicyRules", p)
        ),
        bind_mount_options=_any_bind_mount_options(r, c, p),
    )


def _any_bind_mount_options(r: _Reader, c: Mapping[str, Any], p: str) -> bool:
    # NodeDeclaredFeatures' VolumeBindMountOptions: a non-empty bindMountOptions list.
    return any(
        isinstance(m, dict) and bool(r.strings(m, "bindMountOptions", q))
        for m, q in r.items(c, "volumeMounts", p)
    )


def _inline_volume(r: _Reader, volume: Mapping[str, Any], p: str) -> InlineVolume | None:
    # The in-tree disk sources VolumeRestrictions compares; RBD's pool defaults to "rbd"
    # (SetDefaults_RBDVolumeSource).
    gce = r.obj(volume, "gcePersistentDisk", p)
    aws = r.obj(volume, "awsElasticBlockStore", p)
    iscsi = r.obj(volume, "iscsi", p)
    rbd = r.obj(volume, "rbd", p)
    if gce is None and aws is None and iscsi is None and rbd is None:
        return None
    g, i, d = (_join(p, key) for key in ("gcePersistentDisk", "iscsi", "rbd"))
    return InlineVolume(
        name=r.string(volume, "name", p),
        gce_persistent_disk=(
            None
            if gce is None
            else (r.string(gce, "pdName", g), bool(r.boolean(gce, "readOnly", g)))
        ),
        aws_elastic_block_store=None
        if aws is None
        else r.string(aws, "volumeID", _join(p, "awsElasticBlockStore")),
        iscsi=(
            None
            if iscsi is None
            else (r.string(iscsi, "iqn", i), bool(r.boolean(iscsi, "readOnly", i)))
        ),
        rbd=(
            None
            if rbd is None
            else (
                r.strings(rbd, "monitors", d),
                r.string(rbd, "pool", d) or "rbd",
                r.string(rbd, "image", d),
                bool(r.boolean(rbd, "readOnly", d)),
            )
        ),
    )


_VOLUME_PLUGIN_SOURCES: Final = frozenset(
    {"persistentVolumeClaim", "ephemeral", "csi", *IN_TREE_MIGRATABLE_SOURCES}
)
"""The pod volume sources the volume plugins read; other volumes are not looked at."""

_INLINE_VOLUME_FIELDS: Final = (
    "gcePersistentDisk",
    "gcePersistentDisk.pdName",
    "gcePersistentDisk.readOnly",
    "awsElasticBlockStore",
    "awsElasticBlockStore.volumeID",
)


def _claim_template(
    r: _Reader, template: Mapping[str, Any], p: str, namespace: str
) -> ClaimTemplate:
    raw_meta = r.obj(template, "metadata", p) or {}
    inner = _Reader()
    meta = _meta(inner, {"metadata": raw_meta}, namespaced=bool(namespace))
    r.errors.extend(FieldError(e.type, f"{p}.{e.field}", e.value, e.detail) for e in inner.errors)
    if namespace:
        meta = replace(meta, namespace=namespace)
    spec = r.obj(template, "spec", p) or {}
    return ClaimTemplate(meta, _claim_spec(r, spec, _join(p, "spec")))


def _pod_volume(r: _Reader, volume: Mapping[str, Any], p: str, namespace: str) -> PodVolume | None:
    if _VOLUME_PLUGIN_SOURCES.isdisjoint(volume):
        return None
    claim = r.obj(volume, "persistentVolumeClaim", p)
    ephemeral = r.obj(volume, "ephemeral", p)
    # _inline_volume has already reported the fields it reads of GCE PD and AWS EBS.
    scratch = _Reader()
    in_tree = _in_tree_source(scratch, volume, p)
    if scratch.errors:
        reported = {f"{p}.{name}" for name in _INLINE_VOLUME_FIELDS}
        r.errors.extend(e for e in scratch.errors if e.field not in reported)
    csi = _csi_source(r, volume, p)
    if claim is None and ephemeral is None and in_tree is None and csi is None:
        return None
    template = None
    if ephemeral is not None:
        where = _join(p, "ephemeral")
        raw = r.obj(ephemeral, "volumeClaimTemplate", where)
        if raw is not None:
            template = _claim_template(r, raw, _join(where, "volumeClaimTemplate"), namespace)
    c = _join(p, "persistentVolumeClaim")
    return PodVolume(
        name=r.string(volume, "name", p),
        claim_name=None if claim is None else r.string(claim, "claimName", c),
        read_only=False if claim is None else bool(r.boolean(claim, "readOnly", c)),
        ephemeral=template,
        in_tree=in_tree,
        csi=csi,
    )


def _pod(r: _Reader, doc: Mapping[str, Any]) -> Pod:
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    status = r.obj(doc, "status", "") or {}
    pod_resources = r.obj(spec, "resources", "spec")
    claims: list[str] = []
    inline: list[InlineVolume] = []
    volumes: list[PodVolume] = []
    for volume, where in r.items(spec, "volumes", "spec"):
        if not isinstance(volume, dict):
            r._type_error(where, volume, "object")
            continue
        if "persistentVolumeClaim" in volume or "ephemeral" in volume:
            claims.append(r.string(volume, "name", where))
        disk = _inline_volume(r, volume, where)
        if disk is not None:
            inline.append(disk)
        read = _pod_volume(r, volume, where, meta.namespace)
        if read is not None:
            volumes.append(read)
    return Pod(
        metadata=meta,
        node_name=r.string(spec, "nodeName", "spec"),
        scheduler_name=r.string(spec, "schedulerName", "spec") or "default-scheduler",
        node_selector=r.string_map(spec, "nodeSelector", "spec") or {},
        affinity=_affinity(r, spec, "spec"),
        tolerations=r.objects(spec, "tolerations", "spec", lambda t, p: _toleration(r, t, p)),
        topology_spread_constraints=r.objects(
            spec, "topologySpreadConstraints", "spec", lambda c, p: _constraint(r, c, p)
        ),
        containers=r.objects(spec, "containers", "spec", lambda c, p: _container(r, c, p)),
        init_containers=r.objects(spec, "initContainers", "spec", lambda c, p: _container(r, c, p)),
        overhead=r.resources(spec, "overhead", "spec"),
        pod_resources_requests=(
            r.resources(pod_resources, "requests", "spec.resources")
            if pod_resources is not None and pod_resources.get("requests") is not None
            else None
        ),
        priority=r.integer(spec, "priority", "spec"),
        priority_class_name=r.string(spec, "priorityClassName", "spec"),
        scheduling_gates=tuple(
            r.string(g, "name", p) if isinstance(g, dict) else ""
            for g, p in r.items(spec, "schedulingGates", "spec")
        ),
        volume_claims=tuple(claims),
        **_pod_status(r, status),
        resource_claims=tuple(
            r.string(c, "name", p) if isinstance(c, dict) else ""
            for c, p in r.items(spec, "resourceClaims", "spec")
        ),
        **_resource_claim_fields(r, spec, status),
        preemption_policy=r.opt_string(spec, "preemptionPolicy", "spec"),
        host_network=bool(r.boolean(spec, "hostNetwork", "spec")),
        host_users=r.boolean(spec, "hostUsers", "spec"),
        pod_resources_limits=(
            r.resources(pod_resources, "limits", "spec.resources")
            if pod_resources is not None and pod_resources.get("limits") is not None
            else None
        ),
        inline_volumes=tuple(inline),
        ephemeral_bind_mount_options=any(
            isinstance(c, dict) and _any_bind_mount_options(r, c, p)
            for c, p in r.items(spec, "ephemeralContainers", "spec")
        ),
        volumes=tuple(volumes),
        runtime_class_name=r.opt_string(spec, "runtimeClassName", "spec"),
    )


def _pod_status(r: _Reader, status: Mapping[str, Any]) -> dict[str, Any]:
    # The Pod fields read from status (but resourceClaimStatuses, read with the spec's
    # claims), as keyword arguments.
    return {
        "nominated_node_name": r.string(status, "nominatedNodeName", "status"),
        "phase": r.string(status, "phase", "status"),
        "start_time": _time(r, status, "startTime", "status"),
        "conditions": r.objects(
            status,
            "conditions",
            "status",
            lambda c, p: PodCondition(
                type=r.string(c, "type", p),
                status=r.string(c, "status", p),
                reason=r.string(c, "reason", p),
            ),
        ),
    }


def decode_pod_update(
    doc: Mapping[str, Any], previous_doc: Mapping[str, Any], previous: Pod, source: str = ""
) -> KubeObject | None:
    """:func:`decode_object` of ``doc``, given a pod ``previous`` and the document it was
    decoded from (``previous_doc``): an earlier version of the same pod, or another pod
    (a replica of the same template). When the two specs are equal but for ``nodeName``
    (a bind, a status or label update, a sibling) in the same namespace, the spec is not
    read again: the new pod is ``previous`` with the new metadata, node name and status,
    and the metadata is ``previous``'s too when the fields read from it are unchanged
    (a bind changes only ``resourceVersion`` and ``managedFields``). Otherwise, or for a
    pod with resource claims or their statuses (fields that mix spec and status), the
    whole of ``doc`` is decoded. The spec is read only with the namespace (volumes),
    nothing else of the metadata, so ``previous``'s decoded spec is ``doc``'s.

    Equal means equal as Python compares what JSON decodes to, where ``1 == True``: a
    field the API server stores as a boolean and a document gives as a number would be
    taken as the boolean here, where decoding afresh refuses it. The API server writes
    neither such spec nor such metadata."""
    spec = doc.get("spec")
    old_spec = previous_doc.get("spec")
    if (
        doc.get("kind") != "Pod"
        or doc.get("apiVersion") != "v1"
        or previous_doc.get("kind") != "Pod"
        or previous_doc.get("apiVersion") != "v1"
        or not isinstance(spec, dict)
        or not isinstance(old_spec, dict)
        or "resourceClaims" in spec
        or _claim_statuses(doc)
        or _claim_statuses(previous_doc)
        or not _same_but_node_name(spec, old_spec)
    ):
        return decode_object(doc, source)
    r = _Reader()
    raw_meta = doc.get("metadata")
    old_meta = previous_doc.get("metadata")
    if (
        isinstance(raw_meta, dict)
        and isinstance(old_meta, dict)
        and all(raw_meta.get(key) == old_meta.get(key) for key in _POD_META_READ)
    ):
        meta = previous.metadata
    else:
        meta = _meta(r, doc, namespaced=True)
    status = r.obj(doc, "status", "") or {}
    node_name = r.string(spec, "nodeName", "spec")
    fields = _pod_status(r, status)
    if r.errors:
        raise DecodeError(_describe(source, doc), r.errors)
    if meta.namespace != previous.metadata.namespace:
        return decode_object(doc, source)  # volumes read the namespace
    return replace(previous, metadata=meta, node_name=node_name, **fields)


_POD_META_READ: Final = (
    "name",
    "namespace",
    "uid",
    "labels",
    "annotations",
    "ownerReferences",
    "deletionTimestamp",
    "creationTimestamp",
)
"""The metadata fields ``_meta`` reads: equal in two documents, they decode alike."""


def _claim_statuses(doc: Mapping[str, Any]) -> bool:
    # Read with the spec's claims (decode_pod_resource_claims), not by _pod_status.
    status = doc.get("status")
    return isinstance(status, dict) and "resourceClaimStatuses" in status


def _same_but_node_name(spec: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    node_name = spec.get("nodeName")
    if node_name == old.get("nodeName"):
        return spec == old
    # The old spec with the new nodeName, compared whole: one comparison in C instead of
    # one per field in Python (7 against 2 us for a replica's spec).
    return spec == (
        {**old, "nodeName": node_name}
        if "nodeName" in spec
        else {k: v for k, v in old.items() if k != "nodeName"}
    )


def _toleration(r: _Reader, t: Mapping[str, Any], p: str) -> Toleration:
    return Toleration(
        key=r.string(t, "key", p),
        operator=r.string(t, "operator", p),
        value=r.string(t, "value", p),
        effect=r.string(t, "effect", p),
        toleration_seconds=r.integer(t, "tolerationSeconds", p, bits=64),
    )


def _limit_range(r: _Reader, doc: Mapping[str, Any]) -> LimitRange:
    spec = r.obj(doc, "spec", "") or {}
    return LimitRange(
        _meta(r, doc, namespaced=True),
        r.objects(spec, "limits", "spec", lambda item, p: _limit_range_item(r, item, p)),
    )


def _limit_range_item(r: _Reader, item: Mapping[str, Any], p: str) -> LimitRangeItem:
    kind = r.string(item, "type", p)
    maximum = r.resources(item, "max", p)
    minimum = r.resources(item, "min", p)
    default = r.resources(item, "default", p)
    default_request = r.resources(item, "defaultRequest", p)
    if kind == "Container":
        # SetDefaults_LimitRangeItem: default <- max, then defaultRequest <- default, min.
        default = {**maximum, **default}
        default_request = {**minimum, **default, **default_request}
    return LimitRangeItem(
        type=kind,
        max=maximum,
        min=minimum,
        default=default,
        default_request=default_request,
        max_limit_request_ratio=r.resources(item, "maxLimitRequestRatio", p),
    )


def _runtime_class(r: _Reader, doc: Mapping[str, Any]) -> RuntimeClass:
    overhead = r.obj(doc, "overhead", "")
    scheduling = r.obj(doc, "scheduling", "")
    return RuntimeClass(
        _meta(r, doc, namespaced=False),
        handler=r.string(doc, "handler", ""),
        overhead=(
            r.resources(overhead, "podFixed", "overhead")
            if overhead is not None and overhead.get("podFixed") is not None
            else None
        ),
        node_selector=(
            r.string_map(scheduling, "nodeSelector", "scheduling")
            if scheduling is not None
            else None
        ),
        tolerations=(
            r.objects(scheduling, "tolerations", "scheduling", lambda t, p: _toleration(r, t, p))
            if scheduling is not None
            else ()
        ),
    )


def _resource_claim_fields(
    r: _Reader, spec: Mapping[str, Any], status: Mapping[str, Any]
) -> dict[str, Any]:
    return decode_pod_resource_claims(r, spec, status)


def _node(r: _Reader, doc: Mapping[str, Any]) -> Node:
    spec = r.obj(doc, "spec", "") or {}
    status = r.obj(doc, "status", "") or {}
    # Each entry decodes into a v1.ContainerImage: anything but an object is refused.
    images = r.objects(
        status,
        "images",
        "status",
        lambda image, where: (
            r.strings(image, "names", where),
            r.integer(image, "sizeBytes", where, bits=64) or 0,
        ),
    )
    allocatable = r.resources(status, "allocatable", "status")
    capacity = r.resources(status, "capacity", "status")
    if status.get("allocatable") is None:
        # SetDefaults_NodeStatus (pkg/apis/core/v1/defaults.go): a missing allocatable is
        # copied from capacity; an empty map is kept (the node has nothing allocatable).
        allocatable = capacity
    return Node(
        metadata=_meta(r, doc, namespaced=False),
        unschedulable=bool(r.boolean(spec, "unschedulable", "spec")),
        taints=r.objects(
            spec,
            "taints",
            "spec",
            lambda t, p: Taint(
                key=r.string(t, "key", p),
                effect=r.string(t, "effect", p),
                value=r.string(t, "value", p),
            ),
        ),
        allocatable=allocatable,
        images=images,
        declared_features=r.strings(status, "declaredFeatures", "status"),
    )


def _namespace(r: _Reader, doc: Mapping[str, Any]) -> Namespace:
    meta = _meta(r, doc, namespaced=False)
    if meta.name:
        # SetDefaults_Namespace: the API server always labels a namespace with its name.
        meta = replace(meta, labels={**meta.labels, LABEL_METADATA_NAME: meta.name})
    return Namespace(meta)


def _kind_and_version(doc: Mapping[str, Any]) -> tuple[list[FieldError], str, str]:
    errors: list[FieldError] = []
    found: list[str] = []
    for name in ("apiVersion", "kind"):
        value = doc.get(name)
        if value is None or value == "":
            errors.append(FieldError.required(name))
            found.append("")
        elif not isinstance(value, str):
            errors.append(
                FieldError.invalid(
                    name, _json_type(value), f"expected string, got {_json_type(value)}"
                )
            )
            found.append("")
        else:
            found.append(value)
    return errors, found[0], found[1]


def decode_object(doc: Mapping[str, Any], source: str = "") -> KubeObject | None:
    """Decode one object, or return ``None`` for a kind topospread does not read.

    A kind topospread reads with another ``apiVersion`` (``Node`` in ``v11``) is an error,
    as in the oracle, not a skipped object. Raises :class:`DecodeError` naming ``source``
    and every bad field.
    """
    missing, api_version, kind = _kind_and_version(doc)
    if missing:
        raise DecodeError(source, missing)
    if (api_version, kind) not in SUPPORTED_KINDS:
        versions = [v for (v, k) in SUPPORTED_KINDS if k == kind]
        if versions:
            raise DecodeError(
                source, [FieldError.not_supported("apiVersion", api_version, versions)]
            )
        return None
    decoder = KINDS_BY_NAME[kind].decoder
    if decoder is Decoder.PRIORITY_CLASS:
        return decode_priority_class(doc, source)
    if decoder is Decoder.STORAGE:
        return decode_storage_object(doc, _describe(source, doc))
    if decoder is Decoder.RESOURCE:
        return decode_resource_object(kind, doc, _describe(source, doc))
    if decoder is Decoder.WORKLOAD:
        workload = decode_workload(doc, source)
        assert isinstance(workload, PodDisruptionBudget)
        return workload
    r = _Reader()
    obj = _CORE_DECODERS[kind](r, doc)
    if r.errors:
        raise DecodeError(_describe(source, doc), r.errors)
    return obj


def _service(r: _Reader, doc: Mapping[str, Any]) -> Service:
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    service = Service(meta, r.string_map(spec, "selector", "spec"))
    r.objects(spec, "ports", "spec", lambda port, where: _service_port(r, port, where))
    return service


def _replication_controller(r: _Reader, doc: Mapping[str, Any]) -> ReplicationController:
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    return ReplicationController(meta, r.string_map(spec, "selector", "spec"))


def _replica_set(r: _Reader, doc: Mapping[str, Any]) -> ReplicaSet:
    # What the scheduler lists of it: the selector (decode_workload reads the rest).
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    return ReplicaSet(meta, _label_selector(r, spec, "selector", "spec"))


def _listed_stateful_set(r: _Reader, doc: Mapping[str, Any]) -> StatefulSet:
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    return _stateful_set(r, meta, spec, _label_selector(r, spec, "selector", "spec"))


_CORE_DECODERS: Final[Mapping[str, Callable[[_Reader, Mapping[str, Any]], KubeObject]]] = {
    "Pod": _pod,
    "Node": _node,
    "Namespace": _namespace,
    "LimitRange": _limit_range,
    "RuntimeClass": _runtime_class,
    "Service": _service,
    "ReplicationController": _replication_controller,
    "ReplicaSet": _replica_set,
    "StatefulSet": _listed_stateful_set,
}
"""The decoder of each kind the table (:data:`~topospread.model.kinds.KINDS`) gives to
:data:`~topospread.model.kinds.Decoder.CORE`: this module's own."""


_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
    "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', "
    " or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _dns1035_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.fullmatch(value):
        errors.append(_DNS1035_MESSAGE)
    return errors


def validate_metadata(obj: KubeObject | Deployment) -> list[FieldError]:
    """``ValidateObjectMeta`` for the name and namespace of a stored object.

    Names are checked with each kind's name rule (``ValidateNodeName``,
    ``ValidatePodName``... are RFC 1123 subdomains, a Namespace an RFC 1123 label, a
    Service an RFC 1035 label), namespaces as RFC 1123 labels. An object with only
    ``generateName`` is refused: the API server makes the name up when it creates it, so
    a capture never lacks one.
    """
    meta = obj.metadata
    errors: list[FieldError] = []
    if not meta.name:
        errors.append(FieldError.required("metadata.name", "name or generateName is required"))
    else:
        if isinstance(obj, Namespace):
            problems = is_dns1123_label(meta.name)
        elif isinstance(obj, Service):
            problems = _dns1035_label(meta.name)
        else:
            problems = is_dns1123_subdomain(meta.name)
        errors.extend(FieldError.invalid("metadata.name", meta.name, p) for p in problems)
    if meta.namespace:
        errors.extend(
            FieldError.invalid("metadata.namespace", meta.namespace, p)
            for p in is_dns1123_label(meta.namespace)
        )
    return errors


def describe_document(doc: Mapping[str, Any]) -> str:
    """``Kind name`` (or ``Kind namespace/name``) of a parsed document, for messages."""
    meta = doc.get("metadata")
    kind = doc.get("kind")
    kind = kind if isinstance(kind, str) and kind else "object"
    name = meta.get("name") if isinstance(meta, dict) else None
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        return kind
    if isinstance(namespace, str) and namespace:
        return f"{kind} {namespace}/{name}"
    return f"{kind} {name}"


def _describe(source: str, doc: Mapping[str, Any]) -> str:
    where = describe_document(doc)
    return f"{source}: {where}" if source else where


@dataclass(frozen=True, slots=True)
class Decoded:
    """The objects of one or more documents, and the kinds that were skipped."""

    objects: tuple[KubeObject, ...]
    skipped: tuple[str, ...]
    """``Kind name`` of each object topospread does not read, for a note to the user."""
    places: tuple[str, ...] = ()
    """Where each object is in its input (``items[3]``, ``document 2``), for messages."""


def _list_item_kind(kind: str) -> tuple[str, str] | None:
    # Items of raw API lists (GET /api/v1/nodes) carry no kind and apiVersion; the list's
    # kind names them, and each kind topospread reads has one version (as in the oracle).
    item_kind = kind.removesuffix("List")
    versions = [v for (v, k) in SUPPORTED_KINDS if k == item_kind]
    return (versions[0], item_kind) if versions else None


def decode_documents(documents: list[Any], source: str = "") -> Decoded:
    """Decode parsed documents, expanding ``List`` and ``*List`` kinds; skip empty ones.

    Items of a typed list (``NodeList``, ``PodList``...) that lack ``kind`` and
    ``apiVersion``, as raw API responses have them, take them from the list.
    """
    objects: list[KubeObject] = []
    places: list[str] = []
    skipped: list[str] = []
    errors: list[FieldError | str] = []

    def visit(doc: Any, where: str, implied: tuple[str, str] | None) -> None:
        if doc is None:
            return
        if not isinstance(doc, dict):
            errors.append(
                f"{where or 'document'}: expected a Kubernetes object, got {_json_type(doc)}"
            )
            return
        kind = doc.get("kind")
        if implied is not None and doc.get("kind") in (None, ""):
            version = doc.get("apiVersion")
            doc = {**doc, "kind": implied[1]}
            if version in (None, ""):
                doc["apiVersion"] = implied[0]
            kind = implied[1]
        if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
            items = doc.get("items")
            if items is None:
                return
            if not isinstance(items, list):
                errors.append(f"{_join(where, 'items')}: expected array, got {_json_type(items)}")
                return
            item_kind = _list_item_kind(kind)
            for index, item in enumerate(items):
                visit(
                    item,
                    f"{where}items[{index}]" if not where else f"{where}.items[{index}]",
                    item_kind,
                )
            return
        try:
            obj = decode_object(doc, "")
        except DecodeError as exc:
            if where:
                label = f"{where} ({describe_document(doc)})"
                errors.extend(f"{label}: {e}" for e in exc.errors)
            else:
                errors.extend(exc.errors)
            return
        if obj is None:
            skipped.append(f"{doc.get('apiVersion')}/{kind} {_name_of(doc)}".rstrip())
        else:
            objects.append(obj)
            places.append(where)

    for index, document in enumerate(documents):
        visit(document, f"document {index + 1}" if len(documents) > 1 else "", None)
    if errors:
        raise DecodeError(source, errors)
    return Decoded(tuple(objects), tuple(skipped), tuple(places))


def _name_of(doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


# -- workload controllers (read by the simulator) ---------------------------------------------

WORKLOAD_KINDS: Mapping[tuple[str, str], str] = {
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
}
"""Kinds :func:`decode_workload` reads in full (replicas, pod template, strategy, budget)."""


def _stateful_set(
    r: _Reader, meta: ObjectMeta, spec: Mapping[str, Any], selector: LabelSelector | None
) -> StatefulSet:
    # The claim templates and their retention policy, which SetDefaults_StatefulSet
    # defaults to Retain for both cases; replicas and the pod template are set by callers
    # that read them.
    policy = r.obj(spec, "persistentVolumeClaimRetentionPolicy", "spec") or {}
    where = "spec.persistentVolumeClaimRetentionPolicy"
    return StatefulSet(
        meta,
        selector,
        volume_claim_templates=r.objects(
            spec,
            "volumeClaimTemplates",
            "spec",
            lambda t, p: _claim_template(r, t, p, meta.namespace),
        ),
        claim_retention_when_scaled=r.string(policy, "whenScaled", where) or "Retain",
        claim_retention_when_deleted=r.string(policy, "whenDeleted", where) or "Retain",
    )


_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"
"""``validation.InclusiveRangeError(1, 65535)`` (``IsValidPortNum``)."""
_PORT_NAME = re.compile(r"[-a-z0-9]+")


def _port_name_problems(name: str) -> list[str]:
    # validation.IsValidPortName (k8s.io/apimachinery/pkg/util/validation).
    problems = []
    if len(name) > 15:
        problems.append("must be no more than 15 characters")
    if not _PORT_NAME.fullmatch(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", name):
        problems.append("must contain at least one letter (a-z)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return problems


def _service_port(r: _Reader, port: Mapping[str, Any], where: str) -> None:
    """``validateServicePort``'s port numbers (pkg/apis/core/validation): ``port`` in
    1-65535; ``targetPort`` a port number in that range or a port name (an absent or zero
    targetPort is defaulted to ``port`` first, by ``SetDefaults_Service``)."""
    number = r.integer(port, "port", where)
    if number is None and port.get("port") is None:
        number = 0
    if number is not None and not 1 <= number <= 65535:
        r.errors.append(FieldError.invalid(_join(where, "port"), number, _PORT_RANGE))
    target = _int_or_string(r, port, "targetPort", where)
    if isinstance(target, int) and target != 0 and not 1 <= target <= 65535:
        r.errors.append(FieldError.invalid(_join(where, "targetPort"), target, _PORT_RANGE))
    elif isinstance(target, str) and target:
        for problem in _port_name_problems(target):
            r.errors.append(FieldError.invalid(_join(where, "targetPort"), target, problem))


def _int_or_string(r: _Reader, data: Mapping[str, Any], key: str, path: str) -> int | str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return r.integer(data, key, path)


def _template(r: _Reader, spec: Mapping[str, Any], namespace: str) -> Pod | None:
    raw = r.obj(spec, "template", "spec")
    if raw is None:
        return None
    metadata = raw.get("metadata")
    metadata = {**metadata, "namespace": namespace} if isinstance(metadata, dict) else metadata
    inner = _Reader()
    template = _pod(inner, {"metadata": metadata, "spec": raw.get("spec")})
    r.errors.extend(
        FieldError(e.type, f"spec.template.{e.field}", e.value, e.detail) for e in inner.errors
    )
    return template


_UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")


def _unhealthy_pod_eviction_policy(r: _Reader, spec: Mapping[str, Any]) -> str | None:
    # ValidatePodDisruptionBudgetSpec (pkg/apis/policy/validation): only the two policies.
    policy = r.opt_string(spec, "unhealthyPodEvictionPolicy", "spec")
    if policy is not None and policy not in _UNHEALTHY_POD_EVICTION_POLICIES:
        r.errors.append(
            FieldError.not_supported(
                "spec.unhealthyPodEvictionPolicy", policy, _UNHEALTHY_POD_EVICTION_POLICIES
            )
        )
    return policy


def decode_workload(
    doc: Mapping[str, Any], source: str = ""
) -> Deployment | ReplicaSet | StatefulSet | PodDisruptionBudget | None:
    """Decode a Deployment, ReplicaSet, StatefulSet or PodDisruptionBudget in full.

    Unlike :func:`decode_object`, which reads only what the scheduler lists (selectors),
    this also reads ``replicas``, the pod template, the Deployment strategy (defaulted as
    ``SetDefaults_Deployment``: RollingUpdate, 25%/25%) and the budget. Returns ``None``
    for other kinds. Raises :class:`DecodeError` naming every bad field.
    """
    kind = WORKLOAD_KINDS.get((str(doc.get("apiVersion")), str(doc.get("kind"))))
    if kind is None:
        return None
    r = _Reader()
    meta = _meta(r, doc, namespaced=True)
    spec = r.obj(doc, "spec", "") or {}
    selector = _label_selector(r, spec, "selector", "spec")
    obj: Deployment | ReplicaSet | StatefulSet | PodDisruptionBudget
    if kind == "PodDisruptionBudget":
        status = r.obj(doc, "status", "") or {}
        disrupted = r.obj(status, "disruptedPods", "status") or {}
        obj = PodDisruptionBudget(
            meta,
            selector,
            min_available=_int_or_string(r, spec, "minAvailable", "spec"),
            max_unavailable=_int_or_string(r, spec, "maxUnavailable", "spec"),
            disruptions_allowed=r.integer(status, "disruptionsAllowed", "status") or 0,
            disrupted_pods=frozenset(str(name) for name in disrupted),
            current_healthy=r.integer(status, "currentHealthy", "status") or 0,
            desired_healthy=r.integer(status, "desiredHealthy", "status") or 0,
            unhealthy_pod_eviction_policy=_unhealthy_pod_eviction_policy(r, spec),
        )
    else:
        replicas = r.integer(spec, "replicas", "spec")
        template = _template(r, spec, meta.namespace)
        if kind == "ReplicaSet":
            obj = ReplicaSet(meta, selector, replicas, template)
        elif kind == "StatefulSet":
            update = r.obj(spec, "updateStrategy", "spec") or {}
            obj = replace(
                _stateful_set(r, meta, spec, selector),
                replicas=replicas,
                template=template,
                pod_management_policy=r.string(spec, "podManagementPolicy", "spec", "OrderedReady"),
                update_strategy=r.string(update, "type", "spec.updateStrategy", "RollingUpdate"),
            )
        else:
            raw = r.obj(spec, "strategy", "spec") or {}
            strategy_type = r.string(raw, "type", "spec.strategy", "RollingUpdate")
            rolling = r.obj(raw, "rollingUpdate", "spec.strategy") or {}
            where = "spec.strategy.rollingUpdate"
            surge = _int_or_string(r, rolling, "maxSurge", where)
            unavailable = _int_or_string(r, rolling, "maxUnavailable", where)
            strategy = DeploymentStrategy(
                strategy_type,
                "25%" if surge is None else surge,
                "25%" if unavailable is None else unavailable,
            )
            obj = Deployment(meta, selector, replicas, template, strategy)
    if r.errors:
        raise DecodeError(_describe(source, doc), r.errors)
    return obj
