"""v1 defaults of KubeSchedulerConfiguration (defaults.go, default_plugins.go, v1.37.1)."""

import pytest

from topospread.framework.config import (
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    default_configuration,
)
from topospread.framework.config.defaults import (
    default_plugins,
    default_raw_args,
    default_scoring_strategy,
    merge_plugin_set,
    merge_plugins,
    plugins_names,
)
from topospread.framework.config.types import (
    EXTENSION_POINTS,
    IN_TREE_PLUGINS,
    InterPodAffinityArgs,
    PluginRef,
    Plugins,
    PluginSet,
    ResourceSpec,
    ScoringStrategy,
)

DEFAULT_MULTI_POINT = [
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeName", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
]


def refs(*items):
    return tuple(PluginRef(*item) if isinstance(item, tuple) else PluginRef(item) for item in items)


def test_the_default_configuration_has_one_default_scheduler_profile():
    config = default_configuration()
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1, 10)
    assert config.profiles[0].percentage_of_nodes_to_score is None


def test_default_plugins_are_all_multi_point_in_upstream_order_with_weights():
    plugins = default_configuration().profiles[0].plugins
    assert [(r.name, r.weight) for r in plugins.multi_point.enabled] == DEFAULT_MULTI_POINT
    assert plugins.multi_point.disabled == ()
    for point in EXTENSION_POINTS:
        assert getattr(plugins, point) == PluginSet()


def test_default_plugin_config_lists_args_plugins_by_name_with_their_defaults():
    config = default_configuration().profiles[0].plugin_config
    assert list(config) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    assert config["PodTopologySpread"] == PodTopologySpreadArgs((), "System")
    assert config["NodeAffinity"] == NodeAffinityArgs(None)
    assert config["NodeResourcesFit"] == NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            "LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
        )
    )
    assert config["DefaultPreemption"] == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
    assert config["InterPodAffinity"] == InterPodAffinityArgs(1, False)
    assert config["VolumeBinding"] == {
        "bindTimeoutSeconds": 600,
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
    }
    assert config["NodeResourcesBalancedAllocation"] == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    }
    assert config["DynamicResources"] == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}


@pytest.mark.parametrize(
    ("default", "custom", "expected"),
    [
        (
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(),
            PluginSet(refs("A", ("B", 2), "C")),
        ),
        (
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(disabled=refs(("B", 5))),
            PluginSet(refs("A", "C"), refs("B")),
        ),
        (
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(enabled=refs("D", ("B", 7))),
            PluginSet(refs("A", ("B", 7), "C", "D")),
        ),
        (
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(enabled=refs("C", "A"), disabled=refs("*")),
            PluginSet(refs("C", "A"), refs("*")),
        ),
        (
            PluginSet(refs("A", "B")),
            PluginSet(enabled=refs("B", ("B", 3))),
            PluginSet(refs("A", ("B", 3), "B")),
        ),
        (
            PluginSet(refs("A", "B"), disabled=refs("X")),
            PluginSet(disabled=refs("A")),
            PluginSet(refs("B"), refs("A", "X")),
        ),
        (
            PluginSet(refs("A")),
            PluginSet(enabled=refs("A"), disabled=refs("A")),
            PluginSet(refs("A"), refs("A")),
        ),
    ],
    ids=[
        "nothing custom keeps the defaults",
        "a disabled default is dropped and its weight is not kept in disabled",
        "a re-enabled default is re-weighted in place and new plugins are appended",
        "star disables every default and keeps the custom order",
        "a plugin listed twice replaces with the last entry and appends the first",
        "the user's disabled come before the default's disabled",
        "enabled and disabled together append the plugin after dropping the default",
    ],
)
def test_merge_plugin_set_follows_upstream(default, custom, expected):
    assert merge_plugin_set(default, custom) == expected


def test_merge_plugins_merges_every_extension_point_and_keeps_defaults_when_unset():
    custom = Plugins(
        score=PluginSet(disabled=refs("*")),
        multi_point=PluginSet(enabled=refs(("PodTopologySpread", 5))),
    )
    merged = merge_plugins(default_plugins(), custom)
    assert merged.score == PluginSet(disabled=refs("*"))
    weights = {r.name: r.weight for r in merged.multi_point.enabled}
    assert weights["PodTopologySpread"] == 5
    assert len(merged.multi_point.enabled) == len(DEFAULT_MULTI_POINT)
    assert merge_plugins(default_plugins(), None) == default_plugins()


def test_plugins_names_are_sorted_and_ignore_pod_group_post_filter():
    plugins = Plugins(
        filter=PluginSet(refs("Z", "A")), pod_group_post_filter=PluginSet(refs("Hidden"))
    )
    assert plugins_names(plugins) == ["A", "Z"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            None,
            ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))),
        ),
        (
            ScoringStrategy("MostAllocated", ()),
            ScoringStrategy("MostAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))),
        ),
        (
            ScoringStrategy("MostAllocated", (ResourceSpec("nvidia.com/gpu", 0),)),
            ScoringStrategy("MostAllocated", (ResourceSpec("nvidia.com/gpu", 1),)),
        ),
        (
            ScoringStrategy("", (ResourceSpec("cpu", 3),)),
            ScoringStrategy("", (ResourceSpec("cpu", 3),)),
        ),
    ],
    ids=[
        "no strategy becomes LeastAllocated on cpu and memory",
        "no resources become cpu and memory",
        "a zero weight becomes one",
        "a missing type inside a given strategy is not defaulted",
    ],
)
def test_scoring_strategy_defaults(given, expected):
    assert default_scoring_strategy(given) == expected


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        (
            "DefaultPreemption",
            {"minCandidateNodesAbsolute": 0},
            {"minCandidateNodesAbsolute": 0, "minCandidateNodesPercentage": 10},
        ),
        ("InterPodAffinity", {"hardPodAffinityWeight": 0}, {"hardPodAffinityWeight": 0}),
        (
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu"}]},
            {"resources": [{"name": "cpu", "weight": 1}]},
        ),
        (
            "VolumeBinding",
            {"shape": [{"utilization": 10, "score": 1}]},
            {"bindTimeoutSeconds": 600, "shape": [{"utilization": 10, "score": 1}]},
        ),
        ("SomeOutOfTreePlugin", {"x": 1}, {"x": 1}),
    ],
    ids=[
        "an explicit zero is kept and the missing field defaulted",
        "an explicit hard pod affinity weight of zero is kept",
        "a balanced allocation resource without weight gets weight one",
        "a given volume binding shape is kept",
        "unknown plugins' args are left alone",
    ],
)
def test_raw_args_defaults(name, given, expected):
    assert default_raw_args(name, given) == expected


def test_in_tree_plugins_cover_the_default_plugins_and_pod_topology_spread_points():
    assert {name for name, _ in DEFAULT_MULTI_POINT} <= set(IN_TREE_PLUGINS)
    assert IN_TREE_PLUGINS["PodTopologySpread"] == {"pre_filter", "filter", "pre_score", "score"}
    assert IN_TREE_PLUGINS["PrioritySort"] == {"queue_sort"}
    assert IN_TREE_PLUGINS["DefaultBinder"] == {"bind"}
    for points in IN_TREE_PLUGINS.values():
        assert points <= set(EXTENSION_POINTS)
