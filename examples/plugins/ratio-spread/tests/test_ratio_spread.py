"""RatioSpread, through the installed entry point, as topospread's commands run it."""

from __future__ import annotations

import copy
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml
from topospread import api
from topospread.errors import ConfigError
from topospread.framework.config.args import ArgsError
from topospread.framework.config.decode import decode_configuration
from topospread.plugins.registry import args_decoders, registry

from topospread_ratio_spread import NAME, Policy, Ratio, RatioSpreadArgs, decode_args, factory

HERE = Path(__file__).resolve().parent.parent
CONFIG = HERE / "scheduler-config.yaml"
DEMO = HERE / "demo"
POLICY = "ratio-spread.topospread.io/policy"
CAPACITY = "karpenter.sh/capacity-type"


def config_doc() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(CONFIG.read_text())
    return doc


def with_args(args: dict[str, Any]) -> dict[str, Any]:
    doc = config_doc()
    doc["profiles"][0]["pluginConfig"][0]["args"] = args
    return doc


def problems(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        decode_configuration(doc, "config", args_decoders=args_decoders())
    return [str(e) for e in caught.value.errors]


def node(name: str, capacity_type: str | None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if capacity_type is not None:
        labels[CAPACITY] = capacity_type
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def pod(name: str, policy: str | None, node_name: str = "") -> dict[str, Any]:
    labels = {"app": "web"}
    if policy is not None:
        labels[POLICY] = policy
    spec: dict[str, Any] = {
        "schedulerName": "ratio-scheduler",
        "containers": [{"name": "web", "image": "nginx"}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": spec,
    }


NODES = [node("spot-1", "spot"), node("spot-2", "spot"), node("on-demand-1", "on-demand")]


def test_the_installed_distribution_registers_the_plugin_under_its_entry_point() -> None:
    (entry,) = [ep for ep in metadata.entry_points(group="topospread.plugins") if ep.name == NAME]
    assert entry.value == "topospread_ratio_spread:factory"
    assert registry()[NAME] is factory
    assert args_decoders()[NAME] is decode_args


def test_args_default_the_policy_label_the_slack_and_the_hard_mode() -> None:
    args = decode_args(
        {
            "policies": [
                {"name": "p", "topologyKey": CAPACITY, "ratios": [{"value": "spot", "weight": 3}]}
            ]
        }
    )
    assert args == RatioSpreadArgs(
        policies=(Policy("p", CAPACITY, (Ratio("spot", 3),), 1, "DoNotSchedule", ()),),
        policy_label=POLICY,
    )


def test_the_shipped_configuration_decodes_into_typed_args() -> None:
    config = decode_configuration(config_doc(), "config", args_decoders=args_decoders())
    (profile,) = config.profiles
    args = profile.plugin_config[NAME]
    assert isinstance(args, RatioSpreadArgs)
    assert [p.name for p in args.policies] == ["spot-80", "even"]
    assert args.policies[0].ratios == (Ratio("spot", 80), Ratio("on-demand", 20))


def test_unknown_args_fields_are_refused_in_the_strict_codecs_words() -> None:
    args = config_doc()["profiles"][0]["pluginConfig"][0]["args"]
    args["policies"][0]["ratio"] = 80
    args["maxSkew"] = 1
    assert problems(with_args(args)) == [
        (
            "decoding .profiles[0].pluginConfig[0]: decoding args for plugin RatioSpread: "
            'strict decoding error: unknown field "maxSkew"'
        ),
        (
            "decoding .profiles[0].pluginConfig[0]: decoding args for plugin RatioSpread: "
            'strict decoding error: unknown field "policies[0].ratio"'
        ),
    ]


def test_every_invalid_value_is_reported_with_its_path_under_args() -> None:
    found = problems(
        with_args(
            {
                "policies": [
                    {
                        "name": "a",
                        "topologyKey": "not a key",
                        "ratios": [{"value": "spot", "weight": 0}, {"value": "spot", "weight": 2}],
                        "maxSkew": 0,
                        "whenUnsatisfiable": "Sometimes",
                    },
                    {"name": "a", "topologyKey": CAPACITY},
                ]
            }
        )
    )
    at = "profiles[0].pluginConfig[0].args.policies"
    assert found[0].startswith(f'{at}[0].topologyKey: Invalid value: "not a key": ')
    assert found[1:] == [
        f"{at}[0].maxSkew: Invalid value: 0: must be greater than zero",
        (
            f'{at}[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
            '"DoNotSchedule", "ScheduleAnyway"'
        ),
        f"{at}[0].ratios[0].weight: Invalid value: 0: must be greater than 0",
        f'{at}[0].ratios[1].value: Duplicate value: "spot"',
        f'{at}[1].name: Duplicate value: "a"',
        f"{at}[1].ratios: Required value: at least one value",
    ]


def test_a_value_of_the_wrong_type_stops_decoding_before_validation() -> None:
    found = problems(
        with_args({"policies": [{"name": "a", "ratios": [{"value": "spot", "weight": "2"}]}]})
    )
    assert found == [
        (
            "profiles[0].pluginConfig[0].args.policies[0].ratios[0].weight: "
            'Invalid value: "2": expected int32, got string'
        )
    ]


def test_a_profile_enabling_the_plugin_without_args_is_refused_as_missing_policies() -> None:
    # Defaulting appends its args after the in-tree plugins' defaults, by sorted name.
    doc = config_doc()
    del doc["profiles"][0]["pluginConfig"]
    assert problems(doc) == [
        "profiles[0].pluginConfig[7].args.policies: Required value: at least one ratio policy"
    ]


def test_the_factory_decodes_args_that_reach_it_undecoded() -> None:
    with pytest.raises(ConfigError, match='unknown field "extra"'):
        factory({"extra": 1}, None, None)  # type: ignore[arg-type]
    with pytest.raises(ArgsError):
        decode_args({"policies": "all"})


def explain(pod_doc: dict[str, Any], placed: list[dict[str, Any]]) -> Any:
    cluster = api.cluster_from_objects([*NODES, *placed])
    return api.explain(api.load_pod(pod_doc), cluster, CONFIG)


def test_a_value_over_its_share_is_filtered_and_one_without_a_value_is_unresolvable() -> None:
    # The demo: spot holds 5 of 5; a 6th on spot would be 1.2 pods over its 4.8.
    result = api.explain(
        api.load_pod(DEMO / "pod.yaml"), api.load_cluster(DEMO / "cluster.yaml"), CONFIG
    )
    verdicts = {n.name: (n.filter.plugin, n.filter.code.label) for n in result.nodes}
    assert verdicts == {
        "spot-1": (NAME, "Unschedulable"),
        "spot-2": (NAME, "Unschedulable"),
        "spot-3": (NAME, "Unschedulable"),
        "on-demand-1": (None, "Success"),
        "on-demand-2": (None, "Success"),
        "plain-1": (NAME, "UnschedulableAndUnresolvable"),
    }
    assert result.selected_node == "on-demand-1"


def test_replicas_placed_one_by_one_land_eight_on_spot_and_two_on_demand() -> None:
    placed: list[dict[str, Any]] = []
    for i in range(10):
        result = explain(pod(f"web-{i}", "spot-80"), placed)
        placed.append(pod(f"web-{i}", "spot-80", result.selected_node))
    types = Counter(
        n["metadata"]["labels"][CAPACITY]
        for p in placed
        for n in NODES
        if n["metadata"]["name"] == p["spec"]["nodeName"]
    )
    assert types == {"spot": 8, "on-demand": 2}
    # The order: the on-demand share is taken whenever it is furthest under (3rd, 8th).
    assert [p["spec"]["nodeName"].startswith("on-demand") for p in placed].count(True) == 2
    assert placed[2]["spec"]["nodeName"] == "on-demand-1"
    assert placed[7]["spec"]["nodeName"] == "on-demand-1"


def test_a_schedule_anyway_policy_filters_nothing_and_scores_the_value_under_its_share() -> None:
    placed = [pod("web-0", "even", "spot-1")]
    result = explain(pod("web-1", "even"), placed)
    scores = {n.name: n.scores.get(NAME) for n in result.nodes}
    assert scores == {"spot-1": 0, "spot-2": 0, "on-demand-1": 100}
    assert all(n.filter.passed for n in result.nodes)


def test_a_pod_naming_an_unknown_policy_is_refused_in_pre_filter() -> None:
    result = explain(pod("web-0", "half"), [])
    assert result.selected_node is None
    assert 'pod names ratio policy "half", which RatioSpread does not define' in result.message


def test_a_pod_without_the_policy_label_is_left_to_the_other_plugins() -> None:
    result = explain(pod("web-0", None), [pod("x", "spot-80", "spot-1")])
    assert all(NAME not in n.verdicts and NAME not in n.scores for n in result.nodes)


def test_the_group_is_the_pods_of_the_namespace_with_the_policy_and_the_match_label_keys() -> None:
    other_app = copy.deepcopy(pod("api-0", "spot-80", "on-demand-1"))
    other_app["metadata"]["labels"]["app"] = "api"
    other_namespace = copy.deepcopy(pod("web-x", "spot-80", "on-demand-1"))
    other_namespace["metadata"]["namespace"] = "other"
    # Neither counts for web: on-demand is still empty, so its share is furthest under
    # only from the 3rd pod on; the 1st goes to spot.
    result = explain(pod("web-0", "spot-80"), [other_app, other_namespace])
    assert result.selected_node == "spot-1"


def test_simulate_keeps_the_ratio_as_the_deployment_scales() -> None:
    result = api.simulate(HERE / "scenario.yaml")
    kinds = {"spot-1": "spot", "spot-2": "spot", "spot-3": "spot"}

    def split(step: Any) -> Counter[str]:
        return Counter(
            kinds.get(layout.name, "on-demand") for layout in step.layout for _ in layout.pods
        )

    assert split(result.steps[1]) == {"spot": 8, "on-demand": 2}
    assert split(result.steps[2]) == {"spot": 16, "on-demand": 4}
