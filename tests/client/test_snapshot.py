"""Snapshots: what was read, as one List; anonymized without changing any decision."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml

from topospread.client.live import LiveRead
from topospread.client.snapshot import Anonymizer, render_snapshot, write_output
from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.framework.config.decode import default_configuration
from topospread.io.loader import decode_objects, load_documents
from topospread.model.objects import Pod

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "topospread" / "examples"


def _items(path: Path) -> list[dict]:
    items: list[dict] = []
    for document in load_documents(path):
        if document is None:
            continue
        items.extend(document["items"] if document.get("kind", "").endswith("List") else [document])
    return items


def _explain(cluster_items: list[dict], pod_item: dict):
    objects, _ = decode_objects(cluster_items, "cluster")
    pods, _ = decode_objects([pod_item], "pod")
    pod = pods[0]
    assert isinstance(pod, Pod)
    return explain(Cluster.from_objects(objects), pod, default_configuration())


def _read(items: list[dict]) -> LiveRead:
    return LiveRead("https://k", "ctx", "default", "v1.37.1", tuple(items), (), 1)


@pytest.mark.parametrize(
    "example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "pod.yaml").is_file())
)
def test_an_anonymized_cluster_gets_the_same_verdicts_and_scores_under_other_names(
    example: str,
) -> None:
    cluster_items = _items(EXAMPLES / example / "cluster.yaml")
    pod_item = _items(EXAMPLES / example / "pod.yaml")[0]
    anonymizer = Anonymizer()
    hidden_cluster = anonymizer.objects(cluster_items)
    hidden_pod = anonymizer.objects([pod_item])[0]

    plain, hidden = _explain(cluster_items, pod_item), _explain(hidden_cluster, hidden_pod)

    def outcome(result, rename):
        return [
            (rename(n.name), n.filter.code.name if n.filter else None, n.scores, n.total_score)
            for n in result.nodes
        ]

    assert outcome(hidden, str) == outcome(plain, anonymizer.node)
    assert (hidden.selected_node, hidden.message is None) == (
        anonymizer.node(plain.selected_node) if plain.selected_node else None,
        plain.message is None,
    )


def test_anonymized_names_keep_no_trace_of_the_originals() -> None:
    items = _items(EXAMPLES / "two-constraints" / "cluster.yaml")
    text = orjson.dumps(Anonymizer().objects(items)).decode()
    originals = {item["metadata"]["name"] for item in items}
    originals |= {v for item in items for v in (item["metadata"].get("labels") or {}).values()}
    assert not [o for o in originals if f'"{o}"' in text]


def test_a_snapshot_is_one_kind_List_without_managed_fields(tmp_path: Path) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "managedFields": [{"manager": "kubelet"}]},
    }
    data = render_snapshot(_read([node]), fmt="yaml")
    document = yaml.safe_load(data)
    assert document["kind"] == "List"
    assert document["items"] == [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]
    assert orjson.loads(render_snapshot(_read([node]), fmt="json"))["items"][0]["metadata"] == {
        "name": "n1"
    }


def test_a_label_value_that_reads_as_a_number_in_go_is_written_so_it_reads_back_as_text(
    tmp_path: Path,
) -> None:
    # A live test's random namespace suffix "9715e4" came back as the float 97150000.
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}}}
    node["metadata"]["labels"] = {"story": "9715e4", "size": "1_000", "mode": "0o17"}
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_bytes(render_snapshot(_read([node]), fmt="yaml"))

    (read_back,) = load_documents(snapshot)

    assert read_back["items"][0]["metadata"]["labels"] == node["metadata"]["labels"]


def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    write_output(link, b"new")
    assert link.is_symlink()
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml", "real.yaml"]


def _disk_pod(name: str, node_name: str = "") -> dict:
    spec: dict = {
        "containers": [{"name": "db", "image": "postgres:16"}],
        "volumes": [
            {"name": "data", "gcePersistentDisk": {"pdName": "payments-db-disk"}},
            {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-0abc123"}},
        ],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "payments", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Running"},
    }


def test_inline_disks_keep_their_conflicts_but_not_their_names() -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for n in ("holds-the-disk", "free")
    ]
    cluster_items = [*nodes, _disk_pod("db-0", "holds-the-disk")]
    incoming = _disk_pod("db-1")
    anonymizer = Anonymizer()
    hidden_cluster, hidden_pod = (
        anonymizer.objects(cluster_items),
        anonymizer.objects([incoming])[0],
    )

    plain, hidden = _explain(cluster_items, incoming), _explain(hidden_cluster, hidden_pod)

    def verdicts(result):
        return [(n.filter.code.name, n.filter.plugin) if n.filter else None for n in result.nodes]

    assert verdicts(hidden) == verdicts(plain)
    assert plain.nodes[0].filter is not None
    assert plain.nodes[0].filter.plugin == "VolumeRestrictions"
    text = orjson.dumps([*hidden_cluster, hidden_pod]).decode()
    assert "payments-db-disk" not in text
    assert "vol-0abc123" not in text
