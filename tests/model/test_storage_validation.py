"""Storage objects written by hand are checked as the API server checks them on create,
in its words, one line per problem naming the file, the object and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from topospread.errors import InputError
from topospread.io import decode_objects, load_cluster
from topospread.model.objects import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
)
from topospread.model.storage import PersistentVolume
from topospread.model.validation import validate_persistent_volume

DATA = Path(__file__).resolve().parents[1] / "data" / "storage"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _problems(doc: dict[str, Any]) -> list[str]:
    try:
        decode_objects([doc], "s.yaml")
    except InputError as error:
        return error.lines()
    return []


def test_the_linked_cluster_fixture_is_valid() -> None:
    load_cluster([DATA / "cluster.yaml"])


def test_each_mistake_of_the_invalid_file_is_one_line_in_the_api_servers_words() -> None:
    source = str(DATA / "invalid.yaml")
    pv, claim = (
        f"{source}: PersistentVolume no-source",
        f"{source}: PersistentVolumeClaim default/claim",
    )
    with pytest.raises(InputError) as info:
        load_cluster([DATA / "invalid.yaml"])
    assert info.value.lines() == [
        f"{source}: PersistentVolume two-sources: spec.accessModes: Forbidden: "
        "may not use ReadWriteOncePod with other access modes",
        f"{source}: PersistentVolume two-sources: spec.csi: Forbidden: "
        "may not specify more than 1 volume type",
        f'{pv}: spec.accessModes: Unsupported value: "ReadWriteSometimes": '
        'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        f"{pv}: spec.capacity: Required value",
        f'{pv}: spec.capacity: Unsupported value: null: supported values: "storage"',
        f"{pv}: spec: Required value: must specify a volume type",
        f'{pv}: spec.storageClassName: Invalid value: "Fast_Disks": {SUBDOMAIN}',
        f'{pv}: spec.volumeMode: Unsupported value: "Folder": '
        'supported values: "Block", "Filesystem"',
        f"{claim}: spec.accessModes: Required value: at least 1 access mode is required",
        f"{claim}: spec.selector.matchExpressions[0].operator: "
        'Invalid value: "Near": not a valid selector operator',
        f"{claim}: spec.resources[storage]: Required value",
        f"{source}: StorageClass zonal: provisioner: Required value",
        f'{source}: StorageClass zonal: volumeBindingMode: Unsupported value: "Sometimes": '
        'supported values: "Immediate", "WaitForFirstConsumer"',
        f"{source}: StorageClass zonal: allowedTopologies[0].matchLabelExpressions[0].values: "
        "Required value",
        f'{source}: CSINode node-a: spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
        f'{source}: CSIStorageCapacity kube-system/capacity: storageClassName: Invalid value: "": '
        f"{SUBDOMAIN}",
        f"{source}: VolumeAttachment attachment: spec.source: Required value: "
        "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
    ]


def test_names_follow_each_kinds_rule() -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "Data", "namespace": "Shop"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1"}}},
    }
    assert _problems(claim) == [
        "s.yaml: PersistentVolumeClaim Shop/Data: metadata.name: "
        f'Invalid value: "Data": {SUBDOMAIN}',
        's.yaml: PersistentVolumeClaim Shop/Data: metadata.namespace: Invalid value: "Shop": '
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "a_b"}}
    assert _problems(driver) == [
        f's.yaml: CSIDriver a_b: metadata.name: Invalid value: "a_b": {SUBDOMAIN}'
    ]


def test_a_provisioner_is_a_qualified_name_and_topology_terms_are_not_repeated() -> None:
    terms = [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}] * 2
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc"},
        "provisioner": "-bad-",
        "allowedTopologies": terms,
    }
    lines = _problems(sc)
    assert lines[0].startswith('s.yaml: StorageClass sc: provisioner: Invalid value: "-bad-": ')
    assert lines[1:] == [
        "s.yaml: StorageClass sc: allowedTopologies[0].matchLabelExpressions[0].values[1]: "
        'Duplicate value: "a"',
        "s.yaml: StorageClass sc: allowedTopologies[1].matchLabelExpressions[0].values[1]: "
        'Duplicate value: "a"',
        's.yaml: StorageClass sc: allowedTopologies[1].matchLabelExpressions: Duplicate value: ""',
    ]


def test_a_local_volume_needs_node_affinity_and_its_terms_are_checked() -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "local"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "local": {"path": "/mnt/disk"},
        },
    }
    assert _problems(pv) == [
        "s.yaml: PersistentVolume local: spec.nodeAffinity: Required value: "
        "Local volume requires node affinity"
    ]
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone"}]}]}}
    pv["spec"] = {**pv["spec"], "nodeAffinity": affinity}  # type: ignore[dict-item]
    assert _problems(pv) == [
        "s.yaml: PersistentVolume local: spec.nodeAffinity.required.nodeSelectorTerms[0]"
        '.matchExpressions[0].operator: Invalid value: "": not a valid selector operator'
    ]
    pv["spec"] = {**pv["spec"], "nodeAffinity": {}}  # type: ignore[dict-item]
    assert _problems(pv) == [
        "s.yaml: spec.nodeAffinity.required: Required value: must specify required node constraints"
    ]


def test_node_affinity_values_must_be_label_values() -> None:
    selector = NodeSelector(
        (NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("not a value",)),)),)
    )
    pv = PersistentVolume(
        metadata=ObjectMeta("pv"),
        access_modes=("ReadWriteOnce",),
        node_affinity=selector,
        sources=("csi",),
    )
    [capacity, capacity_kind, value] = [str(e) for e in validate_persistent_volume(pv)]
    assert (capacity, capacity_kind) == (
        "spec.capacity: Required value",
        'spec.capacity: Unsupported value: null: supported values: "storage"',
    )
    assert value.startswith(
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]: "
        'Invalid value: "not a value"'
    )


def test_csi_nodes_and_attachments_check_their_driver_and_node_names() -> None:
    csi_node = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": "n"},
        "spec": {
            "drivers": [
                {"name": "", "nodeID": "", "topologyKeys": ["zone", "zone"]},
                {"name": "d", "nodeID": "i", "allocatable": {"count": -1}},
            ]
        },
    }
    assert _problems(csi_node) == [
        "s.yaml: CSINode n: spec.drivers[0].name: Required value",
        "s.yaml: CSINode n: spec.drivers[0].nodeID: Required value",
        's.yaml: CSINode n: spec.drivers[0]: Duplicate value: "zone"',
        "s.yaml: CSINode n: spec.drivers[1].allocatable.count: Invalid value: -1: "
        "must be greater than or equal to 0",
    ]
    attachment = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {
            "attacher": "d",
            "nodeName": "Node_1",
            "source": {"persistentVolumeName": "pv", "inlineVolumeSpec": {}},
        },
    }
    assert _problems(attachment) == [
        "s.yaml: VolumeAttachment va: spec.source: Forbidden: "
        "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        f's.yaml: VolumeAttachment va: spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN}',
    ]


def test_a_stateful_sets_claim_templates_and_retention_policy_are_checked() -> None:
    stateful_set = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Keep"},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
        },
    }
    assert _problems(stateful_set) == [
        "s.yaml: StatefulSet default/web: spec.persistentVolumeClaimRetentionPolicy.whenScaled: "
        'Unsupported value: "Keep": supported values: "Retain", "Delete"',
        "s.yaml: StatefulSet default/web: spec.volumeClaimTemplates[0].spec.accessModes: "
        "Required value: at least 1 access mode is required",
        "s.yaml: StatefulSet default/web: spec.volumeClaimTemplates[0].spec.resources[storage]: "
        "Required value",
    ]
