"""A bound pod explained from files is explained as ``explain pod/NAME`` explains it live:
as if it were being scheduled now, on the cluster without its own copy."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from topospread.engine.explain import explain
from topospread.framework.config.decode import default_configuration
from topospread.io import load_cluster, load_pod

ONE = Path(__file__).resolve().parents[2] / "src" / "topospread" / "examples" / "one-constraint"


def test_a_bound_pod_is_explained_unbound_on_the_cluster_without_it() -> None:
    cluster, _ = load_cluster([ONE / "cluster.yaml"])
    (web_1,) = [p for p in cluster.pods if p.metadata.name == "web-1"]
    constraints = load_pod(ONE / "pod.yaml").topology_spread_constraints
    bound = replace(web_1, topology_spread_constraints=constraints)
    assert bound.node_name == "node1"

    from_capture = explain(cluster, bound, default_configuration())
    without_it = replace(cluster, pods=tuple(p for p in cluster.pods if p is not web_1))
    as_if_pending = explain(without_it, replace(bound, node_name=""), default_configuration())

    assert from_capture.notes[0] == (
        "pod default/web-1 is already bound to node1; explaining where it would be placed "
        "if scheduled now"
    )
    assert from_capture.notes[1:] == as_if_pending.notes
    assert replace(from_capture, notes=()) == replace(as_if_pending, notes=())
    # web-1 no longer counts for itself: zoneA holds web-2 only, as zoneB holds web-3.
    assert from_capture.selected_node == as_if_pending.selected_node
