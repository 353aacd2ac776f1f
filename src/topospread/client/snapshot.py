"""``topospread snapshot``: what was read from a cluster, as one ``kind: List`` file.

The objects are written as the server sent them, less ``metadata.managedFields`` (server
bookkeeping, often half the bytes). With ``anonymize`` every name, namespace, label value,
selector value, image, inline disk identity and uid is replaced consistently (the same
original always gets the same stand-in, wherever it appears), and free text the scheduler
never reads (annotations, environment, commands, addresses) is dropped, so that decisions
on the snapshot are the decisions on the cluster, under other names.

Storage objects are linked by name, and every link is renamed from one table: claims
(pod volumes, PV ``claimRef``), volumes (``volumeName``, VolumeAttachment sources),
StorageClasses (claims, volumes, claim templates, CSIStorageCapacities, the beta class
annotation), nodes (CSINodes are named as their node; ``selected-node``), and label
values under the same key in node labels, PV node affinity, ``allowedTopologies`` and
capacity ``nodeTopology``. Names that controllers derive keep their derivation
(``<set>-<ordinal>`` pods, ``<template>-<set>-<ordinal>`` and ``<pod>-<volume>`` claims).
CSI driver names and provisioners are kept: they name storage software, not the user's
data, and the volume plugins match them across CSIDrivers, CSINodes, StorageClasses,
volumes and the in-tree plugins they replace. Volume handles and disk identities get
stand-ins; StorageClass parameters, secrets and volume attributes are dropped.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from topospread.client.live import LiveRead
from topospread.errors import InputError
from topospread.io.yamlwrite import dump_yaml
from topospread.model.kinds import KINDS, METADATA_ONLY

__all__ = ["ANONYMIZER_HOOKS", "Anonymizer", "render_snapshot", "write_output"]


def render_snapshot(read: LiveRead, *, fmt: str = "yaml", anonymize: bool = False) -> bytes:
    """The ``kind: List`` document of ``read``'s objects, in YAML or JSON bytes."""
    items = [_without_managed_fields(item) for item in read.items]
    if anonymize:
        items = Anonymizer().objects(items)
    document = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
    if fmt == "json":
        return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
    return dump_yaml(document).encode("utf-8")


def _without_managed_fields(item: dict[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return item
    return {**item, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def write_output(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file, then a rename).

    A symlink is written through: its target is replaced, the link stays.
    """
    target = Path(os.path.realpath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(str(path), message=exc.strerror or str(exc)) from None
        raise


# -- anonymization ------------------------------------------------------------------------

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_NAMESPACE_NAME = "kubernetes.io/metadata.name"

# Annotations the scheduler or the controllers whose choices topospread models read. The
# volume annotations carry a StorageClass or a node name, renamed as those are.
_KEPT_ANNOTATIONS = frozenset(
    {
        "controller.kubernetes.io/pod-deletion-cost",
        "pv.kubernetes.io/bind-completed",
        "pv.kubernetes.io/bound-by-controller",
        "volume.kubernetes.io/storage-provisioner",
        "volume.beta.kubernetes.io/storage-provisioner",
        "storage.alpha.kubernetes.io/migrated-plugins",
        "storageclass.kubernetes.io/is-default-class",
        "volume.beta.kubernetes.io/storage-class",
        "volume.kubernetes.io/selected-node",
    }
)
_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"

# Credentials and free text of volume sources: read by no scheduling decision.
_SOURCE_DROPPED = (
    "secretRef",
    "nodeStageSecretRef",
    "nodePublishSecretRef",
    "controllerPublishSecretRef",
    "controllerExpandSecretRef",
    "nodeExpandSecretRef",
    "volumeAttributes",
    "keyring",
    "user",
    "initiatorName",
    "chapAuthDiscovery",
    "chapAuthSession",
    "portals",
)

# The identity of each in-tree or CSI volume source that the volume plugins compare
# between pods and volumes (VolumeRestrictions, NodeVolumeLimits' unique handles): one
# table for every kind, so that equal stays equal.
_DISK_FIELDS = {
    "gcePersistentDisk": ("pdName",),
    "awsElasticBlockStore": ("volumeID",),
    "azureDisk": ("diskName", "diskURI"),
    "azureFile": ("shareName", "secretName"),
    "cinder": ("volumeID",),
    "portworxVolume": ("volumeID",),
    "vsphereVolume": ("volumePath", "storagePolicyName", "storagePolicyID"),
    "csi": ("volumeHandle",),
}

# Paths and servers of file and local volumes.
_PATH_FIELDS = {"hostPath": ("path",), "local": ("path",), "nfs": ("server", "path")}

_WELL_KNOWN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

# Pod-spec fields read by no scheduling decision and often private.
_CONTAINER_DROPPED = (
    "env",
    "envFrom",
    "command",
    "args",
    "workingDir",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "volumeMounts",
)


class Anonymizer:
    """Consistent stand-ins: ``node-1``, ``ns-2``, ``value-3``, ``image-4``..."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[str, str]] = {}

    def _name(self, category: str, original: str) -> str:
        table = self._maps.setdefault(category, {})
        found = table.get(original)
        if found is None:
            found = table[original] = f"{category}-{len(table) + 1}"
        return found

    def node(self, name: str) -> str:
        """The stand-in of a node name (also used for ``kubernetes.io/hostname`` values)."""
        return self._name("node", name)

    def namespace(self, name: str) -> str:
        """The stand-in of a namespace name; the namespaces every cluster has are kept."""
        if name in _WELL_KNOWN_NAMESPACES:
            return name
        return self._name("ns", name)

    def value(self, key: str, value: str) -> str:
        """The stand-in of a label value under ``key`` (the same for selectors)."""
        if not value:
            return value
        if key == LABEL_HOSTNAME:
            return self.node(value)
        if key == LABEL_NAMESPACE_NAME:
            return self.namespace(value)
        return self._name("value", value)

    def objects(self, items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Anonymized deep copies of ``items``."""
        items = list(items)
        self._link_names(items)
        return [self.anonymize(orjson.loads(orjson.dumps(item))) for item in items]

    def _link_names(self, items: list[dict[str, Any]]) -> None:
        # Names that controllers derive from other names keep their derivation, whatever
        # order the objects come in: a StatefulSet's pods are <set>-<ordinal> and its
        # claims <template>-<set>-<ordinal>; a generic ephemeral volume's claim is
        # <pod>-<volume>, and VolumeBinding finds it by that name.
        sets: dict[str, tuple[str, list[str]]] = {}
        for item in items:
            meta = item.get("metadata")
            spec = item.get("spec")
            if item.get("kind") != "StatefulSet" or not isinstance(meta, dict):
                continue
            name, namespace = meta.get("name"), meta.get("namespace") or ""
            if not isinstance(name, str) or not isinstance(spec, dict):
                continue
            templates = [
                t["metadata"]["name"]
                for t in _dicts(spec.get("volumeClaimTemplates"))
                if isinstance(t.get("metadata"), dict)
                and isinstance(t["metadata"].get("name"), str)
            ]
            sets[f"{namespace}/{name}"] = (name, templates)
        pods = self._maps.setdefault("pod", {})
        claims = self._maps.setdefault("persistentvolumeclaim", {})
        for item in items:
            meta = item.get("metadata")
            if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
                continue
            name, namespace = meta["name"], meta.get("namespace") or ""
            if item.get("kind") == "Pod":
                owner = next(
                    (
                        o
                        for o in _dicts(meta.get("ownerReferences"))
                        if o.get("kind") == "StatefulSet" and isinstance(o.get("name"), str)
                    ),
                    None,
                )
                ordinal = _ordinal(name, owner["name"]) if owner is not None else None
                if owner is not None and ordinal is not None and name not in pods:
                    pods[name] = f"{self._name('statefulset', owner['name'])}-{ordinal}"
                spec = item.get("spec")
                volumes = _dicts(spec.get("volumes")) if isinstance(spec, dict) else []
                for volume in volumes:
                    volume_name = volume.get("name")
                    if "ephemeral" in volume and isinstance(volume_name, str):
                        claim = f"{name}-{volume_name}"
                        if claim not in claims:
                            claims[claim] = (
                                f"{self._name('pod', name)}-{self._name('volume', volume_name)}"
                            )
            elif item.get("kind") == "PersistentVolumeClaim":
                for set_name, templates in sets.values():
                    for template in templates:
                        ordinal = _ordinal(name, f"{template}-{set_name}")
                        if ordinal is not None and name not in claims:
                            claims[name] = (
                                f"{self._name('persistentvolumeclaim', template)}-"
                                f"{self._name('statefulset', set_name)}-{ordinal}"
                            )

    def anonymize(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Anonymize one object in place and return it."""
        kind = str(obj.get("kind", ""))
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            self._metadata(kind, meta)
        hook = ANONYMIZER_HOOKS.get(_ANONYMIZER_OF.get(kind, METADATA_ONLY))
        if hook is not None:
            hook(self, obj)
        return obj

    # One hook per kind that has more than metadata to anonymize, named by the kinds
    # table's ``anonymizer`` (topospread.model.kinds.KINDS); each reads ``spec`` and
    # ``status`` as the server sent them, of any shape.

    def _node(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            spec.pop("podCIDR", None)
            spec.pop("podCIDRs", None)
            spec.pop("providerID", None)
            self._taints(spec.get("taints"))
        if isinstance(status, dict):
            status.pop("addresses", None)
            status.pop("nodeInfo", None)
            status.pop("daemonEndpoints", None)
            for image in _dicts(status.get("images")):
                image["names"] = [self._name("image", str(n)) for n in image.get("names") or []]

    def _pod(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            self._pod_spec(spec)
        if isinstance(status, dict):
            for dropped in (
                "podIP",
                "podIPs",
                "hostIP",
                "hostIPs",
                "message",
                "containerStatuses",
                "initContainerStatuses",
                "ephemeralContainerStatuses",
            ):
                status.pop(dropped, None)
            if isinstance(status.get("nominatedNodeName"), str):
                status["nominatedNodeName"] = self.node(status["nominatedNodeName"])
            for claim_status in _dicts(status.get("resourceClaimStatuses")):
                self._rename(claim_status, "resourceClaimName", "resourceclaim")

    def _service(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for dropped in (
                "clusterIP",
                "clusterIPs",
                "externalIPs",
                "loadBalancerIP",
                "externalName",
            ):
                spec.pop(dropped, None)
            self._string_map_values(spec.get("selector"))
        obj.pop("status", None)

    def _replication_controller(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            self._string_map_values(spec.get("selector"))
            self._template(spec.get("template"))

    def _workload(self, obj: dict[str, Any]) -> None:
        # ReplicaSets, StatefulSets, Deployments and DaemonSets: a selector and a template.
        spec = obj.get("spec")
        if isinstance(spec, dict):
            self._selector(spec.get("selector"))
            self._template(spec.get("template"))
            if isinstance(spec.get("serviceName"), str):
                spec["serviceName"] = self._name("service", spec["serviceName"])
            for claim in _dicts(spec.get("volumeClaimTemplates")):
                if isinstance(claim.get("metadata"), dict):
                    self._metadata("PersistentVolumeClaim", claim["metadata"])
                if isinstance(claim.get("spec"), dict):
                    self._claim_spec(claim["spec"])

    def _runtime_class(self, obj: dict[str, Any]) -> None:
        if isinstance(obj.get("scheduling"), dict):
            # Merged into the pods that name the class: anonymized as a pod's would be.
            self._pod_spec_placement(obj["scheduling"])

    def _pod_disruption_budget(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            self._selector(spec.get("selector"))

    def _persistent_volume_claim(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            self._claim_spec(spec)
        if isinstance(status, dict):
            status.pop("conditions", None)

    def _persistent_volume(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            self._volume_spec(spec)
        if isinstance(status, dict):
            status.pop("message", None)
            status.pop("reason", None)

    def _storage_class(self, obj: dict[str, Any]) -> None:
        # The provisioner is a driver name: kept, as CSI driver names are (they name
        # software, not the user's data, and the scheduler matches them to CSINodes).
        obj.pop("parameters", None)
        obj.pop("mountOptions", None)
        for term in _dicts(obj.get("allowedTopologies")):
            for requirement in _dicts(term.get("matchLabelExpressions")):
                key = str(requirement.get("key", ""))
                values = requirement.get("values")
                if isinstance(values, list):
                    requirement["values"] = [
                        self.value(key, v) if isinstance(v, str) else v for v in values
                    ]

    def _csi_node(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for driver in _dicts(spec.get("drivers")):
                if isinstance(driver.get("nodeID"), str):
                    driver["nodeID"] = self._name("nodeid", driver["nodeID"])

    def _csi_storage_capacity(self, obj: dict[str, Any]) -> None:
        self._class_name(obj, "storageClassName")
        self._selector(obj.get("nodeTopology"))

    def _volume_attachment(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            if isinstance(spec.get("nodeName"), str):
                spec["nodeName"] = self.node(spec["nodeName"])
            source = spec.get("source")
            if isinstance(source, dict):
                if isinstance(source.get("persistentVolumeName"), str):
                    source["persistentVolumeName"] = self._name(
                        "persistentvolume", source["persistentVolumeName"]
                    )
                if isinstance(source.get("inlineVolumeSpec"), dict):
                    self._volume_spec(source["inlineVolumeSpec"])
        if isinstance(status, dict):
            for dropped in ("attachmentMetadata", "attachError", "detachError"):
                status.pop(dropped, None)

    # Dynamic resource allocation: claim, template, class and pool names get stand-ins
    # wherever they link objects; driver names, device names, attributes and CEL
    # selectors are kept (they name hardware and software, and the allocator reads them);
    # opaque driver configuration is dropped.

    def _resource_claim(self, obj: dict[str, Any]) -> None:
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            self._device_claim(spec.get("devices"))
        if isinstance(status, dict):
            self._claim_status(status)

    def _resource_claim_template(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            template = spec.get("metadata")
            if isinstance(template, dict):
                self._string_map_values(template.get("labels"))
                template.pop("annotations", None)
            if isinstance(spec.get("spec"), dict):
                self._device_claim(spec["spec"].get("devices"))

    def _device_class(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.pop("config", None)

    def _resource_slice(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            self._node_placement(spec)
            pool = spec.get("pool")
            if isinstance(pool, dict) and isinstance(pool.get("name"), str):
                pool["name"] = self._name("pool", pool["name"])
            for device in _dicts(spec.get("devices")):
                self._node_placement(device)

    def _device_taint_rule(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            selector = spec.get("deviceSelector")
            if isinstance(selector, dict):
                self._rename(selector, "deviceClassName", "deviceclass")
                self._rename(selector, "pool", "pool")

    def _rename(self, data: dict[str, Any], key: str, category: str) -> None:
        if isinstance(data.get(key), str) and data[key]:
            data[key] = self._name(category, data[key])

    def _node_placement(self, data: dict[str, Any]) -> None:
        if isinstance(data.get("nodeName"), str):
            data["nodeName"] = self.node(data["nodeName"])
        selector = data.get("nodeSelector")
        if isinstance(selector, dict):
            for term in _dicts(selector.get("nodeSelectorTerms")):
                self._node_selector_term(term)

    def _device_claim(self, devices: object) -> None:
        if not isinstance(devices, dict):
            return
        devices.pop("config", None)
        for request in _dicts(devices.get("requests")):
            exactly = request.get("exactly")
            if isinstance(exactly, dict):
                self._rename(exactly, "deviceClassName", "deviceclass")
            for sub in _dicts(request.get("firstAvailable")):
                self._rename(sub, "deviceClassName", "deviceclass")

    def _claim_status(self, status: dict[str, Any]) -> None:
        status.pop("devices", None)
        allocation = status.get("allocation")
        if isinstance(allocation, dict):
            self._node_placement(allocation)
            devices = allocation.get("devices")
            if isinstance(devices, dict):
                devices.pop("config", None)
                for result in _dicts(devices.get("results")):
                    self._rename(result, "pool", "pool")
        for consumer in _dicts(status.get("reservedFor")):
            if consumer.get("resource") == "pods":
                self._rename(consumer, "name", "pod")
            elif isinstance(consumer.get("name"), str):
                consumer["name"] = self._name("consumer", consumer["name"])
            if isinstance(consumer.get("uid"), str):
                consumer["uid"] = self._uid(consumer["uid"])

    def _class_name(self, data: dict[str, Any], key: str) -> None:
        # A StorageClass name where it is referenced; "" (no class) stays "".
        if isinstance(data.get(key), str) and data[key]:
            data[key] = self._name("storageclass", data[key])

    def _claim_spec(self, spec: dict[str, Any]) -> None:
        self._class_name(spec, "storageClassName")
        if isinstance(spec.get("volumeName"), str) and spec["volumeName"]:
            spec["volumeName"] = self._name("persistentvolume", spec["volumeName"])
        self._selector(spec.get("selector"))
        spec.pop("dataSource", None)
        spec.pop("dataSourceRef", None)

    def _volume_spec(self, spec: dict[str, Any]) -> None:
        self._class_name(spec, "storageClassName")
        claim = spec.get("claimRef")
        if isinstance(claim, dict):
            if isinstance(claim.get("name"), str):
                claim["name"] = self._name("persistentvolumeclaim", claim["name"])
            if isinstance(claim.get("namespace"), str):
                claim["namespace"] = self.namespace(claim["namespace"])
            if isinstance(claim.get("uid"), str):
                claim["uid"] = self._uid(claim["uid"])
            for dropped in ("resourceVersion", "fieldPath", "apiVersion"):
                claim.pop(dropped, None)
        affinity = spec.get("nodeAffinity")
        if isinstance(affinity, dict) and isinstance(affinity.get("required"), dict):
            for term in _dicts(affinity["required"].get("nodeSelectorTerms")):
                self._node_selector_term(term)
        spec.pop("mountOptions", None)
        self._inline_disk(spec)

    def _metadata(self, kind: str, meta: dict[str, Any]) -> None:
        name = meta.get("name")
        if isinstance(name, str):
            if kind in ("Node", "CSINode"):
                # A CSINode is named as its node.
                meta["name"] = self.node(name)
            elif kind in ("CSIDriver", "RuntimeClass"):
                # A driver name, matched against CSINodes and provisioners; a runtime
                # handler's class, named by pods' runtimeClassName: kept.
                pass
            elif kind == "Namespace":
                meta["name"] = self.namespace(name)
            else:
                meta["name"] = self._name(kind.lower() or "object", name)
        if isinstance(meta.get("namespace"), str):
            meta["namespace"] = self.namespace(meta["namespace"])
        if isinstance(meta.get("uid"), str):
            meta["uid"] = self._uid(meta["uid"])
        for dropped in ("generateName", "selfLink", "managedFields", "finalizers"):
            meta.pop(dropped, None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            kept = {k: v for k, v in annotations.items() if k in _KEPT_ANNOTATIONS}
            if isinstance(kept.get(_CLASS_ANNOTATION), str):
                self._class_name(kept, _CLASS_ANNOTATION)
            if isinstance(kept.get(_NODE_ANNOTATION), str):
                kept[_NODE_ANNOTATION] = self.node(kept[_NODE_ANNOTATION])
            if kept:
                meta["annotations"] = kept
            else:
                meta.pop("annotations")
        self._string_map_values(meta.get("labels"))
        for owner in _dicts(meta.get("ownerReferences")):
            owner_kind = str(owner.get("kind", ""))
            if isinstance(owner.get("name"), str):
                if owner_kind == "Node":
                    owner["name"] = self.node(owner["name"])
                else:
                    owner["name"] = self._name(owner_kind.lower() or "object", owner["name"])
            if isinstance(owner.get("uid"), str):
                owner["uid"] = self._uid(owner["uid"])

    def _uid(self, uid: str) -> str:
        number = int(self._name("uid", uid).rpartition("-")[2])
        return f"00000000-0000-4000-8000-{number:012d}"

    def _string_map_values(self, labels: object) -> None:
        if isinstance(labels, dict):
            for key, value in list(labels.items()):
                if isinstance(value, str):
                    labels[key] = self.value(str(key), value)

    def _selector(self, selector: object) -> None:
        if not isinstance(selector, dict):
            return
        self._string_map_values(selector.get("matchLabels"))
        for requirement in _dicts(selector.get("matchExpressions")):
            key = str(requirement.get("key", ""))
            values = requirement.get("values")
            if isinstance(values, list):
                requirement["values"] = [
                    self.value(key, v) if isinstance(v, str) else v for v in values
                ]

    def _node_selector_requirements(self, requirements: object, *, fields: bool) -> None:
        for requirement in _dicts(requirements):
            operator = requirement.get("operator")
            if operator in {"Gt", "Lt"}:
                continue  # integers compared by value: kept
            key = str(requirement.get("key", ""))
            values = requirement.get("values")
            if not isinstance(values, list):
                continue
            if fields:  # matchFields: only metadata.name, a node name
                requirement["values"] = [self.node(v) if isinstance(v, str) else v for v in values]
            else:
                requirement["values"] = [
                    self.value(key, v) if isinstance(v, str) else v for v in values
                ]

    def _node_selector_term(self, term: object) -> None:
        if isinstance(term, dict):
            self._node_selector_requirements(term.get("matchExpressions"), fields=False)
            self._node_selector_requirements(term.get("matchFields"), fields=True)

    def _pod_affinity_term(self, term: object) -> None:
        if not isinstance(term, dict):
            return
        self._selector(term.get("labelSelector"))
        self._selector(term.get("namespaceSelector"))
        namespaces = term.get("namespaces")
        if isinstance(namespaces, list):
            term["namespaces"] = [
                self.namespace(n) if isinstance(n, str) else n for n in namespaces
            ]

    def _taints(self, taints: object) -> None:
        for taint in _dicts(taints):
            if isinstance(taint.get("value"), str):
                taint["value"] = self.value(str(taint.get("key", "")), taint["value"])

    def _template(self, template: object) -> None:
        if not isinstance(template, dict):
            return
        if isinstance(template.get("metadata"), dict):
            meta = template["metadata"]
            self._string_map_values(meta.get("labels"))
            annotations = meta.get("annotations")
            if isinstance(annotations, dict):
                kept = {k: v for k, v in annotations.items() if k in _KEPT_ANNOTATIONS}
                meta["annotations"] = kept
                if not kept:
                    meta.pop("annotations")
            meta.pop("name", None)
        if isinstance(template.get("spec"), dict):
            self._pod_spec(template["spec"])

    def _pod_spec_placement(self, spec: dict[str, Any]) -> None:
        self._string_map_values(spec.get("nodeSelector"))
        for toleration in _dicts(spec.get("tolerations")):
            if isinstance(toleration.get("value"), str):
                key = str(toleration.get("key", ""))
                toleration["value"] = self.value(key, toleration["value"])

    def _pod_spec(self, spec: dict[str, Any]) -> None:
        if isinstance(spec.get("nodeName"), str):
            spec["nodeName"] = self.node(spec["nodeName"])
        self._pod_spec_placement(spec)
        for constraint in _dicts(spec.get("topologySpreadConstraints")):
            self._selector(constraint.get("labelSelector"))
        affinity = spec.get("affinity")
        if isinstance(affinity, dict):
            node_affinity = affinity.get("nodeAffinity")
            if isinstance(node_affinity, dict):
                required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
                if isinstance(required, dict):
                    for term in _dicts(required.get("nodeSelectorTerms")):
                        self._node_selector_term(term)
                for preferred in _dicts(
                    node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
                ):
                    self._node_selector_term(preferred.get("preference"))
            for which in ("podAffinity", "podAntiAffinity"):
                section = affinity.get(which)
                if not isinstance(section, dict):
                    continue
                for term in _dicts(section.get("requiredDuringSchedulingIgnoredDuringExecution")):
                    self._pod_affinity_term(term)
                for weighted in _dicts(
                    section.get("preferredDuringSchedulingIgnoredDuringExecution")
                ):
                    self._pod_affinity_term(weighted.get("podAffinityTerm"))
        for dropped in (
            "hostname",
            "subdomain",
            "serviceAccountName",
            "serviceAccount",
            "imagePullSecrets",
            "hostAliases",
            "dnsConfig",
        ):
            spec.pop(dropped, None)
        for field_name in ("containers", "initContainers", "ephemeralContainers"):
            for number, container in enumerate(_dicts(spec.get(field_name)), start=1):
                for dropped in _CONTAINER_DROPPED:
                    container.pop(dropped, None)
                container["name"] = f"{field_name.removesuffix('s').lower()}-{number}"
                if isinstance(container.get("image"), str):
                    container["image"] = self._name("image", container["image"])
        for claim_ref in _dicts(spec.get("resourceClaims")):
            self._rename(claim_ref, "resourceClaimName", "resourceclaim")
            self._rename(claim_ref, "resourceClaimTemplateName", "resourceclaimtemplate")
        for volume in _dicts(spec.get("volumes")):
            volume["name"] = self._name("volume", str(volume.get("name", "")))
            claim = volume.get("persistentVolumeClaim")
            if isinstance(claim, dict) and isinstance(claim.get("claimName"), str):
                claim["claimName"] = self._name("persistentvolumeclaim", claim["claimName"])
            for private in ("secret", "configMap", "projected", "downwardAPI"):
                if private in volume:
                    volume[private] = {}
            ephemeral = volume.get("ephemeral")
            if isinstance(ephemeral, dict):
                template = ephemeral.get("volumeClaimTemplate")
                if isinstance(template, dict):
                    if isinstance(template.get("metadata"), dict):
                        self._string_map_values(template["metadata"].get("labels"))
                        template["metadata"].pop("annotations", None)
                    if isinstance(template.get("spec"), dict):
                        self._claim_spec(template["spec"])
            self._inline_disk(volume)

    def _inline_disk(self, volume: dict[str, Any]) -> None:
        # VolumeRestrictions compares these identities between pods on a node: each gets a
        # consistent stand-in (one table for every kind, so equal stays equal); credentials
        # and free text go.
        for source_name, fields in _DISK_FIELDS.items():
            source = volume.get(source_name)
            if not isinstance(source, dict):
                continue
            for field_name in fields:
                if isinstance(source.get(field_name), str) and source[field_name]:
                    source[field_name] = self._name("disk", source[field_name])
            if isinstance(source.get("secretNamespace"), str):
                source["secretNamespace"] = self.namespace(source["secretNamespace"])
            for dropped in _SOURCE_DROPPED:
                source.pop(dropped, None)
        for source_name, fields in _PATH_FIELDS.items():
            source = volume.get(source_name)
            if isinstance(source, dict):
                for field_name in fields:
                    if isinstance(source.get(field_name), str):
                        stand_in = self._name(field_name, source[field_name])
                        source[field_name] = f"/{stand_in}" if field_name == "path" else stand_in
        iscsi = volume.get("iscsi")
        if isinstance(iscsi, dict):
            if isinstance(iscsi.get("iqn"), str):
                iscsi["iqn"] = f"iqn.2000-01.invalid.topospread:{self._name('disk', iscsi['iqn'])}"
            if isinstance(iscsi.get("targetPortal"), str):
                iscsi["targetPortal"] = self._name("portal", iscsi["targetPortal"])
            for dropped in (
                "portals",
                "secretRef",
                "initiatorName",
                "chapAuthDiscovery",
                "chapAuthSession",
            ):
                iscsi.pop(dropped, None)
        rbd = volume.get("rbd")
        if isinstance(rbd, dict):
            if isinstance(rbd.get("image"), str):
                rbd["image"] = self._name("disk", rbd["image"])
            if isinstance(rbd.get("pool"), str) and rbd["pool"] != "rbd":
                rbd["pool"] = self._name("pool", rbd["pool"])
            monitors = rbd.get("monitors")
            if isinstance(monitors, list):
                rbd["monitors"] = [
                    self._name("monitor", m) if isinstance(m, str) else m for m in monitors
                ]
            for dropped in ("secretRef", "keyring", "user"):
                rbd.pop(dropped, None)


ANONYMIZER_HOOKS: Final[Mapping[str, Callable[[Anonymizer, dict[str, Any]], None]]] = {
    "node": Anonymizer._node,
    "pod": Anonymizer._pod,
    "service": Anonymizer._service,
    "replication_controller": Anonymizer._replication_controller,
    "workload": Anonymizer._workload,
    "runtime_class": Anonymizer._runtime_class,
    "pod_disruption_budget": Anonymizer._pod_disruption_budget,
    "persistent_volume_claim": Anonymizer._persistent_volume_claim,
    "persistent_volume": Anonymizer._persistent_volume,
    "storage_class": Anonymizer._storage_class,
    "csi_node": Anonymizer._csi_node,
    "csi_storage_capacity": Anonymizer._csi_storage_capacity,
    "volume_attachment": Anonymizer._volume_attachment,
    "resource_claim": Anonymizer._resource_claim,
    "resource_claim_template": Anonymizer._resource_claim_template,
    "device_class": Anonymizer._device_class,
    "resource_slice": Anonymizer._resource_slice,
    "device_taint_rule": Anonymizer._device_taint_rule,
}
"""The anonymizer hooks the kinds table names (:attr:`topospread.model.kinds.Kind.anonymizer`);
:data:`~topospread.model.kinds.METADATA_ONLY` and kinds outside the table have none."""

_ANONYMIZER_OF: Final[Mapping[str, str]] = {k.kind: k.anonymizer for k in KINDS}


def _ordinal(name: str, prefix: str) -> str | None:
    # The ordinal of a StatefulSet-derived name <prefix>-<ordinal>, if ``name`` is one.
    head, dash, tail = name.rpartition("-")
    return tail if dash and head == prefix and tail.isdigit() else None


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
