"""What an autoscaler adds for Pending pods, with kube-scheduler's own cycle deciding every
fit (topospread.engine.autoscale), on the seeds' story and Karpenter's KWOK trial."""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.engine.autoscale import plan_scale_up
from topospread.errors import InputError
from topospread.framework.config.decode import default_configuration
from topospread.io import load_cluster, load_pod
from topospread.io.pools import load_instance_types, load_node_pools

DATA = Path(__file__).resolve().parents[1] / "data" / "autoscaling"
TYPES = load_instance_types(DATA / "instance-types.json")


def _scale_up(cluster: str, pod: str, pools: str, **options: object):
    loaded, _ = load_cluster([DATA / cluster])
    node_pools = load_node_pools([DATA / pools], loaded.node_templates, TYPES)
    return plan_scale_up(
        loaded,
        load_pod(DATA / pod),
        loaded.pending_pods,
        node_pools,
        default_configuration(),
        **options,  # type: ignore[arg-type]
    )


def test_a_zone_whose_pool_is_at_zero_is_added_for_min_domains() -> None:
    answer = _scale_up("cluster.yaml", "pod.yaml", "pools.yaml")
    assert answer.today.selected_node is None
    assert answer.chosen is not None
    assert (answer.chosen.pool, [n.zone for n in answer.chosen.nodes]) == ("zone-c", ["zone-c"])
    assert answer.after is not None
    assert answer.after.selected_node == "zone-c-1"


def test_the_other_pools_say_why_they_would_not_help() -> None:
    answer = _scale_up("cluster.yaml", "pod.yaml", "pools.yaml")
    why = {o.pool: o.why for o in answer.options if not o.helps}
    # A third zone-a node still leaves two domains: skew 2 there, as today.
    assert why["zone-a"].startswith("PodTopologySpread")
    assert why["zone-b"] == "max size reached (1/1 nodes)"


def test_karpenter_spreads_new_nodes_over_the_nodepool_zones_before_any_node_exists() -> None:
    # The KWOK trial: 6 pods of 1 CPU, zone spread, no nodes: 3 NodeClaims, one per zone,
    # 2 pods each, the cheapest fitting instance type (c-2x holds 1900m: too small).
    answer = _scale_up("karpenter-pending.yaml", "karpenter-pod.yaml", "nodepool.yaml")
    assert answer.autoscaler == "cluster-autoscaler"  # the library default
    karpenter = _scale_up(
        "karpenter-pending.yaml", "karpenter-pod.yaml", "nodepool.yaml", autoscaler="karpenter"
    )
    assert karpenter.chosen is not None
    nodes = karpenter.chosen.nodes
    assert sorted(n.zone or "" for n in nodes) == ["test-zone-a", "test-zone-b", "test-zone-c"]
    assert {n.instance_type for n in nodes} == {"c-4x-amd64-linux"}
    assert sorted(len(n.pods) for n in nodes) == [2, 2, 2]


def test_karpenter_uses_room_on_existing_nodes_before_adding_nodes() -> None:
    # Scaled from 6 to 12: each c-4x node takes one more pod; three c-2x nodes, one per
    # zone, take the rest.
    answer = _scale_up(
        "karpenter-scaled.yaml",
        "karpenter-scaled-pod.yaml",
        "nodepool.yaml",
        autoscaler="karpenter",
    )
    assert answer.today.selected_node is not None
    assert answer.chosen is not None
    assert sorted((n.zone, n.instance_type) for n in answer.chosen.nodes) == [
        ("test-zone-a", "c-2x-amd64-linux"),
        ("test-zone-b", "c-2x-amd64-linux"),
        ("test-zone-c", "c-2x-amd64-linux"),
    ]


def test_cluster_autoscaler_knows_no_domain_without_a_node_and_packs_one_zone() -> None:
    # Cluster Autoscaler's estimator simulates kube-scheduler, whose domains come from
    # nodes: the first new node is the only zone, so every pod fits beside the first.
    answer = _scale_up("karpenter-pending.yaml", "karpenter-pod.yaml", "nodepool.yaml")
    assert answer.chosen is not None
    assert {n.zone for n in answer.chosen.nodes} == {"test-zone-a"}


def test_an_unknown_expander_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="unknown expander 'cheapest'"):
        _scale_up("cluster.yaml", "pod.yaml", "pools.yaml", expander="cheapest")
