"""API-server validation of pods, nodes and workload selectors (v1.37.1 wording)."""

from pathlib import Path

import pytest
import yaml

from topospread.model.decode import decode_object
from topospread.model.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
    TopologySpreadConstraint,
)
from topospread.model.validation import (
    merge_match_label_keys,
    validate_node,
    validate_object,
    validate_pod,
    validate_topology_spread_constraints,
)

INVALID_DIR = Path(__file__).resolve().parents[1] / "data" / "invalid"

KEY_REGEX_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def pod_from(spec_yaml: str, labels: dict[str, str] | None = None) -> Pod:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": labels if labels is not None else {"app": "web"}},
        "spec": yaml.safe_load(spec_yaml) or {},
    }
    obj = decode_object(doc)
    assert isinstance(obj, Pod)
    return obj


def messages(errors) -> list[str]:
    return [str(e) for e in errors]


def spread(extra: str = "", selector: str = "labelSelector: {matchLabels: {app: web}}") -> str:
    return f"""
topologySpreadConstraints:
- maxSkew: 1
  topologyKey: zone
  whenUnsatisfiable: DoNotSchedule
  {selector}
  {extra}
"""


TSC = "spec.topologySpreadConstraints[0]"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (spread(), []),
        (
            spread().replace("maxSkew: 1", "maxSkew: 0"),
            [f"{TSC}.maxSkew: Invalid value: 0: must be greater than zero"],
        ),
        (
            spread().replace("maxSkew: 1", "maxSkew: -2"),
            [f"{TSC}.maxSkew: Invalid value: -2: must be greater than zero"],
        ),
        (
            spread().replace("topologyKey: zone", "topologyKey: ''"),
            [f"{TSC}.topologyKey: Required value: can not be empty"],
        ),
        (
            spread().replace("DoNotSchedule", "Sometimes"),
            [f'{TSC}.whenUnsatisfiable: Unsupported value: "Sometimes": '
             'supported values: "DoNotSchedule", "ScheduleAnyway"'],
        ),
        (
            spread("minDomains: 0"),
            [f"{TSC}.minDomains: Invalid value: 0: must be greater than zero"],
        ),
        (
            spread("minDomains: 2").replace("DoNotSchedule", "ScheduleAnyway"),
            [f"{TSC}.minDomains: Invalid value: 2: can only use minDomains if "
             "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"],
        ),
        (
            spread("minDomains: -1").replace("DoNotSchedule", "ScheduleAnyway"),
            [f"{TSC}.minDomains: Invalid value: -1: must be greater than zero",
             f"{TSC}.minDomains: Invalid value: -1: can only use minDomains if "
             "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"],
        ),
        (
            spread("nodeAffinityPolicy: Sometimes"),
            [f'{TSC}.nodeAffinityPolicy: Unsupported value: "Sometimes": '
             'supported values: "Honor", "Ignore"'],
        ),
        (
            spread("nodeTaintsPolicy: honor"),
            [f'{TSC}.nodeTaintsPolicy: Unsupported value: "honor": '
             'supported values: "Honor", "Ignore"'],
        ),
        (spread("nodeAffinityPolicy: Ignore\n  nodeTaintsPolicy: Honor"), []),
        (
            spread(selector="labelSelector: {matchExpressions: [{key: app, operator: Is, "
                   "values: [web]}]}"),
            [f'{TSC}.labelSelector.matchExpressions[0].operator: Invalid value: "Is": '
             "not a valid selector operator"],
        ),
        (
            spread(selector="labelSelector: {matchExpressions: [{key: app, operator: In}]}"),
            [f"{TSC}.labelSelector.matchExpressions[0].values: Required value: "
             "must be specified when `operator` is 'In' or 'NotIn'"],
        ),
        (
            spread(selector="labelSelector: {matchExpressions: [{key: app, operator: Exists, "
                   "values: [web]}]}"),
            [f"{TSC}.labelSelector.matchExpressions[0].values: Forbidden: "
             "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
        ),
        (
            spread(selector="labelSelector: {matchLabels: {'-bad': web}}"),
            [f'{TSC}.labelSelector.matchLabels: Invalid value: "-bad": {KEY_REGEX_MSG}'],
        ),
        (
            spread(selector="labelSelector: {matchLabels: {app: 'no way'}}"),
            [f'{TSC}.labelSelector.matchLabels: Invalid value: "no way": {VALUE_REGEX_MSG}'],
        ),
        (
            spread(selector="matchLabelKeys: [pod-template-hash]"),
            [f"{TSC}.matchLabelKeys: Forbidden: "
             "must not be specified when labelSelector is not set"],
        ),
        (
            spread("matchLabelKeys: [app]"),
            [f'{TSC}[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
        ),
        (spread("matchLabelKeys: [version]"), []),
        (
            spread("matchLabelKeys: ['-x']"),
            [f'{TSC}.matchLabelKeys[0]: Invalid value: "-x": {KEY_REGEX_MSG}'],
        ),
    ],
    ids=[
        "a well-formed constraint is valid",
        "maxSkew 0 must be greater than zero",
        "a negative maxSkew must be greater than zero",
        "an empty topologyKey can not be empty",
        "an unknown whenUnsatisfiable lists the supported values",
        "minDomains 0 must be greater than zero",
        "minDomains with ScheduleAnyway is rejected with the action named",
        "a negative minDomains with ScheduleAnyway gives both errors",
        "an unknown nodeAffinityPolicy lists Honor and Ignore",
        "node inclusion policies are case sensitive",
        "both node inclusion policies accept their values",
        "an invalid selector operator is not a valid selector operator",
        "In without values is required",
        "Exists with values is forbidden",
        "a bad selector label key is reported at matchLabels",
        "a bad selector label value is reported at matchLabels",
        "matchLabelKeys without labelSelector is forbidden",
        "a matchLabelKeys key also in matchLabels is reported at the odd upstream path",
        "a matchLabelKeys key the pod has no label for is merged away silently",
        "a matchLabelKeys key must be a valid label key",
    ],
)
def test_topology_spread_constraint_rules(spec, expected):
    pod = pod_from(spec, {"app": "web", "version": "v1"})
    assert messages(validate_pod(pod)) == expected


def test_an_invalid_match_label_key_is_reported_once_with_the_upstream_message():
    pod = pod_from(spread("matchLabelKeys: ['-x']"))
    assert messages(validate_pod(pod)) == [
        f'{TSC}.matchLabelKeys[0]: Invalid value: "-x": {KEY_REGEX_MSG}'
    ]


def test_duplicate_constraints_are_reported_at_the_first_with_key_and_action():
    spec = """
topologySpreadConstraints:
- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
- {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}}
"""
    assert messages(validate_pod(pod_from(spec))) == [
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: "
        'Duplicate value: "{zone, DoNotSchedule}"'
    ]


def test_errors_accumulate_in_upstream_order_within_a_constraint():
    spec = """
topologySpreadConstraints:
- maxSkew: 0
  topologyKey: ""
  whenUnsatisfiable: Never
  minDomains: 0
  nodeAffinityPolicy: X
  nodeTaintsPolicy: Y
  matchLabelKeys: [app]
"""
    assert messages(validate_pod(pod_from(spec))) == [
        f"{TSC}.maxSkew: Invalid value: 0: must be greater than zero",
        f"{TSC}.topologyKey: Required value: can not be empty",
        f'{TSC}.whenUnsatisfiable: Unsupported value: "Never": '
        'supported values: "DoNotSchedule", "ScheduleAnyway"',
        f"{TSC}.minDomains: Invalid value: 0: must be greater than zero",
        f"{TSC}.minDomains: Invalid value: 0: can only use minDomains if "
        "whenUnsatisfiable=DoNotSchedule, not Never",
        f'{TSC}.nodeAffinityPolicy: Unsupported value: "X": supported values: "Honor", "Ignore"',
        f'{TSC}.nodeTaintsPolicy: Unsupported value: "Y": supported values: "Honor", "Ignore"',
        f"{TSC}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
    ]


def test_merge_appends_in_expressions_for_keys_the_pod_has():
    pod = pod_from(spread("matchLabelKeys: [version, missing, app2]"),
                   {"app": "web", "version": "v1", "app2": "x"})
    merged = merge_match_label_keys(pod)
    selector = merged.topology_spread_constraints[0].label_selector
    assert selector == LabelSelector(
        match_labels={"app": "web"},
        match_expressions=(
            LabelSelectorRequirement("version", "In", ("v1",)),
            LabelSelectorRequirement("app2", "In", ("x",)),
        ),
    )
    assert merged.topology_spread_constraints[0].match_label_keys == ("version", "missing", "app2")


def test_merge_leaves_a_nil_selector_nil_and_returns_the_same_pod_when_nothing_changes():
    pod = pod_from(spread(selector="matchLabelKeys: [app]"))
    assert merge_match_label_keys(pod) is pod


def test_merge_applies_match_and_mismatch_label_keys_to_pod_affinity_terms():
    spec = """
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector: {matchLabels: {tier: db}}
      matchLabelKeys: [app]
      mismatchLabelKeys: [version]
"""
    merged = merge_match_label_keys(pod_from(spec, {"app": "web", "version": "v1"}))
    assert merged.affinity is not None
    selector = merged.affinity.pod_anti_affinity_required[0].label_selector
    assert selector is not None
    assert selector.match_expressions == (
        LabelSelectorRequirement("app", "In", ("web",)),
        LabelSelectorRequirement("version", "NotIn", ("v1",)),
    )


def test_a_stored_pod_is_not_merged_again_when_validated_as_stored():
    pod = merge_match_label_keys(pod_from(spread("matchLabelKeys: [version]"),
                                          {"app": "web", "version": "v1"}))
    assert validate_pod(pod, create=False) == []


def test_a_key_written_in_match_expressions_and_match_label_keys_is_caught_on_create():
    spec = spread(
        "matchLabelKeys: [version]",
        selector="labelSelector: {matchExpressions: [{key: version, operator: In, "
        "values: [v1]}]}",
    )
    pod = pod_from(spec, {"app": "web", "version": "v1"})
    assert messages(validate_pod(pod)) == [
        f'{TSC}[0]: Invalid value: "version": exists in both matchLabelKeys and labelSelector'
    ]


def test_the_legacy_match_label_keys_rule_reports_at_match_label_keys():
    constraint = TopologySpreadConstraint(
        max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule",
        label_selector=LabelSelector(match_labels={"app": "web"}), match_label_keys=("app",))
    errors = validate_topology_spread_constraints((constraint,), "spec.topologySpreadConstraints",
                                                  selector_merge=False)
    assert messages(errors) == [
        f'{TSC}.matchLabelKeys[0]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector"
    ]


NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
TERM = f"{NA}.nodeSelectorTerms[0]"


def affinity(expr: str, where: str = "matchExpressions") -> str:
    return f"""
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - {where}: [{expr}]
"""


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (affinity("{key: zone, operator: In, values: [a, b]}"), []),
        (affinity("{key: zone, operator: In}"),
         [f"{TERM}.matchExpressions[0].values: Required value: "
          "must be specified when `operator` is 'In' or 'NotIn'"]),
        (affinity("{key: zone, operator: Exists, values: [a]}"),
         [f"{TERM}.matchExpressions[0].values: Forbidden: "
          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]),
        (affinity("{key: cpus, operator: Gt, values: ['1', '2']}"),
         [f"{TERM}.matchExpressions[0].values: Required value: "
          "must be specified single value when `operator` is 'Lt' or 'Gt'"]),
        (affinity("{key: cpus, operator: Lt, values: ['4']}"), []),
        (affinity("{key: zone, operator: Equals, values: [a]}"),
         [f'{TERM}.matchExpressions[0].operator: Invalid value: "Equals": '
          "not a valid selector operator"]),
        (affinity("{key: zone, operator: In, values: ['a b']}"),
         [f'{TERM}.matchExpressions[0].values[0]: Invalid value: "a b": {VALUE_REGEX_MSG}']),
        (affinity("{key: metadata.name, operator: In, values: [node-1]}", "matchFields"), []),
        (affinity("{key: metadata.name, operator: In, values: [a, b]}", "matchFields"),
         [f"{TERM}.matchFields[0].values: Required value: must be only one value when "
          "`operator` is 'In' or 'NotIn' for node field selector"]),
        (affinity("{key: metadata.name, operator: Exists}", "matchFields"),
         [f'{TERM}.matchFields[0].operator: Invalid value: "Exists": '
          "not a valid selector operator"]),
        (affinity("{key: metadata.labels, operator: In, values: [a]}", "matchFields"),
         [f'{TERM}.matchFields[0].key: Invalid value: "metadata.labels": '
          "not a valid field selector key"]),
        ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "{nodeSelectorTerms: []}}}",
         [f"{NA}.nodeSelectorTerms: Required value: must have at least one node selector term"]),
        ("""
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 101
      preference: {matchExpressions: [{key: zone, operator: In, values: ['not valid']}]}
""",
         ["spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
          "Invalid value: 101: must be in the range 1-100"]),
    ],
    ids=[
        "In with values is valid",
        "In without values is required",
        "Exists with values is forbidden",
        "Gt with two values needs a single value",
        "Lt with one value is valid",
        "an unknown operator is not a valid selector operator",
        "required terms check label values",
        "matchFields on metadata.name with one value is valid",
        "matchFields with two values needs exactly one",
        "matchFields only allow In and NotIn",
        "matchFields only allow metadata.name",
        "a required selector needs at least one term",
        "preferred weight must be 1-100 and preferred values are not checked",
    ],
)
def test_node_affinity_rules(spec, expected):
    assert messages(validate_pod(pod_from(spec))) == expected


def test_pod_affinity_terms_need_a_topology_key():
    spec = """
affinity:
  podAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 0
      podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: ""}
"""
    base = "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    assert messages(validate_pod(pod_from(spec))) == [
        f"{base}.weight: Invalid value: 0: must be in the range 1-100",
        f"{base}.podAffinityTerm.topologyKey: Required value: can not be empty",
        f'{base}.podAffinityTerm.topologyKey: Invalid value: "": name part must be non-empty',
        f'{base}.podAffinityTerm.topologyKey: Invalid value: "": {KEY_REGEX_MSG}',
    ]


TOL = "spec.tolerations[0]"


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ("{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}", []),
        ("{operator: Exists}", []),
        ("{key: dedicated, value: gpu}", []),
        ("{value: gpu}",
         [f'{TOL}.operator: Invalid value: "": operator must be Exists when `key` is empty, '
          'which means "match all values and all keys"']),
        ("{key: dedicated, operator: Exists, value: gpu}",
         [f'{TOL}.operator: Invalid value: "gpu": value must be empty when `operator` is '
          "'Exists'"]),
        ("{key: dedicated, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}",
         [f'{TOL}.effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when '
          "`tolerationSeconds` is set"]),
        ("{key: dedicated, operator: Exists, effect: NoExecute, tolerationSeconds: 30}", []),
        ("{key: dedicated, operator: Exists, effect: Never}",
         [f'{TOL}.effect: Unsupported value: "Never": supported values: "NoSchedule", '
          '"PreferNoSchedule", "NoExecute"']),
        ("{key: dedicated, operator: Has}",
         [f'{TOL}.operator: Unsupported value: "Has": supported values: "Equal", "Exists"']),
        ("{key: cores, operator: Gt, value: '4'}",
         [f'{TOL}.operator: Unsupported value: "Gt": supported values: "Equal", "Exists", '
          '"Lt", "Gt"']),
        ("{key: '-bad', operator: Exists}",
         [f'{TOL}.key: Invalid value: "-bad": {KEY_REGEX_MSG}']),
        ("{key: dedicated, value: 'a b'}",
         [f'{TOL}.operator: Invalid value: "a b": {VALUE_REGEX_MSG}']),
    ],
    ids=[
        "a full toleration is valid",
        "Exists with no key tolerates everything",
        "an empty operator means Equal",
        "an empty key needs Exists",
        "Exists with a value is rejected at operator",
        "tolerationSeconds needs NoExecute",
        "tolerationSeconds with NoExecute is valid",
        "an unknown effect lists the three effects",
        "an unknown operator lists Equal and Exists",
        "Gt is unsupported while its alpha gate is off",
        "a bad key is a label key error",
        "a bad Equal value is reported at operator",
    ],
)
def test_toleration_rules(toleration, expected):
    assert messages(validate_pod(pod_from(f"tolerations: [{toleration}]"))) == expected


def test_metadata_labels_and_node_selector_are_label_maps():
    pod = pod_from("nodeSelector: {'zone/': a, disk: 'ss d'}", {"ok": "-no"})
    assert messages(validate_pod(pod)) == [
        f'metadata.labels: Invalid value: "-no": {VALUE_REGEX_MSG}',
        'spec.nodeSelector: Invalid value: "zone/": name part must be non-empty',
        f'spec.nodeSelector: Invalid value: "zone/": {KEY_REGEX_MSG}',
        f'spec.nodeSelector: Invalid value: "ss d": {VALUE_REGEX_MSG}',
    ]


def test_node_name_and_scheduling_gates():
    pod = pod_from("nodeName: Node_1\nschedulingGates: [{name: wait}, {name: wait}]")
    subdomain = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert messages(validate_pod(pod)) == [
        'spec.schedulingGates[1]: Duplicate value: "wait"',
        f'spec.nodeName: Invalid value: "Node_1": {subdomain}',
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
    ]


def test_node_taints_are_reported_under_metadata_as_upstream_does():
    node = Node(
        ObjectMeta("n1", labels={"zone": "a"}),
        taints=(Taint("gpu", "NoSchedule"), Taint("gpu", "Sometimes"), Taint("gpu", "NoSchedule")),
    )
    assert messages(validate_node(node)) == [
        'metadata.taints[1].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        'metadata.taints[2]: Duplicate value: {"Key":"gpu","Value":"","Effect":"NoSchedule",'
        '"TimeAdded":null}: taints must be unique by key and effect pair',
    ]


def test_a_taint_needs_an_effect():
    node = Node(ObjectMeta("n1"), taints=(Taint("gpu", ""),))
    assert messages(validate_node(node)) == ["metadata.taints[0].effect: Required value"]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (Service(ObjectMeta("s", "default"), {"app": "web"}), []),
        (Service(ObjectMeta("s", "default"), {"app": "-web"}),
         [f'spec.selector: Invalid value: "-web": {VALUE_REGEX_MSG}']),
        (ReplicationController(ObjectMeta("rc", "default"), {}),
         ["spec.selector: Required value"]),
        (ReplicaSet(ObjectMeta("rs", "default"), LabelSelector()),
         ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
        (ReplicaSet(ObjectMeta("rs", "default"), None), ["spec.selector: Required value"]),
        (StatefulSet(ObjectMeta("ss", "default"), LabelSelector()),
         ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]),
        (StatefulSet(ObjectMeta("ss", "default"), LabelSelector(
            match_expressions=(LabelSelectorRequirement("app", "In"),))),
         ["spec.selector.matchExpressions[0].values: Required value: "
          "must be specified when `operator` is 'In' or 'NotIn'"]),
    ],
    ids=[
        "a service selector is valid",
        "a service selector value is a label value",
        "a replication controller needs a selector",
        "a replica set's empty selector is invalid with the deployment wording",
        "a replica set needs a selector",
        "a stateful set's empty selector is invalid",
        "a stateful set's selector expressions are validated",
    ],
)
def test_workload_selectors(obj, expected):
    assert messages(validate_object(obj)) == expected


def _corpus() -> list[Path]:
    return sorted(INVALID_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.stem.replace("-", " "))
def test_invalid_corpus_files_give_exactly_their_expected_error(path):
    text = path.read_text()
    first = text.splitlines()[0]
    assert first.startswith("# expect: "), "first line must be '# expect: <error>'"
    expected = first.removeprefix("# expect: ")
    obj = decode_object(yaml.safe_load(text), str(path))
    assert obj is not None
    assert messages(validate_object(obj)) == [expected]


def test_the_invalid_corpus_is_not_empty():
    assert len(_corpus()) >= 11
