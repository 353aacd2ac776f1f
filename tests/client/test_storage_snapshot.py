"""An anonymized snapshot of a cluster with storage keeps every link between its objects:
pods to claims, claims to volumes, volumes and capacities to classes and to node labels,
CSINodes and attachments to nodes; driver names and provisioners are kept."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.client.live import LiveRead
from topospread.client.snapshot import Anonymizer, render_snapshot
from topospread.client.source import SCHEDULER_RESOURCES, STORAGE_RESOURCES
from topospread.engine.cluster import Cluster
from topospread.io import decode_objects, load_documents
from topospread.model.labels import selector_from_set
from topospread.model.nodeaffinity import node_selector
from topospread.model.objects import Node

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "storage"
ORACLE = Path(os.environ.get("TOPOSPREAD_ORACLE", REPO / "oracle" / "bin" / "oracle"))


def _items(path: Path) -> list[dict[str, Any]]:
    return [d for d in load_documents(path) if d is not None]


def _cluster(items: list[dict[str, Any]]) -> Cluster:
    objects, _ = decode_objects(items, "cluster")
    return Cluster.from_objects(objects)


def _anonymized() -> tuple[Anonymizer, list[dict[str, Any]], list[dict[str, Any]]]:
    plain = _items(DATA / "cluster.yaml")
    anonymizer = Anonymizer()
    read = LiveRead("https://k", "ctx", "default", "v1.37.1", tuple(plain), (), 1)
    snapshot = yaml.safe_load(render_snapshot(read, anonymize=True))
    return anonymizer, plain, snapshot["items"]


def _matching(nodes: tuple[Node, ...], selected: Any) -> list[int]:
    return [i for i, node in enumerate(nodes) if selected(node)]


def test_claims_volumes_classes_and_csi_nodes_stay_linked_under_other_names() -> None:
    _, plain_items, hidden_items = _anonymized()
    plain, hidden = _cluster(plain_items), _cluster(hidden_items)
    objects = hidden.objects
    [pod] = hidden.pods
    for volume in pod.volumes:
        claim_name = volume.claim_for(pod.name)
        if claim_name is not None:
            assert objects.persistent_volume_claim(pod.namespace, claim_name) is not None
    [bound] = [c for c in objects.persistent_volume_claims if c.spec.volume_name]
    pv = objects.persistent_volume(bound.spec.volume_name)
    assert pv is not None
    assert pv.claim_ref is not None
    assert (pv.claim_ref.namespace, pv.claim_ref.name) == (bound.namespace, bound.name)
    classes = {sc.name for sc in objects.storage_classes}
    referenced = {
        pv.storage_class_name,
        *(c.spec.storage_class_name for c in objects.persistent_volume_claims),
        *(c.storage_class_name for c in objects.csi_storage_capacities),
        *(
            t.spec.storage_class_name
            for s in objects.stateful_sets
            for t in s.volume_claim_templates
        ),
    }
    assert referenced <= classes
    assert "zonal" not in classes
    assert {n.name for n in objects.csi_nodes} == {n.name for n in hidden.nodes}
    [attachment] = objects.volume_attachments
    assert objects.persistent_volume(attachment.persistent_volume_name or "") is pv
    assert attachment.node_name in {n.name for n in hidden.nodes}
    # Node labels are renamed as the volume's node affinity and the capacity's topology
    # are: each still selects the same nodes.
    [plain_pv] = plain.objects.persistent_volumes
    assert plain_pv.node_affinity is not None
    assert pv.node_affinity is not None
    assert _matching(hidden.nodes, node_selector(pv.node_affinity).match) == _matching(
        plain.nodes, node_selector(plain_pv.node_affinity).match
    )
    [capacity], [plain_capacity] = (
        objects.csi_storage_capacities,
        plain.objects.csi_storage_capacities,
    )
    assert capacity.node_topology is not None
    assert plain_capacity.node_topology is not None

    def topology(selector: Any) -> Any:
        return lambda node: selector_from_set(selector.match_labels).matches(node.metadata.labels)

    assert _matching(hidden.nodes, topology(capacity.node_topology)) == _matching(
        plain.nodes, topology(plain_capacity.node_topology)
    )


def test_names_that_controllers_derive_keep_their_derivation() -> None:
    _, _, hidden_items = _anonymized()
    hidden = _cluster(hidden_items)
    [stateful_set] = hidden.objects.stateful_sets
    [template] = stateful_set.volume_claim_templates
    [pod] = hidden.pods
    assert pod.name == f"{stateful_set.metadata.name}-0"
    claims = {c.name for c in hidden.objects.persistent_volume_claims}
    assert f"{template.metadata.name}-{stateful_set.metadata.name}-0" in claims
    [ephemeral] = [v for v in pod.volumes if v.ephemeral is not None]
    assert f"{pod.name}-{ephemeral.name}" in claims
    owned = next(c for c in hidden.objects.persistent_volume_claims if c.metadata.owner_references)
    assert owned.metadata.owner_references[0].name == pod.name
    assert owned.metadata.owner_references[0].uid == pod.metadata.uid


def test_driver_names_and_provisioners_are_kept_and_private_identities_are_not() -> None:
    _, _, hidden_items = _anonymized()
    hidden = _cluster(hidden_items)
    assert [d.name for d in hidden.objects.csi_drivers] == ["ebs.csi.aws.com"]
    assert {sc.provisioner for sc in hidden.objects.storage_classes} == {"ebs.csi.aws.com"}
    assert [d.name for n in hidden.objects.csi_nodes for d in n.drivers] == ["ebs.csi.aws.com"] * 2
    text = json.dumps(hidden_items)
    for private in ("vol-0123", "vol-legacy", "i-0a", "data-web-0", "pv-data-web-0", "zone-b"):
        assert private not in text


def test_the_storage_kinds_are_read_from_live_clusters() -> None:
    kinds = {r.kind for r in SCHEDULER_RESOURCES}
    assert {r.kind for r in STORAGE_RESOURCES} <= kinds
    assert {r.kind for r in STORAGE_RESOURCES} == {
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "VolumeAttachment",
    }


def _oracle(cluster: Path, pod: Path) -> list[tuple[str, str]]:
    done = subprocess.run(
        [str(ORACLE), "explain", "--cluster", str(cluster), "--pod", str(pod)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [(n["filter"]["code"], n["filter"]["reasons"]) for n in json.loads(done.stdout)["nodes"]]


@pytest.mark.skipif(not ORACLE.is_file(), reason="no oracle binary (bash oracle/build.sh)")
def test_upstream_gives_the_anonymized_snapshot_the_same_volume_verdicts(tmp_path: Path) -> None:
    plain_items = _items(DATA / "cluster.yaml")
    [pod_item] = _items(DATA / "pod-with-claim.yaml")
    anonymizer = Anonymizer()
    hidden = anonymizer.objects([*plain_items, pod_item])
    cluster, pod = tmp_path / "cluster.json", tmp_path / "pod.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": hidden[:-1]}))
    pod.write_text(json.dumps(hidden[-1]))

    plain = _oracle(DATA / "cluster.yaml", DATA / "pod-with-claim.yaml")

    assert plain[0][0] == "UnschedulableAndUnresolvable"
    assert plain[1][0] == "Success"
    assert _oracle(cluster, pod) == plain
