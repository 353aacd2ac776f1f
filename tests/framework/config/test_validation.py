"""Validation of KubeSchedulerConfiguration and plugin args (v1.37.1 paths and wording)."""

import pytest
import yaml

from topospread.errors import ConfigError
from topospread.framework.config import decode_configuration
from topospread.framework.config.types import PodTopologySpreadArgs
from topospread.framework.config.validation import validate_pod_topology_spread_args
from topospread.model.objects import LabelSelector, TopologySpreadConstraint

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
ARGS = "profiles[0].pluginConfig[0].args"
KEY_REGEX_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def errors_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        decode_configuration(yaml.safe_load(HEADER + text), "c.yaml")
    return [str(e) for e in info.value.errors]


def spread_args(body: str) -> str:
    indented = "\n".join("      " + line for line in body.strip("\n").splitlines())
    return f"profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n{indented}\n"


def c(max_skew=1, key="zone", action="DoNotSchedule", selector=None):
    return TopologySpreadConstraint(max_skew, key, action, label_selector=selector)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (PodTopologySpreadArgs((c(), c(key="node")), "List"), []),
        (PodTopologySpreadArgs((), "System"), []),
        (PodTopologySpreadArgs((), "List"), []),
        (PodTopologySpreadArgs((c(max_skew=0),), "List"),
         [f"{ARGS}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"]),
        (PodTopologySpreadArgs((c(key=""),), "List"),
         [f"{ARGS}.defaultConstraints[0].topologyKey: Required value: can not be empty"]),
        (PodTopologySpreadArgs((c(key="-zone"),), "List"),
         [f'{ARGS}.defaultConstraints[0].topologyKey: Invalid value: "-zone": {KEY_REGEX_MSG}']),
        (PodTopologySpreadArgs((c(action=""),), "List"),
         [f"{ARGS}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"]),
        (PodTopologySpreadArgs((c(action="Whatever"),), "List"),
         [f'{ARGS}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Whatever": '
          'supported values: "DoNotSchedule", "ScheduleAnyway"']),
        (PodTopologySpreadArgs((c(key="node"), c(key="node", max_skew=2)), "List"),
         [f'{ARGS}.defaultConstraints[1]: Duplicate value: "{{node, DoNotSchedule}}"']),
        (PodTopologySpreadArgs((c(selector=LabelSelector({"a": "b"})),), "List"),
         [f"{ARGS}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define "
          "a selector, as they deduced for each pod"]),
        (PodTopologySpreadArgs((), "unknown"),
         [f'{ARGS}.defaultingType: Unsupported value: "unknown": '
          'supported values: "System", "List"']),
        (PodTopologySpreadArgs((c(),), "System"),
         [f'{ARGS}.defaultingType: Invalid value: "System": '
          "when .defaultConstraints are not empty"]),
        (PodTopologySpreadArgs((c(max_skew=-1, key="", action="Maybe"),
                                c(max_skew=-1, key="", action="Maybe")), "System"),
         [f'{ARGS}.defaultingType: Invalid value: "System": '
          "when .defaultConstraints are not empty",
          f"{ARGS}.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)",
          f"{ARGS}.defaultConstraints[0].topologyKey: Required value: can not be empty",
          f'{ARGS}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": '
          'supported values: "DoNotSchedule", "ScheduleAnyway"',
          f"{ARGS}.defaultConstraints[1].maxSkew: Invalid value: -1: not in valid range (0, inf)",
          f"{ARGS}.defaultConstraints[1].topologyKey: Required value: can not be empty",
          f'{ARGS}.defaultConstraints[1].whenUnsatisfiable: Unsupported value: "Maybe": '
          'supported values: "DoNotSchedule", "ScheduleAnyway"',
          f'{ARGS}.defaultConstraints[1]: Duplicate value: "{{, Maybe}}"']),
    ],
    ids=[
        "two distinct list constraints are valid",
        "System with no constraints is valid",
        "List with no constraints is valid",
        "maxSkew 0 is not in the open range",
        "an empty topologyKey can not be empty",
        "a topologyKey must be a label name",
        "an empty whenUnsatisfiable can not be empty",
        "an unknown whenUnsatisfiable lists the supported values",
        "a repeated pair is a duplicate at the later index",
        "a label selector is forbidden",
        "an unknown defaulting type lists System and List",
        "System with constraints is invalid",
        "every problem is reported, defaulting type first",
    ],
)
def test_pod_topology_spread_args_rules(args, expected):
    assert [str(e) for e in validate_pod_topology_spread_args(ARGS, args)] == expected


def test_pod_topology_spread_args_errors_carry_the_full_config_path():
    assert errors_of(spread_args("""
defaultingType: List
defaultConstraints:
- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
- {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
""")) == [
        f"{ARGS}.defaultConstraints[1].maxSkew: Invalid value: 0: not in valid range (0, inf)",
        f'{ARGS}.defaultConstraints[1]: Duplicate value: "{{zone, DoNotSchedule}}"',
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("profiles:\n- pluginConfig:\n  - {name: PodTopologySpread}\n"
         "  - {name: PodTopologySpread}\n",
         ['profiles[0].pluginConfig[1]: Duplicate value: "PodTopologySpread"']),
        ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
         ['profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in '
          'version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
          '"kubescheduler.config.k8s.io/v1")']),
        ("profiles:\n- pluginConfig:\n  - {name: GCEPDLimits, args: {}}\n",
         ['profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version '
          '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
          '"kubescheduler.config.k8s.io/v1")']),
        ("podInitialBackoffSeconds: 0\n",
         ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"]),
        ("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
         ["podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to "
          "PodInitialBackoffSeconds"]),
        ("profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: A}, "
         "{name: B}]\n",
         ["profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin "
          "can be enabled"]),
        ("profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
         "      enabled: [{name: Other}]\n",
         ['profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"Other",'
          '"Weight":0}],"Disabled":null}: must be the same for all profiles']),
    ],
    ids=[
        "plugin config names must be unique",
        "a removed plugin cannot be enabled",
        "a removed plugin cannot be configured",
        "the initial backoff must be positive",
        "the max backoff must not be below the initial backoff",
        "only one queue sort plugin may be enabled",
        "all profiles must share the queue sort",
    ],
)
def test_profile_and_configuration_rules(text, expected):
    assert errors_of(text) == expected


def fit_args(body: str) -> str:
    indented = "\n".join("      " + line for line in body.strip("\n").splitlines())
    return f"profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n{indented}\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("scoringStrategy: {type: MostAllocated}", []),
        ("scoringStrategy: {type: Fewest}",
         [f'{ARGS}.scoringStrategy.type: Unsupported value: "Fewest": supported values: '
          '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"']),
        ("scoringStrategy: {resources: [{name: cpu}]}",
         [f'{ARGS}.scoringStrategy.type: Unsupported value: "": supported values: '
          '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"']),
        ("scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}",
         [f"{ARGS}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of "
          "cpu not in valid range (0, 100]"]),
        ("scoringStrategy: {type: RequestedToCapacityRatio}",
         [f"{ARGS}.scoringStrategy.requestedToCapacityRatio: Required value: must be specified "
          "when type is RequestedToCapacityRatio"]),
        ("scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: []}}",
         [f"{ARGS}.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type "
          "is not RequestedToCapacityRatio"]),
        ("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
         "    shape: [{utilization: 50, score: 5}, {utilization: 40, score: 11}]",
         [f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid "
          "value: 40: values must be sorted in increasing order",
          f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: "
          "not in valid range [0, 10]"]),
        ("ignoredResourceGroups: [example.com/gpu]",
         [f"{ARGS}.ignoredResourceGroups[0]: Invalid value: \"example.com/gpu\": resource group "
          "name can't contain '/'"]),
    ],
    ids=[
        "MostAllocated is valid",
        "an unknown strategy lists the three",
        "a strategy without type is not defaulted and so unsupported",
        "a resource weight above 100 is out of range",
        "RequestedToCapacityRatio needs its parameters",
        "parameters are forbidden for other strategies",
        "the shape must increase and scores stay within 0-10",
        "a resource group cannot contain a slash",
    ],
)
def test_node_resources_fit_args_rules(body, expected):
    if expected:
        assert errors_of(fit_args(body)) == expected
    else:
        decode_configuration(yaml.safe_load(HEADER + fit_args(body)), "c.yaml")


def test_node_affinity_args_must_parse_like_the_scheduler_parses_them():
    assert errors_of("""
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: zone, operator: Near, values: [a]}
""") == [
        f"{ARGS}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        '.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", '
        '"NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    ]


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("DefaultPreemption", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
         [f"{ARGS}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
          "time as minCandidateNodesAbsolute",
          f"{ARGS}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same "
          "time as minCandidateNodesPercentage"]),
        ("DefaultPreemption", "{minCandidateNodesPercentage: 101}",
         [f"{ARGS}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"]),
        ("InterPodAffinity", "{hardPodAffinityWeight: 101}",
         [f"{ARGS}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
        ("NodeResourcesBalancedAllocation", "{resources: [{name: cpu, weight: 2}, {name: cpu}]}",
         [f"{ARGS}.resources[0].weight: Invalid value: 2: must be 1",
          f'{ARGS}.resources[1].name: Duplicate value: "cpu"']),
    ],
    ids=[
        "preemption minimums cannot both be zero",
        "the preemption percentage is at most 100",
        "the hard pod affinity weight is at most 100",
        "balanced allocation weights must be 1 and names unique",
    ],
)
def test_other_plugin_args_rules(name, args, expected):
    text = f"profiles:\n- pluginConfig:\n  - name: {name}\n    args: {args}\n"
    assert errors_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "extenders:\n- {urlPrefix: 'http://x', prioritizeVerb: prioritize, weight: -1}\n",
            ["extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"],
        ),
        (
            "extenders:\n- {urlPrefix: 'http://x', prioritizeVerb: prioritize}\n",
            ["extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"],
        ),
        (
            "extenders:\n- {urlPrefix: 'http://a', bindVerb: bind}\n"
            "- {urlPrefix: 'http://b', bindVerb: bind}\n",
            [
                'extenders: Invalid value: "found 2 extenders implementing bind": '
                "only one extender can implement bind"
            ],
        ),
    ],
)
def test_a_negative_extender_weight_is_refused_as_kube_scheduler_refuses_it(text, expected):
    assert errors_of(text) == expected


def test_an_extender_that_does_not_prioritize_needs_no_weight():
    config = decode_configuration(
        yaml.safe_load(HEADER + "extenders:\n- {urlPrefix: 'http://x', filterVerb: filter}\n"),
        "c.yaml",
    )
    assert config.extenders[0].weight == 0


OVERFLOW = (
    "creating profile for scheduler name default-scheduler: score plugins: total score of "
    "Score plugins could overflow"
)


@pytest.mark.parametrize(
    ("plugins", "refused"),
    [
        # Each verdict is the real kube-scheduler v1.37.1's on the same configuration
        # (--write-config-to: it starts, or fails creating the profile).
        ("score:\n  enabled:\n  - {name: PodTopologySpread, weight: -5}", True),
        ("score:\n  enabled:\n  - {name: ImageLocality, weight: -3}", True),
        ("multiPoint:\n  enabled:\n  - {name: TaintToleration, weight: -1}", True),
        (
            "score:\n  disabled:\n  - {name: '*'}\n  enabled:\n"
            "  - {name: PodTopologySpread, weight: -5}\n  - {name: ImageLocality, weight: 1}",
            True,
        ),
        # The last plugin weighed: nothing comes after the negative total.
        ("multiPoint:\n  enabled:\n  - {name: ImageLocality, weight: -3}", False),
        (
            "multiPoint:\n  disabled:\n  - {name: '*'}\n  enabled:\n  - {name: PrioritySort}\n"
            "  - {name: DefaultBinder}\n  - {name: PodTopologySpread, weight: -5}",
            False,
        ),
        # The total stays positive (3 + 2 - 2 before it): no wrap-around.
        ("multiPoint:\n  enabled:\n  - {name: NodeResourcesFit, weight: -2}", False),
    ],
)
def test_a_negative_score_weight_is_refused_where_kube_scheduler_refuses_it(plugins, refused):
    # Validation checks no plugin weight; NewFramework's getValidScoreWeights keeps a
    # negative one and then finds MaxTotalScore - total overflowing int64.
    indented = "\n".join("    " + line for line in plugins.splitlines())
    text = HEADER + f"profiles:\n- plugins:\n{indented}\n"
    if refused:
        with pytest.raises(ConfigError) as info:
            decode_configuration(yaml.safe_load(text), "c.yaml")
        assert [str(e) for e in info.value.errors] == [OVERFLOW]
    else:
        decode_configuration(yaml.safe_load(text), "c.yaml")


@pytest.mark.parametrize(
    ("plugins", "refused"),
    [
        (
            "bind:\n  disabled:\n  - {name: '*'}",
            "at least one bind plugin is needed for profile with scheduler name "
            '"default-scheduler"',
        ),
        (
            "queueSort:\n  disabled:\n  - {name: '*'}",
            "only one queue sort plugin required for profile with scheduler name "
            '"default-scheduler", but got 0',
        ),
        # A plugin from outside the package may implement Bind: not refused for it.
        ("bind:\n  disabled:\n  - {name: '*'}\n  enabled:\n  - {name: OutsideBinder}", None),
    ],
    ids=["no-bind", "no-queue-sort", "outside-binder"],
)
def test_a_profile_new_framework_refuses_is_refused_in_its_words(plugins, refused):
    indented = "\n".join("    " + line for line in plugins.splitlines())
    text = HEADER + f"profiles:\n- plugins:\n{indented}\n"
    if refused is None:
        decode_configuration(yaml.safe_load(text), "c.yaml")
        return
    with pytest.raises(ConfigError) as info:
        decode_configuration(yaml.safe_load(text), "c.yaml")
    assert [str(e) for e in info.value.errors] == [
        f"creating profile for scheduler name default-scheduler: {refused}"
    ]
