"""The scenario parser: valid shapes, and a corpus of broken scenarios with exact messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topospread.engine.sim.scenario import (
    AddNodes,
    FailNodes,
    NodeSet,
    Scale,
    WorkloadRef,
    parse_scenario,
)
from topospread.errors import ConfigError, InputError, ValidationError
from topospread.io.scenarios import load_scenario
from topospread.model.objects import Deployment, Node, Service

DATA = Path(__file__).resolve().parents[2] / "data" / "scenarios"

HEADER = """
apiVersion: topospread.dev/v1alpha1
kind: Scenario
metadata: {name: t}
cluster:
  nodes: {zones: [a, b], perZone: 2}
"""

DEPLOYMENT = """
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: web, image: nginx}]
"""


def parse(text: str):
    return parse_scenario(yaml.safe_load(text), "story.yaml")


def errors_of(text: str) -> list[str]:
    with pytest.raises(InputError) as info:
        parse(text)
    return info.value.lines()


def test_a_small_scenario_parses_into_typed_steps():
    scenario = parse(
        HEADER
        + "steps:\n- apply:\n    objects:"
        + DEPLOYMENT
        + "- {name: bigger, scale: {deployment: web, replicas: 3}}\n"
        + "- failZone: {zone: a}\n"
        + "- addNodes: {zones: [c], perZone: 1}\n"
        + "- wait: 30\n"
    )
    nodes = [o for o in scenario.objects if isinstance(o, Node)]
    assert [n.name for n in nodes] == ["node-a-1", "node-a-2", "node-b-1", "node-b-2"]
    assert nodes[0].labels == {
        "kubernetes.io/hostname": "node-a-1",
        "topology.kubernetes.io/zone": "a",
    }
    assert str(nodes[0].allocatable["pods"]) == "110"
    kinds = [s.kind for s in scenario.steps]
    assert kinds == ["apply", "scale", "failZone", "addNodes", "wait"]
    assert isinstance(scenario.steps[0].action.objects[0], Deployment)
    assert scenario.steps[1].action == Scale(WorkloadRef("Deployment", "default", "web"), 3)
    assert scenario.steps[1].title() == "bigger"
    assert scenario.steps[2].action == FailNodes(NodeSet(zone="a"), "notReady")
    assert isinstance(scenario.steps[3].action, AddNodes)
    assert scenario.steps[3].action.nodes[0].name == "node-c-1"
    assert scenario.steps[4].title() == "wait 30s"


BROKEN = [
    (
        "negative-replicas",
        "steps:\n- apply:\n    objects:" + DEPLOYMENT + "- scale: {deployment: web, replicas: -1}\n"
        "- scale: {deployment: web, replicas: 1}\n- scale: {deployment: web, replicas: 2}\n"
        "- scale: {deployment: web, replicas: -1}\n",
        [
            "story.yaml: steps[1].scale.replicas: Invalid value: -1: "
            "must be greater than or equal to 0",
            "story.yaml: steps[4].scale.replicas: Invalid value: -1: "
            "must be greater than or equal to 0",
        ],
    ),
    (
        "unknown-workload",
        "steps:\n- scale: {deployment: web, replicas: 1}\n",
        ['story.yaml: steps[0].scale.deployment: Not found: "web"'],
    ),
    (
        "unknown-step",
        "steps:\n- scael: {deployment: web}\n",
        [
            'story.yaml: steps[0]: Unsupported value: "scael": supported values: "addNodes", '
            '"apply", "cordon", "deletePods", "drain", "failNode", "failZone", "labelNode", '
            '"rebalance", "removeNodes", "rollout", "scale", "scalePool", "setPool", '
            '"taintNode", "uncordon", "wait"'
        ],
    ),
    (
        "two-actions",
        "steps:\n- {cordon: {nodes: [node-a-1]}, drain: {nodes: [node-a-1]}}\n",
        [
            "story.yaml: steps[0]: Required value: exactly one action: addNodes, apply, "
            "cordon, deletePods, drain, failNode, failZone, labelNode, rebalance, removeNodes, "
            "rollout, scale, scalePool, setPool, taintNode, uncordon, wait"
        ],
    ),
    (
        "unknown-node",
        "steps:\n- cordon: {nodes: [node-a-1, node-z-9]}\n",
        ['story.yaml: steps[0].cordon.nodes[1]: Not found: "node-z-9"'],
    ),
    (
        "unknown-zone",
        "steps:\n- failZone: {zone: z}\n",
        ['story.yaml: steps[0].failZone.zone: Not found: "z"'],
    ),
    (
        "bad-fail-mode",
        "steps:\n- failNode: {nodes: [node-a-1], mode: explode}\n",
        [
            'story.yaml: steps[0].failNode.mode: Unsupported value: "explode": '
            'supported values: "notReady", "remove"'
        ],
    ),
    (
        "wrong-type",
        "steps:\n- apply:\n    objects:"
        + DEPLOYMENT
        + "- scale: {deployment: web, replicas: three}\n",
        [
            'story.yaml: steps[1].scale.replicas: Invalid value: "three": '
            "expected integer, got string"
        ],
    ),
    (
        "misspelt-field",
        "steps:\n- apply:\n    objects:" + DEPLOYMENT + "- scale: {deployment: web, replica: 3}\n",
        [
            "story.yaml: steps[1].scale.replica: Not found: unknown field (known: deployment, "
            "replicaSet, statefulSet, namespace, replicas)",
            "story.yaml: steps[1].scale.replicas: Required value",
        ],
    ),
    (
        "invalid-spread-in-template",
        "steps:\n- apply:\n    objects:"
        + DEPLOYMENT.replace(
            "containers:",
            "topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, "
            "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n"
            "            containers:",
        ),
        [
            "story.yaml: steps[0].apply.objects[0].spec.template.spec."
            "topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
        ],
    ),
    (
        "selector-does-not-match-template",
        "steps:\n- apply:\n    objects:"
        + DEPLOYMENT.replace("labels: {app: web}", "labels: {app: api}"),
        [
            "story.yaml: steps[0].apply.objects[0].spec.template.metadata.labels: Invalid value: "
            '{"app":"api"}: `selector` does not match template `labels`'
        ],
    ),
    (
        "bad-max-surge",
        "steps:\n- apply:\n    objects:"
        + DEPLOYMENT.replace(
            "replicas: 2",
            "replicas: 2\n        strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}",
        ),
        [
            "story.yaml: steps[0].apply.objects[0].spec.strategy.rollingUpdate.maxUnavailable: "
            "Invalid value: 0: may not be 0 when `maxSurge` is 0"
        ],
    ),
    (
        "bad-rollout-constraint",
        "steps:\n- apply:\n    objects:"
        + DEPLOYMENT
        + "- rollout:\n    deployment: web\n    topologySpreadConstraints:\n"
        "    - {maxSkew: one, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
        [
            "story.yaml: steps[1].rollout.topologySpreadConstraints[0].maxSkew: Invalid value: "
            '"one": expected int32, got string'
        ],
    ),
    (
        "unsupported-kind",
        "steps:\n- apply:\n    objects:\n"
        "    - {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n",
        [
            'story.yaml: steps[0].apply.objects[0].kind: Unsupported value: "v1/ConfigMap": '
            'supported values: "apps/v1/Deployment", "apps/v1/ReplicaSet", '
            '"apps/v1/StatefulSet", "policy/v1/PodDisruptionBudget", '
            '"scheduling.k8s.io/v1/PriorityClass", '
            '"storage.k8s.io/v1/CSIDriver", "storage.k8s.io/v1/CSINode", '
            '"storage.k8s.io/v1/CSIStorageCapacity", "storage.k8s.io/v1/StorageClass", '
            '"storage.k8s.io/v1/VolumeAttachment", "v1/Node", "v1/PersistentVolume", '
            '"v1/PersistentVolumeClaim", "v1/Pod", "v1/ReplicationController", "v1/Service"'
        ],
    ),
    (
        "duplicate-node",
        "steps:\n- addNodes: {zones: [a], perZone: 1}\n",
        ['story.yaml: steps[0].addNodes: Duplicate value: "node node-a-1"'],
    ),
    (
        "negative-wait",
        "steps:\n- wait: {seconds: -3}\n",
        [
            "story.yaml: steps[0].wait.seconds: Invalid value: -3: "
            "must be greater than or equal to 0"
        ],
    ),
    (
        "pdb-both-bounds",
        "steps:\n- apply:\n    objects:\n    - apiVersion: policy/v1\n"
        "      kind: PodDisruptionBudget\n      metadata: {name: p}\n"
        "      spec: {minAvailable: 1, maxUnavailable: 150%, selector: {matchLabels: {a: b}}}\n",
        [
            'story.yaml: steps[0].apply.objects[0].spec: Invalid value: {"minAvailable":1,'
            '"maxUnavailable":"150%"}: minAvailable and maxUnavailable cannot be both set',
            'story.yaml: steps[0].apply.objects[0].spec.maxUnavailable: Invalid value: "150%": '
            "must not be greater than 100%",
        ],
    ),
    (
        "bad-generator",
        "steps: []\n",
        None,  # replaced below: the generator itself is broken
    ),
]
BROKEN[-1] = (
    "bad-generator",
    HEADER.replace("perZone: 2", "perZone: 0, namePattern: '{rack}'") + "steps: []\n",
    [
        "story.yaml: cluster.nodes.perZone: Invalid value: 0: must be greater than zero",
        'story.yaml: cluster.nodes.namePattern: Invalid value: "{rack}": '
        "may only use {zone} and {i} placeholders",
    ],
)


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, e in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_broken_scenarios_get_one_clear_report(text, expected):
    document = text if text.lstrip().startswith("apiVersion") else HEADER + text
    assert errors_of(document) == expected


def test_errors_are_validation_errors_naming_the_file():
    with pytest.raises(ValidationError) as info:
        parse(HEADER + "steps:\n- wait: {seconds: -1}\n")
    assert info.value.source == "story.yaml"


def test_the_kind_and_api_version_are_checked_first():
    assert errors_of("apiVersion: v1\nkind: Pod\n") == [
        'story.yaml: expected apiVersion "topospread.dev/v1alpha1" and kind "Scenario", '
        'got "v1" and "Pod"'
    ]


def test_an_invalid_scheduler_config_is_a_config_error():
    with pytest.raises(ConfigError):
        parse(
            HEADER + "schedulerConfig: {apiVersion: kubescheduler.config.k8s.io/v1, "
            "kind: KubeSchedulerConfiguration, profiles: [{schedulerName: ''}]}\nsteps: []\n"
        )


def test_file_references_are_resolved_relative_to_the_scenario(tmp_path):
    (tmp_path / "extra.yaml").write_text((DATA / "extra.yaml").read_text())
    (tmp_path / "s.yaml").write_text(
        HEADER + "  files: [extra.yaml]\nsteps:\n- apply: {file: extra.yaml}\n"
    )
    scenario = load_scenario(tmp_path / "s.yaml")
    assert any(isinstance(o, Service) for o in scenario.objects)
    assert isinstance(scenario.steps[0].action.objects[0], Service)


def test_a_missing_referenced_file_is_reported_with_its_path(tmp_path):
    (tmp_path / "s.yaml").write_text(HEADER + "  files: [nope.yaml]\nsteps: []\n")
    with pytest.raises(InputError) as info:
        load_scenario(tmp_path / "s.yaml")
    (line,) = info.value.lines()
    assert (
        line == f"{tmp_path / 's.yaml'}: cluster.files[0]: {tmp_path / 'nope.yaml'}: no such file"
    )


PRIORITIES = """\
apiVersion: topospread.dev/v1alpha1
kind: Scenario
metadata: {name: priorities}
cluster:
  nodes: {zones: [a], perZone: 1, allocatable: {cpu: "4", memory: 8Gi, pods: 110}}
  objects:
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
steps:
- name: deploy
  apply:
    objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            priorityClassName: high
            containers: [{name: web, image: nginx}]
"""


def test_priority_classes_in_a_scenario_give_created_pods_their_priority(tmp_path):
    from topospread.engine.sim.simulator import Simulator

    path = tmp_path / "priorities.yaml"
    path.write_text(PRIORITIES)
    simulator = Simulator(load_scenario(path))
    simulator.run_scenario(lambda progress: None)
    priorities = {r.pod.name: r.pod.priority for r in simulator.state.pods.values()}
    assert len(priorities) == 2
    assert set(priorities.values()) == {1000}


# -- strict field validation of the objects a scenario applies ----------------------------------
# The objects are refused as `kubectl apply` (strict field validation) and `explain`, `lint`
# and `plan` refuse them: a misspelt field is never dropped in silence.

SPREAD = """
            topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: DoNotSchedule
              nodeTaintsPolicy: Honor
              labelSelector: {matchLabels: {app: web}}
            containers:"""

SPREAD_DEPLOYMENT = DEPLOYMENT.replace("\n            containers:", SPREAD)


def applied(deployment: str) -> str:
    return (
        HEADER
        + "steps:\n- apply:\n    objects:"
        + deployment
        + "- scale: {deployment: web, replicas: 3}\n"
    )


def test_a_deployment_spelt_right_applies_with_its_taint_policy():
    scenario = parse(applied(SPREAD_DEPLOYMENT))
    (deployment,) = scenario.steps[0].action.objects
    assert deployment.template.topology_spread_constraints[0].node_taints_policy == "Honor"


def test_a_misspelt_field_of_an_applied_object_is_refused_naming_the_step_and_the_field():
    text = applied(SPREAD_DEPLOYMENT.replace("nodeTaintsPolicy", "NodeTaintsPolicy"))
    assert errors_of(text) == [
        "story.yaml: steps[0].apply.objects[0]: Deployment web: strict decoding error: "
        'unknown field "spec.template.spec.topologySpreadConstraints[0].NodeTaintsPolicy"'
    ]


def test_a_misspelt_replicas_of_a_deployment_is_refused_rather_than_defaulted():
    assert errors_of(applied(DEPLOYMENT.replace("replicas: 2", "replica: 2"))) == [
        "story.yaml: steps[0].apply.objects[0]: Deployment web: strict decoding error: "
        'unknown field "spec.replica"'
    ]


def test_a_misspelt_field_in_an_applied_file_names_the_scenario_the_step_and_the_file(
    tmp_path,
):
    (deployment,) = yaml.safe_load(SPREAD_DEPLOYMENT.replace("nodeTaintsPolicy", "taints"))
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(deployment))
    (tmp_path / "s.yaml").write_text(
        HEADER + "steps:\n- apply: {file: web.yaml}\n- scale: {deployment: web, replicas: 3}\n"
    )
    with pytest.raises(ValidationError) as info:
        load_scenario(tmp_path / "s.yaml")
    assert info.value.lines() == [
        f"{tmp_path / 's.yaml'}: steps[0].apply.file(web.yaml) document 1: Deployment web: "
        "strict decoding error: unknown field "
        '"spec.template.spec.topologySpreadConstraints[0].taints"'
    ]


def test_a_misspelt_required_field_is_named_without_the_errors_that_follow_from_it():
    # Not "topologyKey: Required value", nor the later steps' "deployment: Not found".
    text = applied(SPREAD_DEPLOYMENT.replace("topologyKey:", "topologyKeyy:"))
    assert errors_of(text + "- rollout: {deployment: web, image: web:2}\n") == [
        "story.yaml: steps[0].apply.objects[0]: Deployment web: strict decoding error: "
        'unknown field "spec.template.spec.topologySpreadConstraints[0].topologyKeyy"'
    ]


def test_a_misspelt_field_of_a_cluster_node_is_refused_and_its_node_is_not_reported_missing():
    text = HEADER + (
        "  objects:\n"
        "  - apiVersion: v1\n"
        "    kind: Node\n"
        "    metadata: {name: spare, labels: {topology.kubernetes.io/zone: c}}\n"
        "    spec: {unschedulabel: true}\n"
        "steps:\n- cordon: {nodes: [spare]}\n- failZone: {zone: c}\n"
    )
    assert errors_of(text) == [
        "story.yaml: cluster.objects[0]: Node spare: strict decoding error: "
        'unknown field "spec.unschedulabel"'
    ]


def test_misspelt_kubernetes_fields_of_a_rollout_and_a_selector_are_refused():
    text = (
        applied(DEPLOYMENT) + "- rollout:\n    deployment: web\n    topologySpreadConstraints:\n"
        "    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
        "NodeTaintsPolicy: Honor}\n"
        "- deletePods: {selector: {matchLabel: {app: web}}}\n"
    )
    assert errors_of(text) == [
        "story.yaml: steps[2].rollout: strict decoding error: "
        'unknown field "topologySpreadConstraints[0].NodeTaintsPolicy"',
        "story.yaml: steps[3].deletePods: strict decoding error: "
        'unknown field "selector.matchLabel"',
    ]


def test_an_object_read_back_from_a_server_keeps_fields_this_version_does_not_know():
    captured = DEPLOYMENT.replace("{name: web}", "{name: web, uid: u-1}").replace(
        "replicas: 2", "replicas: 2\n        fieldOfANewerServer: true"
    )
    scenario = parse(applied(captured))
    assert isinstance(scenario.steps[0].action.objects[0], Deployment)
