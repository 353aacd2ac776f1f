"""The bulk (NumPy) scheduling path decides exactly as the per-node path.

``schedule_one`` with a node search runs Filter and Score in bulk over the snapshot's
node table when every active plugin offers a batch form. These tests run the same
cycles with ``Framework.batch_enabled`` on and off and compare everything a cycle
reports: the selected node, ties, totals, each plugin's score, every recorded status,
the FailedScheduling message and where the next search starts. Random full-profile
scenarios (the differential test's) cover the plugins' rules; a generated 300-node
cluster covers the search cut-off and the rotating start index, which only happen
from 100 nodes on; each places several pods in turn, so the table's incremental
updates are exercised too.
"""

from __future__ import annotations

import copy
import random
from dataclasses import replace

import pytest

from topospread.engine.cluster import Cluster
from topospread.engine.cycle import CycleResult, NodeSearch, schedule_one
from topospread.framework.config.decode import decode_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import Framework
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod
from topospread.plugins.registry import in_tree_registry
from topospread.testing.scenarios import Scenario, draw_full_scenarios, draw_scenarios

PLACEMENTS_PER_SCENARIO = 3


def _configuration(config: dict | None) -> SchedulerConfiguration:
    return decode_configuration(
        config
        or {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        "config",
    )


def _summary(result: CycleResult, search: NodeSearch) -> dict:
    return {
        "selected": result.selected_node,
        "tied": result.tied_nodes,
        "message": result.message,
        "totals": result.totals,
        "scores": result.scores,
        "statuses": {
            name: None if status is None else (status.code, status.reasons, status.plugin)
            for name, status in result.statuses.items()
        },
        "feasible": [info.name for info in result.feasible],
        "nominated": result.nominated_node,
        "next_start": search.next_start_node_index,
    }


def _place_in_turn(
    cluster: Cluster,
    pods: list[Pod],
    configuration: SchedulerConfiguration,
    *,
    batch: bool,
    start: int,
    visit_order_ties: bool,
) -> list[dict]:
    snapshot = cluster.snapshot()
    handle = Handle(snapshot, cluster.objects, configuration.parallelism)
    profile = configuration.profiles[0]
    framework = Framework(profile, in_tree_registry(), handle)
    framework.batch_enabled = batch
    search = NodeSearch(configuration.percentage_of_nodes_to_score)
    search.next_start_node_index = start
    summaries = []
    for pod in pods:
        result = schedule_one(framework, pod, search, visit_order_ties=visit_order_ties)
        summaries.append(_summary(result, search))
        if result.selected_node is not None:
            info = snapshot.get(result.selected_node)
            assert info is not None
            info.add_pod(replace(pod, node_name=result.selected_node))
    return summaries


def _decode(scenario: Scenario) -> tuple[Cluster, Pod, SchedulerConfiguration]:
    cluster = Cluster.from_objects(decode_documents(copy.deepcopy(scenario.cluster)).objects)
    (pod,) = decode_documents([copy.deepcopy(scenario.pod)]).objects
    assert isinstance(pod, Pod)
    return cluster, pod, _configuration(scenario.config)


def _copies(pod: Pod, count: int) -> list[Pod]:
    return [
        replace(pod, metadata=replace(pod.metadata, name=f"{pod.metadata.name}-{i}"))
        for i in range(count)
    ]


def _assert_same_decisions(cluster, pods, configuration, start: int, ties: bool) -> None:
    per_node = _place_in_turn(
        cluster, pods, configuration, batch=False, start=start, visit_order_ties=ties
    )
    in_bulk = _place_in_turn(
        cluster, pods, configuration, batch=True, start=start, visit_order_ties=ties
    )
    for index, (expected, actual) in enumerate(zip(per_node, in_bulk, strict=True)):
        assert actual == expected, f"pod #{index} ({pods[index].key})"


@pytest.mark.parametrize("chunk", range(4))
def test_bulk_and_per_node_cycles_agree_on_random_full_profile_scenarios(chunk) -> None:
    for index, scenario in enumerate(draw_full_scenarios(20261122 + chunk, 60)):
        cluster, pod, configuration = _decode(scenario)
        if len(configuration.profiles) != 1:
            continue
        pods = _copies(pod, PLACEMENTS_PER_SCENARIO)
        start = index % max(len(cluster.nodes), 1)
        _assert_same_decisions(cluster, pods, configuration, start, ties=bool(index % 2))


def test_bulk_and_per_node_cycles_agree_on_random_engine_profile_scenarios() -> None:
    for index, scenario in enumerate(draw_scenarios(20261122, 80)):
        cluster, pod, configuration = _decode(scenario)
        pods = _copies(pod, PLACEMENTS_PER_SCENARIO)
        _assert_same_decisions(cluster, pods, configuration, index, ties=bool(index % 2))


def _generated_cluster(seed: int, nodes: int) -> list[dict]:
    rng = random.Random(seed)
    objects: list[dict] = []
    for i in range(nodes):
        zone = f"zone-{i % 3}"
        node: dict = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"node-{i}",
                "labels": {
                    "kubernetes.io/hostname": f"node-{i}",
                    "topology.kubernetes.io/zone": zone,
                    "pool": rng.choice(["a", "b"]),
                },
            },
            "spec": {},
            "status": {
                "allocatable": {
                    "cpu": rng.choice(["1", "2", "4"]),
                    "memory": rng.choice(["2Gi", "4Gi", "8Gi"]),
                    "pods": rng.choice(["3", "10", "110"]),
                }
            },
        }
        if rng.random() < 0.15:
            effect = rng.choice(["NoSchedule", "PreferNoSchedule"])
            node["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": effect}]
        if rng.random() < 0.05:
            node["spec"]["unschedulable"] = True
        objects.append(node)
        objects.extend(
            _pod(f"existing-{i}-{j}", rng.choice(["web", "db"]), f"node-{i}", "250m")
            for j in range(rng.randrange(3))
        )
    return objects


def _pod(name: str, app: str, node: str | None, cpu: str, spread: list | None = None) -> dict:
    pod: dict = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
                }
            ],
        },
    }
    if node:
        pod["spec"]["nodeName"] = node
    if spread:
        pod["spec"]["topologySpreadConstraints"] = spread
    return pod


def _spread(key: str, when: str, skew: int, **extra) -> dict:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


@pytest.mark.parametrize(
    ("spread", "percentage"),
    [
        ([_spread("topology.kubernetes.io/zone", "DoNotSchedule", 1)], 0),
        ([_spread("kubernetes.io/hostname", "DoNotSchedule", 1, nodeTaintsPolicy="Honor")], 0),
        ([_spread("topology.kubernetes.io/zone", "ScheduleAnyway", 2)], 30),
        (
            [
                _spread("topology.kubernetes.io/zone", "DoNotSchedule", 1, minDomains=4),
                _spread("kubernetes.io/hostname", "ScheduleAnyway", 1),
            ],
            0,
        ),
        (None, 50),  # system default constraints
    ],
)
def test_bulk_search_cuts_off_and_rotates_as_the_per_node_search(spread, percentage) -> None:
    documents = _generated_cluster(7, 300)
    cluster = Cluster.from_objects(decode_documents(documents).objects)
    incoming = [
        decode_documents([_pod(f"web-{i}", "web", None, "500m", spread)]).objects[0]
        for i in range(40)
    ]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": percentage,
    }
    _assert_same_decisions(cluster, incoming, _configuration(config), 17, ties=True)
