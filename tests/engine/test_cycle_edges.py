"""Edges of one scheduling cycle that kube-scheduler handles before or instead of plugins."""

from __future__ import annotations

from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.testing import make_node, make_pod

NO_SCORE_PLUGINS = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "DefaultBinder"},
                        {"name": "NodeUnschedulable"},
                    ],
                },
            },
        }
    ],
}


def test_a_cluster_without_nodes_gets_the_no_nodes_available_message() -> None:
    result = explain(Cluster(), make_pod().name("p").obj(), default_configuration())
    assert result.nodes == ()
    assert result.selected_node is None
    assert result.message == "no nodes available to schedule pods"


def test_without_score_plugins_every_feasible_node_scores_one_and_the_first_wins() -> None:
    nodes = (
        make_node().name("a").obj(),
        make_node().name("b").unschedulable().obj(),
        make_node().name("c").obj(),
    )
    result = explain(
        Cluster(nodes),
        make_pod().name("p").obj(),
        decode_configuration(NO_SCORE_PLUGINS, "config.yaml"),
    )
    assert [(n.name, n.total_score) for n in result.nodes] == [("a", 1), ("b", None), ("c", 1)]
    assert result.selected_node == "a"
    assert result.tied_nodes == ("a", "c")
