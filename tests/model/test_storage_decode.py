"""The storage kinds are read like every other kind: strictly, with the API server's
defaults, from files, lists and raw API responses, and pods and StatefulSets carry their
volumes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from topospread.engine.cluster import Cluster
from topospread.errors import InputError
from topospread.io import decode_objects, load_cluster
from topospread.model.decode import decode_workload
from topospread.model.objects import InTreeSource, Pod, StatefulSet
from topospread.model.storage import (
    CSIDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "storage"


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    found, notes = load_cluster([DATA / "cluster.yaml"])
    assert notes == []
    return found


def _one(doc: dict[str, Any]) -> Any:
    objects, _ = decode_objects([doc], "s.yaml")
    [obj] = objects
    return obj


def test_every_storage_kind_of_a_file_reaches_the_scheduler_listers(cluster: Cluster) -> None:
    objects = cluster.objects
    pv = objects.persistent_volume("pv-data-web-0")
    claim = objects.persistent_volume_claim("shop", "data-web-0")
    assert pv is not None
    assert claim is not None
    assert pv.claim_ref is not None
    assert pv.claim_ref.name == claim.name
    assert claim.spec.volume_name == pv.name
    assert claim.phase == "Bound"
    assert objects.storage_class("zonal") is not None
    assert [d.name for d in objects.csi_node("node-b").drivers] == ["ebs.csi.aws.com"]  # type: ignore[union-attr]
    assert objects.csi_node("node-b").drivers[0].allocatable_count == 25  # type: ignore[union-attr]
    assert objects.csi_driver("ebs.csi.aws.com") is not None
    assert [c.storage_class_name for c in objects.csi_storage_capacities] == ["zonal"]
    assert [va.persistent_volume_name for va in objects.volume_attachments_on("node-b")] == [
        "pv-data-web-0"
    ]
    assert list(objects.volume_attachments_on("node-a")) == []


def test_a_volume_keeps_its_csi_source_and_node_affinity(cluster: Cluster) -> None:
    pv = cluster.objects.persistent_volume("pv-data-web-0")
    assert pv is not None
    assert pv.csi is not None
    assert (pv.csi.driver, pv.csi.volume_handle) == (
        "ebs.csi.aws.com",
        "vol-0123",
    )
    assert pv.sources == ("csi",)
    assert pv.node_affinity is not None
    [term] = pv.node_affinity.node_selector_terms
    [requirement] = term.match_expressions
    assert (requirement.key, requirement.operator, requirement.values) == (
        "topology.ebs.csi.aws.com/zone",
        "In",
        ("zone-b",),
    )
    assert pv.capacity is not None
    assert pv.capacity.value() == 10 * 2**30


def test_the_api_server_defaults_are_applied_on_decode(cluster: Cluster) -> None:
    standard = cluster.objects.storage_class("standard")
    assert standard is not None
    assert standard.volume_binding_mode == "Immediate"
    scratch = cluster.objects.persistent_volume_claim("shop", "scratch")
    assert scratch is not None
    assert (scratch.spec.volume_mode, scratch.phase) == ("Filesystem", "Pending")
    driver = cluster.objects.csi_driver("ebs.csi.aws.com")
    assert driver == CSIDriver(
        driver.metadata,  # type: ignore[union-attr]
        attach_required=True,
        storage_capacity=True,
        prevent_pod_scheduling_if_missing=False,
    )
    pv = _one(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "disk"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "azureDisk": {"diskName": "d", "diskURI": "uri"},
            },
        }
    )
    assert isinstance(pv, PersistentVolume)
    assert (pv.volume_mode, pv.phase) == ("Filesystem", "Pending")
    assert pv.in_tree == InTreeSource(
        "azureDisk",
        {
            "cachingMode": "ReadWrite",
            "fsType": "ext4",
            "readOnly": "false",
            "kind": "Shared",
            "diskName": "d",
            "diskURI": "uri",
        },
    )


def test_a_pod_lists_its_claims_ephemeral_in_tree_and_inline_csi_volumes(
    cluster: Cluster,
) -> None:
    [pod] = cluster.pods
    data, cache, legacy, inline = pod.volumes
    assert (data.claim_name, data.claim_for(pod.name)) == ("data-web-0", "data-web-0")
    assert cache.ephemeral is not None
    assert cache.claim_for(pod.name) == "web-0-cache"
    assert cache.ephemeral.spec.storage_class_name == "zonal"
    assert legacy.in_tree == InTreeSource(
        "awsElasticBlockStore", {"volumeID": "vol-legacy", "fsType": "ext4"}
    )
    assert inline.csi is not None
    assert inline.csi.driver == "inline.csi.example.com"
    # What other plugins read stays as it was.
    assert pod.volume_claims == ("data", "cache")
    assert [v.aws_elastic_block_store for v in pod.inline_volumes] == ["vol-legacy"]


def test_in_tree_scalars_are_kept_as_strings_as_csi_translation_reads_them() -> None:
    pod = _one(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "volumes": [
                    {
                        "name": "pd",
                        "gcePersistentDisk": {"pdName": "disk-1", "partition": 2, "readOnly": True},
                    }
                ]
            },
        }
    )
    assert isinstance(pod, Pod)
    assert pod.volumes[0].in_tree == InTreeSource(
        "gcePersistentDisk", {"pdName": "disk-1", "partition": "2", "readOnly": "true"}
    )


def test_a_stateful_set_carries_its_claim_templates_everywhere_it_is_decoded(
    cluster: Cluster,
) -> None:
    [listed] = cluster.objects.stateful_sets
    doc = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "10Gi"}},
                    },
                }
            ],
        },
    }
    full = decode_workload(doc)
    assert isinstance(full, StatefulSet)
    for ss in (listed, full):
        [template] = ss.volume_claim_templates
        assert (template.metadata.name, template.metadata.namespace) == ("data", "shop")
        assert template.spec.storage_request is not None
        assert template.spec.storage_request.value() == 10 * 2**30
    assert (listed.claim_retention_when_scaled, listed.claim_retention_when_deleted) == (
        "Delete",
        "Retain",
    )
    assert (full.claim_retention_when_scaled, full.claim_retention_when_deleted) == (
        "Retain",
        "Retain",
    )


def test_raw_api_lists_of_storage_kinds_take_kind_and_version_from_the_list() -> None:
    raw = {
        "kind": "StorageClassList",
        "apiVersion": "storage.k8s.io/v1",
        "items": [{"metadata": {"name": "fast"}, "provisioner": "pd.csi.storage.gke.io"}],
    }
    claims = {
        "kind": "PersistentVolumeClaimList",
        "apiVersion": "v1",
        "items": [
            {
                "metadata": {"name": "c", "namespace": "ns"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    }
    objects, skipped = decode_objects([raw, claims], "GET")
    assert [type(o) for o in objects] == [StorageClass, PersistentVolumeClaim]
    assert skipped == ()


def test_a_storage_kind_with_another_api_version_is_an_error() -> None:
    with pytest.raises(InputError) as info:
        decode_objects(
            [{"apiVersion": "storage.k8s.io/v1beta1", "kind": "CSIStorageCapacity"}], "c.yaml"
        )
    assert info.value.lines() == [
        'c.yaml: apiVersion: Unsupported value: "storage.k8s.io/v1beta1": '
        'supported values: "storage.k8s.io/v1"'
    ]


def test_a_field_of_the_wrong_type_is_one_line_with_its_path() -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": "ReadWriteOnce", "resources": {"requests": {"storage": "-1Gi"}}},
    }
    with pytest.raises(InputError) as info:
        decode_objects([claim], "c.yaml")
    assert info.value.lines() == [
        'c.yaml: spec.accessModes: Invalid value: "ReadWriteOnce": expected array, got string',
        'c.yaml: spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero',
    ]
    volume = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"volumes": [{"name": "v", "csi": {"driver": 7}}]},
    }
    with pytest.raises(InputError) as info:
        decode_objects([volume], "p.yaml")
    assert info.value.lines() == [
        "p.yaml: spec.volumes[0].csi.driver: Invalid value: 7: expected string, got number"
    ]


def test_a_capacity_must_be_one_positive_storage_quantity() -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {
            "capacity": {"storage": "0", "cpu": "1"},
            "accessModes": ["ReadWriteOnce"],
            "local": {"path": "/mnt"},
        },
    }
    with pytest.raises(InputError) as info:
        decode_objects([pv], "pv.yaml")
    assert info.value.lines() == [
        'pv.yaml: spec.capacity: Unsupported value: {"cpu":"1","storage":"0"}: '
        'supported values: "storage"',
        'pv.yaml: spec.capacity[storage]: Invalid value: "0": must be greater than zero',
    ]


def test_the_same_volume_twice_is_refused_naming_both_places(tmp_path: Path) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "d", "volumeHandle": "h"},
        },
    }
    capture = tmp_path / "capture.yaml"
    capture.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pv, pv]}))
    with pytest.raises(InputError) as info:
        load_cluster([capture])
    assert info.value.lines() == [
        f"{capture}: items[1]: duplicate PersistentVolume pv (first in {capture}: items[0])"
    ]


def test_objects_read_from_a_cluster_are_decoded_but_not_validated_again() -> None:
    # Validation ratchets: a stored class keeps a parameter key newer rules would refuse.
    stored = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "legacy", "uid": "u"},
        "provisioner": "Bad Provisioner",
    }
    objects, _ = decode_objects([stored], "server", admitted=True)
    assert isinstance(objects[0], StorageClass)
    # A file's object with a uid was read back from a server too: decoded as stored.
    objects, _ = decode_objects([stored], "file.yaml")
    assert isinstance(objects[0], StorageClass)
    # Without a uid it is a manifest: validated as a create.
    manifest = {**stored, "metadata": {"name": "legacy"}}
    with pytest.raises(InputError, match="provisioner: Invalid value"):
        decode_objects([manifest], "file.yaml")
