"""NodeVolumeLimits (CSILimits) rule by rule, without the oracle (the fixtures of
tests/data/nodevolumelimits are compared with upstream in tests/differential)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from topospread.engine.cluster import Cluster
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.status import Code, Status
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod, PodVolume
from topospread.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    CSILimits,
    driver_not_installed,
)

Obj = dict[str, Any]
EBS = "ebs.csi.aws.com"
EXCEEDED = Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))


def node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def csinode(name: str, **counts: int | None) -> Obj:
    drivers = []
    for driver, count in counts.items():
        entry: Obj = {"name": driver.replace("_", "."), "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": drivers},
    }


def pv(name: str, source: Obj | None = None, labels: Obj | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            **(source or {"csi": {"driver": EBS, "volumeHandle": f"h-{name}"}}),
        },
    }


def pvc(name: str, volume: str = "", storage_class: str | None = None, **meta: Any) -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": spec,
    }


def storage_class(name: str, provisioner: str) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def pod(name: str, *volumes: Obj, node_name: str = "", uid: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    meta: Obj = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def claim(name: str) -> Obj:
    return {"name": f"v-{name}", "persistentVolumeClaim": {"claimName": name}}


def ebs(volume_id: str) -> Obj:
    return {"name": f"i-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


EPHEMERAL = {
    "name": "scratch",
    "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
}


def decide(
    objects: list[Obj], incoming: Obj | Pod, features: Features = Features()
) -> tuple[Status | None, dict[str, Status | None]]:
    """PreFilter's status, then every node's Filter verdict."""
    cluster = Cluster.from_objects(decode_documents(objects).objects)
    snapshot = cluster.snapshot()
    if isinstance(incoming, Pod):
        the_pod = incoming
    else:
        (decoded,) = decode_documents([incoming]).objects
        assert isinstance(decoded, Pod)
        the_pod = decoded
    plugin = CSILimits(cluster.objects, features)
    state = CycleState()
    _, status = plugin.pre_filter(state, the_pod, snapshot.node_infos)
    if status is not None:
        return status, {}
    return None, {i.name: plugin.filter(state, the_pod, i) for i in snapshot.node_infos}


@pytest.mark.parametrize(
    "volumes",
    [
        [],
        [{"name": "e", "emptyDir": {}}],
        [{"name": "c", "csi": {"driver": EBS}}],  # inline CSI ephemeral volumes are not counted
        [{"name": "r", "rbd": {"monitors": ["m"], "image": "i"}}],  # not migratable
    ],
)
def test_prefilter_skips_pods_without_countable_volumes(volumes: list[Obj]) -> None:
    pre, _ = decide([node("n")], pod("p", *volumes))
    assert pre == Status(Code.SKIP)


@pytest.mark.parametrize(
    "volume",
    [claim("c"), EPHEMERAL, {"name": "v", "vsphereVolume": {"volumePath": "[d] v"}}],
)
def test_prefilter_runs_for_claims_ephemeral_and_migratable_volumes(volume: Obj) -> None:
    pre, _ = decide([node("n"), pvc("c", "pv"), pv("pv")], pod("p", volume))
    assert pre is None


def test_limit_counts_volumes_of_the_node_once_each() -> None:
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        csinode("n1", ebs_csi_aws_com=2),
        csinode("n2", ebs_csi_aws_com=2),
        *(x for i in (1, 2, 3) for x in (pv(f"pv{i}"), pvc(f"c{i}", f"pv{i}"))),
        # n1: two pods share pv1, one uses pv2: 2 volumes in use, at the limit.
        pod("a", claim("c1"), node_name="n1"),
        pod("b", claim("c1"), claim("c2"), node_name="n1"),
        pod("c", claim("c1"), node_name="n2"),
    ]
    _, verdicts = decide(objects, pod("p", claim("c3")))
    assert verdicts == {"n1": EXCEEDED, "n2": None, "n3": None}
    # A volume already in use on the node is not new there.
    _, verdicts = decide(objects, pod("p", claim("c2")))
    assert verdicts == {"n1": None, "n2": None, "n3": None}


def test_unbound_claims_count_by_class_and_once_per_claim() -> None:
    objects = [
        node("n1"),
        csinode("n1", ebs_csi_aws_com=1),
        storage_class("wffc", EBS),
        pvc("c1", storage_class="wffc"),
        pvc("c2", storage_class="wffc"),
        pod("e", claim("c1"), node_name="n1"),
    ]
    # The existing pod's claim and the new pod's same claim are one volume.
    assert decide(objects, pod("p", claim("c1")))[1] == {"n1": None}
    assert decide(objects, pod("p", claim("c2")))[1] == {"n1": EXCEEDED}
    # No class, or a class that does not exist: not counted.
    for extra in (pvc("c3"), pvc("c3", storage_class="gone")):
        assert decide([*objects, extra], pod("p", claim("c3")))[1] == {"n1": None}


def test_in_tree_volumes_count_only_where_a_csinode_turns_migration_on() -> None:
    objects = [
        node("n1"),
        node("n2"),
        csinode("n1", ebs_csi_aws_com=0),
        pv("pv1", {"awsElasticBlockStore": {"volumeID": "vol-1"}}),
        pvc("c1", "pv1"),
    ]
    assert decide(objects, pod("p", claim("c1")))[1] == {"n1": EXCEEDED, "n2": None}
    assert decide(objects, pod("p", ebs("vol-2")))[1] == {"n1": EXCEEDED, "n2": None}
    # Azure File and vSphere are migratable but not counted by NodeVolumeLimits.
    files = [node("n1"), csinode("n1", file_csi_azure_com=0)]
    azure_file = {"name": "f", "azureFile": {"secretName": "s", "shareName": "x"}}
    assert decide(files, pod("p", azure_file))[1] == {"n1": None}


def test_attachments_of_csi_volumes_count() -> None:
    def attachment(name: str, volume: str, attacher: str = EBS) -> Obj:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {
                "attacher": attacher,
                "nodeName": "n1",
                "source": {"persistentVolumeName": volume},
            },
        }

    objects = [
        node("n1"),
        csinode("n1", ebs_csi_aws_com=1),
        pv("pv1"),
        pvc("c1", "pv1"),
        pv("pv2"),
        pvc("c2", "pv2"),
        pv("gce", {"gcePersistentDisk": {"pdName": "d"}}),
    ]
    # Not counted: a missing PV, an in-tree PV (only CSI PVs are read here).
    skipped = [attachment("a1", "nothing"), attachment("a2", "gce")]
    assert decide([*objects, *skipped], pod("p", claim("c2")))[1] == {"n1": None}
    assert decide([*objects, attachment("a3", "pv1")], pod("p", claim("c2")))[1] == {"n1": EXCEEDED}
    # Attached to this node by another driver's name: counted for that driver only.
    other = attachment("a4", "pv1", attacher="other.csi")
    assert decide([*objects, other], pod("p", claim("c2")))[1] == {"n1": None}


def test_volume_limit_scaling_requires_opted_in_drivers_on_the_node() -> None:
    driver = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": EBS},
        "spec": {"preventPodSchedulingIfMissing": True},
    }
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        csinode("n1", ebs_csi_aws_com=None),
        csinode("n2", other=None),
        driver,
        pv("pv1"),
        pvc("c1", "pv1"),
    ]
    missing = Status(Code.UNSCHEDULABLE, (driver_not_installed(EBS),))
    assert decide(objects, pod("p", claim("c1")))[1] == {"n1": None, "n2": missing, "n3": missing}
    off = Features(enable_volume_limit_scaling=False)
    assert decide(objects, pod("p", claim("c1")), off)[1] == {"n1": None, "n2": None, "n3": None}


def test_the_new_pods_missing_claim_is_unresolvable_an_existing_pods_is_ignored() -> None:
    objects = [node("n1"), csinode("n1", ebs_csi_aws_com=1), pv("pv1"), pvc("c1", "pv1")]
    _, verdicts = decide(objects, pod("p", claim("gone")))
    assert verdicts == {
        "n1": Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ('looking up PVC default/gone: persistentvolumeclaim "gone" not found',),
        )
    }
    existing = pod("e", claim("gone"), node_name="n1")
    assert decide([*objects, existing], pod("p", claim("c1")))[1] == {"n1": None}


def test_ephemeral_claims_must_be_controlled_by_their_pod() -> None:
    def owned_by(uid: str) -> Obj:
        return pvc(
            "p-scratch",
            storage_class="wffc",
            ownerReferences=[
                {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid, "controller": True}
            ],
        )

    base = [node("n1"), csinode("n1", ebs_csi_aws_com=0), storage_class("wffc", EBS)]
    incoming = pod("p", EPHEMERAL, uid="u1")
    assert decide([*base, owned_by("u1")], incoming)[1] == {"n1": EXCEEDED}
    not_owner = "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
    assert decide([*base, owned_by("u2")], incoming)[1] == {"n1": Status(Code.ERROR, (not_owner,))}


def test_errors_of_existing_pods_are_errors() -> None:
    objects = [
        node("n1"),
        csinode("n1", ebs_csi_aws_com=4),
        pv("pv1"),
        pvc("c1", "pv1"),
        pod("e", ebs("aws://z/x"), node_name="n1"),
    ]
    _, verdicts = decide(objects, pod("p", claim("c1")))
    assert verdicts == {
        "n1": Status(
            Code.ERROR,
            (
                "converting volume(i-aws://z/x) from inline to csi: failed to translate "
                "Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z/x)",
            ),
        )
    }


def test_a_claim_without_a_name_is_an_error() -> None:
    (decoded,) = decode_documents([pod("p", claim("c"))]).objects
    assert isinstance(decoded, Pod)
    nameless = replace(decoded, volumes=(PodVolume("v", claim_name=""),))
    _, verdicts = decide([node("n1")], nameless)
    assert verdicts == {"n1": Status(Code.ERROR, ("PersistentVolumeClaim had no name",))}
