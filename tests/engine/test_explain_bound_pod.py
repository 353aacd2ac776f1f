"""A pod read from the cluster it is explained on is explained as ``explain pod/NAME``
explains it live: as if it were being scheduled now, on the cluster without its own copy.
A pod of its own that asks for a node keeps asking for it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.framework.config.decode import default_configuration
from topospread.io import load_cluster, load_pod
from topospread.model.objects import Pod

ONE = Path(__file__).resolve().parents[2] / "src" / "topospread" / "examples" / "one-constraint"


def _captured() -> tuple[Cluster, Pod]:
    """The example's cluster as a capture (uids), and web-1 (bound to node1) as ``kubectl
    get pod web-1 -o yaml`` gives it, with the example pod's spread constraint."""
    cluster, _ = load_cluster([ONE / "cluster.yaml"])
    pods = tuple(
        replace(p, metadata=replace(p.metadata, uid=f"uid-{p.name}")) for p in cluster.pods
    )
    cluster = replace(cluster, pods=pods)
    (web_1,) = [p for p in pods if p.name == "web-1"]
    constraints = load_pod(ONE / "pod.yaml").topology_spread_constraints
    return cluster, replace(web_1, topology_spread_constraints=constraints)


def test_a_captured_bound_pod_is_explained_unbound_on_the_cluster_without_it() -> None:
    cluster, web_1 = _captured()
    assert web_1.node_name == "node1"

    from_capture = explain(cluster, web_1, default_configuration())
    without_it = replace(cluster, pods=tuple(p for p in cluster.pods if p.name != "web-1"))
    as_if_pending = explain(without_it, replace(web_1, node_name=""), default_configuration())

    assert from_capture.notes[0] == (
        "pod default/web-1 is already bound to node1; explaining where it would be placed "
        "if scheduled now"
    )
    assert from_capture.notes[1:] == as_if_pending.notes
    assert replace(from_capture, notes=()) == replace(as_if_pending, notes=())


def test_a_pod_of_its_own_asking_for_a_node_keeps_asking_for_it() -> None:
    cluster, _ = load_cluster([ONE / "cluster.yaml"])
    asking = replace(load_pod(ONE / "pod.yaml"), node_name="node3")
    result = explain(cluster, asking, default_configuration())
    assert result.selected_node == "node3"
    refused = {n.name for n in result.nodes if "[NodeName]" in " ".join(n.filter.reasons)}
    assert refused == {"node1", "node2", "node4"}
    assert not any("already bound" in note for note in result.notes)
