"""Decoding KubeSchedulerConfiguration documents: types, defaults, and every error at once."""

from pathlib import Path

import pytest
import yaml

from topospread.errors import ConfigError
from topospread.framework.config import (
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    decode_configuration,
    default_configuration,
)
from topospread.framework.config.types import PluginRef, PluginSet, ResourceSpec, ScoringStrategy
from topospread.model.objects import (
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    TopologySpreadConstraint,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "config"
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def decode(text: str):
    return decode_configuration(yaml.safe_load(text), "config.yaml")


def errors_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        decode(text)
    assert info.value.source == "config.yaml"
    return [str(e) for e in info.value.errors]


def test_an_empty_configuration_decodes_to_the_defaults():
    assert decode(HEADER) == default_configuration()


def test_a_full_configuration_decodes_typed_args_and_keeps_user_order():
    config = decode_configuration(
        yaml.safe_load((DATA / "list-defaulting.yaml").read_text()), "list-defaulting.yaml"
    )
    assert config.parallelism == 8
    assert config.percentage_of_nodes_to_score == 50
    first, second = config.profiles
    assert list(first.plugin_config)[:3] == [
        "PodTopologySpread",
        "NodeResourcesFit",
        "NodeAffinity",
    ]
    assert first.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs(
        default_constraints=(
            TopologySpreadConstraint(1, "topology.kubernetes.io/zone", "ScheduleAnyway"),
            TopologySpreadConstraint(3, "kubernetes.io/hostname", "DoNotSchedule"),
        ),
        defaulting_type="List",
    )
    assert first.plugin_config["NodeResourcesFit"] == NodeResourcesFitArgs(
        ignored_resources=("example.com/foo",),
        scoring_strategy=ScoringStrategy(
            "MostAllocated", (ResourceSpec("cpu", 2), ResourceSpec("memory", 1))
        ),
    )
    assert first.plugin_config["NodeAffinity"] == NodeAffinityArgs(
        NodeAffinity(
            required=NodeSelector(
                (
                    NodeSelectorTerm(
                        match_expressions=(
                            NodeSelectorRequirement("node-role.kubernetes.io/worker", "Exists"),
                        )
                    ),
                )
            ),
        )
    )
    assert second.scheduler_name == "no-scoring"
    assert second.percentage_of_nodes_to_score == 100
    assert second.plugins.score == PluginSet(disabled=(PluginRef("*"),))
    assert second.plugins.pre_score == PluginSet(disabled=(PluginRef("*"),))
    assert second.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs()
    assert config.profile("no-scoring") is second
    assert config.profile("missing") is None


def test_unknown_fields_are_refused_as_the_strict_codec_refuses_them():
    # Wording checked with the oracle (kube-scheduler v1.37.1's loadConfig).
    assert errors_of(
        HEADER + "someFutureField: 3\nprofiles:\n- schedulerName: a\n  extra: true\n"
    ) == [
        'strict decoding error: unknown field "profiles[0].extra"',
        'strict decoding error: unknown field "someFutureField"',
    ]


def test_field_names_are_case_sensitive():
    assert errors_of(HEADER + "Profiles: []\nleaderElection: {leaderElect: false, foo: 1}\n") == [
        'strict decoding error: unknown field "Profiles"',
        'strict decoding error: unknown field "leaderElection.foo"',
    ]


def test_a_misspelt_plugin_arg_is_refused():
    assert errors_of(
        HEADER
        + """
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultConstraint: []
      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
                            labelselector: {}}]
"""
    ) == [
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin PodTopologySpread: "
        'strict decoding error: unknown field "defaultConstraint"',
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin PodTopologySpread: "
        'strict decoding error: unknown field "defaultConstraints[0].labelselector"',
    ]


def test_out_of_tree_plugin_args_are_kept_as_given():
    config = decode(
        HEADER
        + """
profiles:
- pluginConfig:
  - name: MyPlugin
    args: {foo: bar}
"""
    )
    assert config.profiles[0].plugin_config["MyPlugin"] == {"foo": "bar"}


def test_a_missing_defaulting_type_defaults_to_system_which_rejects_constraints():
    assert errors_of(
        HEADER
        + """
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
"""
    ) == [
        'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": '
        "when .defaultConstraints are not empty"
    ]


def test_only_a_lone_profile_gets_the_default_scheduler_name():
    assert errors_of(HEADER + "profiles:\n- {}\n- schedulerName: b\n") == [
        "profiles[0].schedulerName: Required value"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            [
                'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
                'supported values: "kubescheduler.config.k8s.io/v1"'
            ],
        ),
        ("kind: KubeSchedulerConfiguration\n", ["apiVersion: Required value"]),
        (
            HEADER + "parallelism: many\n",
            ['parallelism: Invalid value: "many": expected int32, got string'],
        ),
        (
            HEADER + "profiles: {}\n",
            ['profiles: Invalid value: "object": expected array, got object'],
        ),
        (
            HEADER + "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: X, weight: "
            "heavy}\n",
            [
                'profiles[0].plugins.score.enabled[0].weight: Invalid value: "heavy": '
                "expected int32, got string"
            ],
        ),
        (
            HEADER + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
            "      defaultConstraints: [{maxSkew: x}]\n",
            [
                "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: "
                '"x": expected int32, got string'
            ],
        ),
    ],
    ids=[
        "an older apiVersion is not supported",
        "a missing apiVersion is required",
        "a non-numeric parallelism names its type",
        "profiles must be a list",
        "a plugin weight must be a number",
        "a default constraint's maxSkew must be a number",
    ],
)
def test_decode_errors_name_the_field(text, expected):
    assert errors_of(text) == expected


def test_all_validation_errors_are_reported_together():
    assert errors_of(
        HEADER
        + """
parallelism: 0
percentageOfNodesToScore: 101
profiles:
- schedulerName: a
  percentageOfNodesToScore: -1
- schedulerName: a
"""
    ) == [
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        "profiles[1].schedulerName: Duplicate value: {}",
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ]


def test_a_non_mapping_document_is_rejected():
    with pytest.raises(ConfigError):
        decode_configuration(["not", "a", "map"], "x.yaml")  # type: ignore[arg-type]
