"""Decoding the storage kinds: PersistentVolume and PersistentVolumeClaim (``v1``),
StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment
(``storage.k8s.io/v1``), with the same reader, errors and paths as every other kind.

The API server's defaulting is applied as it stores the objects (``SetDefaults_*`` of
core/v1 and storage/v1, v1.37.1): ``volumeMode`` Filesystem on claims and volumes, a
volume's and a claim's phase Pending, ``volumeBindingMode`` Immediate, a CSIDriver's
``attachRequired`` true, ``storageCapacity`` false and — the VolumeLimitScaling gate is
on by default in v1.37 — ``preventPodSchedulingIfMissing`` false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from topospread.errors import DecodeError, FieldError
from topospread.model.decode_reader import (
    _claim_spec,
    _csi_source,
    _in_tree_source,
    _join,
    _label_selector,
    _meta,
    _node_selector_term,
    _number_text,
    _Reader,
)
from topospread.model.objects import KubeObject, NodeSelector
from topospread.model.quantity import Quantity, QuantityError, is_negative_quantity, parse_quantity
from topospread.model.storage import (
    ClaimReference,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
)

__all__ = ["decode_storage_object"]

_PV_SOURCES: Final = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
"""The volume sources of a PersistentVolumeSpec, in the order ValidatePersistentVolumeSpec
visits them (the first one set counts, each further one is reported)."""


def _quantity(
    r: _Reader, data: Mapping[str, Any], key: str, path: str, *, nonnegative: bool = True
) -> Quantity | None:
    # A single quantity field of a CSIStorageCapacity. ValidateCSIStorageCapacity refuses
    # a negative capacity (ValidateNonnegativeQuantity) and checks no maximumVolumeSize.
    raw = data.get(key)
    if raw is None:
        return None
    where = _join(path, key)
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        r._type_error(where, raw, "quantity")
        return None
    text = raw.strip() if isinstance(raw, str) else _number_text(raw)
    try:
        quantity = parse_quantity(text, "storage")
    except QuantityError as exc:
        r.errors.append(FieldError.invalid(where, text, str(exc)))
        return None
    if nonnegative and is_negative_quantity(text):
        r.errors.append(FieldError.invalid(where, text, "must be greater than or equal to 0"))
        return None
    return quantity


def _capacity(r: _Reader, spec: Mapping[str, Any]) -> Quantity | None:
    # spec.capacity holds exactly one resource, storage, and it must be positive
    # (ValidatePersistentVolumeSpec). The written keys and texts are only known here, so
    # these checks are made while decoding; a missing capacity is left to validation.
    raw = r.obj(spec, "capacity", "spec")
    if not raw:
        return None
    problems: list[FieldError] = []
    texts: dict[str, str] = {}
    result: Quantity | None = None
    for name, value in raw.items():
        where = f"spec.capacity[{name}]"
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            r._type_error(where, value, "quantity")
            continue
        text = value.strip() if isinstance(value, str) else _number_text(value)
        texts[str(name)] = text
        try:
            quantity = parse_quantity(text, str(name))
        except QuantityError as exc:
            r.errors.append(FieldError.invalid(where, text, str(exc)))
            continue
        if is_negative_quantity(text) or quantity.amount == 0:
            problems.append(FieldError.invalid(where, text, "must be greater than zero"))
        elif name == "storage":
            result = quantity
    if "storage" not in texts or len(texts) > 1:
        problems.insert(
            0, FieldError.not_supported("spec.capacity", dict(sorted(texts.items())), ["storage"])
        )
    r.errors.extend(problems)
    return result


def _persistent_volume(r: _Reader, doc: Mapping[str, Any]) -> PersistentVolume:
    spec = r.obj(doc, "spec", "") or {}
    status = r.obj(doc, "status", "") or {}
    capacity = _capacity(r, spec)
    claim_ref = None
    raw_ref = r.obj(spec, "claimRef", "spec")
    if raw_ref is not None:
        claim_ref = ClaimReference(
            name=r.string(raw_ref, "name", "spec.claimRef"),
            namespace=r.string(raw_ref, "namespace", "spec.claimRef"),
            uid=r.string(raw_ref, "uid", "spec.claimRef"),
        )
    node_affinity = None
    affinity = r.obj(spec, "nodeAffinity", "spec")
    if affinity is not None:
        required = r.obj(affinity, "required", "spec.nodeAffinity")
        if required is None:
            # validateVolumeNodeAffinity; nil and absent are one on the wire.
            r.errors.append(
                FieldError.required(
                    "spec.nodeAffinity.required", "must specify required node constraints"
                )
            )
        else:
            node_affinity = NodeSelector(
                r.objects(
                    required,
                    "nodeSelectorTerms",
                    "spec.nodeAffinity.required",
                    lambda t, p: _node_selector_term(r, t, p),
                )
            )
    sources = tuple(name for name in _PV_SOURCES if spec.get(name) is not None)
    return PersistentVolume(
        metadata=_meta(r, doc, namespaced=False),
        capacity=capacity,
        access_modes=r.strings(spec, "accessModes", "spec"),
        claim_ref=claim_ref,
        storage_class_name=r.string(spec, "storageClassName", "spec"),
        volume_mode=r.string(spec, "volumeMode", "spec") or "Filesystem",
        volume_attributes_class_name=r.opt_string(spec, "volumeAttributesClassName", "spec"),
        node_affinity=node_affinity,
        phase=r.string(status, "phase", "status") or "Pending",
        csi=_csi_source(r, spec, "spec"),
        in_tree=_in_tree_source(r, spec, "spec"),
        sources=sources,
    )


def _storage_class(r: _Reader, doc: Mapping[str, Any]) -> StorageClass:
    terms = []
    for term, where in r.items(doc, "allowedTopologies", ""):
        if not isinstance(term, dict):
            r._type_error(where, term, "object")
            continue
        requirements = []
        for expression, at in r.items(term, "matchLabelExpressions", where):
            if not isinstance(expression, dict):
                r._type_error(at, expression, "object")
                continue
            requirements.append(
                (r.string(expression, "key", at), r.strings(expression, "values", at))
            )
        terms.append(TopologySelectorTerm(tuple(requirements)))
    return StorageClass(
        metadata=_meta(r, doc, namespaced=False),
        provisioner=r.string(doc, "provisioner", ""),
        volume_binding_mode=r.string(doc, "volumeBindingMode", "") or "Immediate",
        allowed_topologies=tuple(terms),
        parameters=r.string_map(doc, "parameters", "") or {},
    )


def _csi_node(r: _Reader, doc: Mapping[str, Any]) -> CSINode:
    spec = r.obj(doc, "spec", "") or {}

    def driver(d: Mapping[str, Any], p: str) -> CSINodeDriver:
        allocatable = r.obj(d, "allocatable", p) or {}
        return CSINodeDriver(
            name=r.string(d, "name", p),
            node_id=r.string(d, "nodeID", p),
            topology_keys=r.strings(d, "topologyKeys", p),
            allocatable_count=r.integer(allocatable, "count", _join(p, "allocatable")),
        )

    return CSINode(
        metadata=_meta(r, doc, namespaced=False),
        drivers=r.objects(spec, "drivers", "spec", driver),
    )


def _csi_driver(r: _Reader, doc: Mapping[str, Any]) -> CSIDriver:
    spec = r.obj(doc, "spec", "") or {}
    attach = r.boolean(spec, "attachRequired", "spec")
    capacity = r.boolean(spec, "storageCapacity", "spec")
    prevent = r.boolean(spec, "preventPodSchedulingIfMissing", "spec")
    return CSIDriver(
        metadata=_meta(r, doc, namespaced=False),
        attach_required=True if attach is None else attach,
        storage_capacity=bool(capacity),
        prevent_pod_scheduling_if_missing=bool(prevent),
    )


def _csi_storage_capacity(r: _Reader, doc: Mapping[str, Any]) -> CSIStorageCapacity:
    return CSIStorageCapacity(
        metadata=_meta(r, doc, namespaced=True),
        storage_class_name=r.string(doc, "storageClassName", ""),
        node_topology=_label_selector(r, doc, "nodeTopology", ""),
        capacity=_quantity(r, doc, "capacity", ""),
        maximum_volume_size=_quantity(r, doc, "maximumVolumeSize", "", nonnegative=False),
    )


def _volume_attachment(r: _Reader, doc: Mapping[str, Any]) -> VolumeAttachment:
    spec = r.obj(doc, "spec", "") or {}
    status = r.obj(doc, "status", "") or {}
    source = r.obj(spec, "source", "spec") or {}
    inline = r.obj(source, "inlineVolumeSpec", "spec.source")
    return VolumeAttachment(
        metadata=_meta(r, doc, namespaced=False),
        attacher=r.string(spec, "attacher", "spec"),
        node_name=r.string(spec, "nodeName", "spec"),
        persistent_volume_name=r.opt_string(source, "persistentVolumeName", "spec.source"),
        attached=bool(r.boolean(status, "attached", "status")),
        inline_volume_spec=inline is not None,
    )


def decode_storage_object(doc: Mapping[str, Any], described: str) -> KubeObject:
    """Decode one object of a storage kind (``kind`` and ``apiVersion`` already checked);
    raises :class:`DecodeError` naming ``described`` and every bad field."""
    r = _Reader()
    kind = doc["kind"]
    obj: KubeObject
    if kind == "PersistentVolume":
        obj = _persistent_volume(r, doc)
    elif kind == "PersistentVolumeClaim":
        spec = r.obj(doc, "spec", "") or {}
        status = r.obj(doc, "status", "") or {}
        obj = PersistentVolumeClaim(
            metadata=_meta(r, doc, namespaced=True),
            spec=_claim_spec(r, spec, "spec"),
            phase=r.string(status, "phase", "status") or "Pending",
        )
    elif kind == "StorageClass":
        obj = _storage_class(r, doc)
    elif kind == "CSINode":
        obj = _csi_node(r, doc)
    elif kind == "CSIDriver":
        obj = _csi_driver(r, doc)
    elif kind == "CSIStorageCapacity":
        obj = _csi_storage_capacity(r, doc)
    else:
        obj = _volume_attachment(r, doc)
    if r.errors:
        raise DecodeError(described, r.errors)
    return obj
