"""DefaultPreemption, after upstream's ``default_preemption_test.go`` tables (test names
are upstream's), and hand-made clusters compared with the oracle (upstream v1.37.1)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from topospread.engine.cluster import Cluster
from topospread.engine.explain import Explanation, explain
from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import DefaultPreemptionArgs
from topospread.model.decode import decode_documents
from topospread.model.objects import (
    LabelSelector,
    ObjectMeta,
    Pod,
    PodCondition,
    PodDisruptionBudget,
)
from topospread.plugins.defaultpreemption import (
    Candidate,
    calculate_num_candidates,
    filter_victims_with_pdb_violation,
    pick_one_node_for_preemption,
    pod_terminating_by_preemption,
)
from topospread.testing.scenarios import with_priority_classes

Obj = dict[str, Any]
LOW, MID, HIGH, VERY_HIGH = 0, 100, 1000, 10000
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400", "pods": "110"}
LARGE_RES = {"cpu": "300m", "memory": "300"}
MEDIUM_RES = {"cpu": "200m", "memory": "200"}


def node(name: str, allocatable: dict[str, str], **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": allocatable},
    }


def pod(
    name: str,
    node_name: str = "",
    priority: int | None = None,
    requests: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    start: str | None = None,
    **spec: Any,
) -> Obj:
    container: Obj = {"name": "c", "image": "i"}
    if requests:
        container["resources"] = {"requests": requests}
    body: Obj = {"containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    doc: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": body,
    }
    if start:
        doc["status"] = {"startTime": start}
    return doc


def pdb(name: str, match: dict[str, str], allowed: int, **spec: Any) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": match}, **spec},
        "status": {"disruptionsAllowed": allowed},
    }


def run(cluster: list[Obj], incoming: Obj) -> Explanation:
    # Priorities written by value name PriorityClasses of that value (Priority admission).
    cluster, incoming = with_priority_classes(cluster, incoming)
    objects = decode_documents(cluster).objects
    (decoded,) = decode_documents([incoming]).objects
    assert isinstance(decoded, Pod)
    return explain(Cluster.from_objects(objects), decoded, default_configuration())


def postfilter_message(e: Explanation) -> str:
    assert e.message is not None
    return e.message[e.message.index("preemption: ") :]


# -- TestPostFilter ----------------------------------------------------------------------------

POST_FILTER_CASES: list[tuple[str, list[Obj], Obj, str | None, str]] = [
    (
        "pod with higher priority can be made schedulable",
        [node("node1", ONE_POD), pod("p1", "node1")],
        pod("p", priority=HIGH),
        "node1",
        "preemption: found a potential placement for pod on node node1, preempting 1 victims",
    ),
    (
        "pod with tied priority is still unschedulable",
        [node("node1", ONE_POD), pod("p1", "node1")],
        pod("p"),
        None,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    (
        "pod can be made schedulable on one node",
        [
            node("node1", ONE_POD),
            node("node2", ONE_POD),
            pod("p1", "node1", HIGH),
            pod("p2", "node2", LOW),
        ],
        pod("p", priority=MID),
        "node2",
        "preemption: found a potential placement for pod on node node2, preempting 1 victims",
    ),
    (
        "pod can be made schedulable on minHighestPriority node",
        [
            node("node1", ONE_POD),
            node("node2", ONE_POD),
            pod("p1", "node1", HIGH, labels={"violating": "no"}),
            pod("p2", "node1", LOW, labels={"violating": "yes"}),
            pod("p3", "node2", MID, labels={"violating": "yes"}),
            pdb("violating-pdb", {"violating": "yes"}, 0, minAvailable="100%"),
            pdb("non-violating-pdb", {"violating": "no"}, 2**31 - 1, minAvailable=0),
        ],
        pod("p", priority=VERY_HIGH),
        "node2",
        "preemption: found a potential placement for pod on node node2, preempting 1 victims",
    ),
    # Upstream's table injects Unschedulable statuses; here the real Filters decide, so a
    # higher-priority pod holds part of the CPU (a request above allocatable would be
    # UnschedulableAndUnresolvable, which preemption skips).
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        [
            node("node1", NODE_RES),
            node("node2", NODE_RES),
            pod("h1", "node1", VERY_HIGH, {"cpu": "100m"}),
            pod("p1", "node1", requests={"cpu": "100m"}),
            pod("h2", "node2", VERY_HIGH, {"cpu": "100m"}),
            pod("p2", "node2", requests={"cpu": "100m"}),
        ],
        pod("p", priority=HIGH, requests=MEDIUM_RES),
        None,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
        "resource",
        [
            node("node1", {**ONE_POD, "cpu": "1"}),
            node("node2", NODE_RES),
            node("node3", {**ONE_POD, "cpu": "1"}),
            pod("p1", "node1", HIGH),
            pod("h2", "node2", VERY_HIGH, {"cpu": "100m"}),
            pod("p2", "node2", requests={"cpu": "100m"}),
            pod("p3", "node3", HIGH),
        ],
        pod("p", priority=HIGH, requests={"cpu": "150m"}),
        None,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "2 No preemption victims found for incoming pod.",
    ),
    (
        "preemption should respect filteredNodesStatuses",
        [node("node1", ONE_POD, role="x"), pod("p1", "node1")],
        pod("p", priority=HIGH, nodeSelector={"role": "y"}),
        None,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
]


@pytest.mark.parametrize(
    ("cluster", "incoming", "nominated", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in POST_FILTER_CASES],
)
def test_post_filter(
    cluster: list[Obj], incoming: Obj, nominated: str | None, message: str
) -> None:
    e = run(cluster, incoming)
    assert e.preemption is not None
    assert e.preemption.nominated_node == nominated
    assert postfilter_message(e) == message


# -- TestPodEligibleToPreemptOthers ------------------------------------------------------------


def test_pod_with_preempt_never_policy_is_not_eligible() -> None:
    e = run(
        [node("node1", ONE_POD), pod("p1", "node1")],
        pod("p", priority=HIGH, preemptionPolicy="Never"),
    )
    assert postfilter_message(e) == "preemption: not eligible due to preemptionPolicy=Never."
    assert e.preemption is not None
    assert e.preemption.nominated_node is None


def _terminating(doc: Obj, preempted: bool) -> Obj:
    doc["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if preempted:
        doc["status"] = {
            "conditions": [
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
            ]
        }
    return doc


def test_preemption_victim_pod_terminating_on_the_nominated_node_blocks_preemption() -> None:
    incoming = pod("p", priority=HIGH)
    incoming["status"] = {"nominatedNodeName": "node1"}
    e = run([node("node1", ONE_POD), _terminating(pod("p1", "node1", LOW), True)], incoming)
    assert postfilter_message(e) == (
        "preemption: not eligible due to a terminating pod on the nominated node."
    )


def test_non_victim_pods_terminating_do_not_block_preemption() -> None:
    incoming = pod("p", priority=HIGH)
    incoming["status"] = {"nominatedNodeName": "node1"}
    e = run([node("node1", ONE_POD), _terminating(pod("p1", "node1", LOW), False)], incoming)
    assert e.preemption is not None
    assert e.preemption.nominated_node == "node1"


def test_pod_terminating_by_preemption_reads_the_first_disruption_target_condition() -> None:
    meta = ObjectMeta("p", "default", deletion_timestamp="2024-01-01T00:00:00Z")
    yes = PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")
    assert pod_terminating_by_preemption(Pod(meta, conditions=(yes,)))
    assert not pod_terminating_by_preemption(Pod(ObjectMeta("p"), conditions=(yes,)))
    other = PodCondition("DisruptionTarget", "True", "EvictionByEvictionAPI")
    assert not pod_terminating_by_preemption(Pod(meta, conditions=(other, yes)))


# -- FilterVictimsWithPDBViolation, pickOneNodeForPreemption, calculateNumCandidates -----------


def _p(name: str, priority: int = 0, start: str | None = None, **labels: str) -> Pod:
    return Pod(ObjectMeta(name, "default", labels=labels), priority=priority, start_time=start)


def test_pdb_budget_is_spent_in_victim_order_and_disrupted_pods_do_not_spend() -> None:
    budget = PodDisruptionBudget(
        ObjectMeta("b", "default"),
        LabelSelector({"app": "x"}),
        disruptions_allowed=1,
        disrupted_pods=frozenset({"c"}),
    )
    pods = [_p("a", app="x"), _p("c", app="x"), _p("d", app="x"), _p("e")]
    violating, others = filter_victims_with_pdb_violation(pods, [budget])
    assert [p.name for p, _ in violating] == ["d"]
    assert [p.name for p in others] == ["a", "c", "e"]


def test_a_pdb_with_an_empty_selector_matches_nothing() -> None:
    budget = PodDisruptionBudget(ObjectMeta("b", "default"), LabelSelector())
    violating, _ = filter_victims_with_pdb_violation([_p("a", app="x")], [budget])
    assert violating == []


def test_pick_one_node_criteria_in_order() -> None:
    def c(name: str, *victims: Pod, pdb: int = 0) -> Candidate:
        return Candidate(name, victims, pdb)

    # minimum PDB violations first
    assert pick_one_node_for_preemption([c("n1", _p("a", 1), pdb=1), c("n2", _p("b", 100))]) == (
        "n2",
    )
    # then the lowest highest priority
    assert pick_one_node_for_preemption([c("n1", _p("a", 100)), c("n2", _p("b", 50))]) == ("n2",)
    # then the smallest sum (negative priorities shifted, so fewer pods win)
    assert pick_one_node_for_preemption(
        [c("n1", _p("a", -5), _p("b", -5)), c("n2", _p("c", -5))]
    ) == ("n2",)
    # then the latest start of the highest-priority victims; no start time is "now"
    early, late = "2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z"
    assert pick_one_node_for_preemption(
        [c("n1", _p("a", 5, early)), c("n2", _p("b", 5, late))]
    ) == ("n2",)
    assert pick_one_node_for_preemption([c("n1", _p("a", 5, late)), c("n2", _p("b", 5))]) == ("n2",)
    # full tie: all of them, the first is the pick
    assert pick_one_node_for_preemption([c("n1", _p("a")), c("n2", _p("b"))]) == ("n1", "n2")


@pytest.mark.parametrize(
    ("nodes", "expected"), [(10, 10), (100, 100), (500, 100), (1000, 100), (5000, 500)]
)
def test_calculate_num_candidates(nodes: int, expected: int) -> None:
    assert calculate_num_candidates(DefaultPreemptionArgs(), nodes) == expected


# -- SelectVictimsOnNode through the cycle -----------------------------------------------------


def test_victims_are_reprieved_most_important_first_and_pdb_violating_ones_first() -> None:
    # node1 has room for the preemptor once 2 of the 3 low pods are gone; the PDB-covered pod
    # is tried first and reprieved, so the two others are the victims.
    cluster = [
        node("node1", {"cpu": "3", "pods": "10"}),
        pod("a", "node1", 1, {"cpu": "1"}, start="2024-01-01T00:00:00Z"),
        pod("b", "node1", 2, {"cpu": "1"}, start="2024-01-01T00:00:00Z"),
        pod("c", "node1", 1, {"cpu": "1"}, labels={"app": "x"}),
        pdb("b1", {"app": "x"}, 0),
    ]
    e = run(cluster, pod("p", priority=10, requests={"cpu": "2"}))
    assert e.preemption is not None
    assert e.preemption.victims == {"node1": ("default/b", "default/a")}


# -- against the oracle ------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[3]
ORACLE = Path(os.environ.get("TOPOSPREAD_ORACLE", REPO / "oracle" / "bin" / "oracle"))


def _spread(max_skew: int, key: str, app: str) -> Obj:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
    }


IN_ZONE_B = {"key": "zone", "operator": "In", "values": ["b"]}
TAINT = {"key": "k", "effect": "NoSchedule"}


def _oracle_cases() -> list[tuple[str, list[Obj], Obj]]:
    cases = [(name, cluster, incoming) for name, cluster, incoming, _, _ in POST_FILTER_CASES]
    zones = [node(f"n{i}", {"cpu": "2", "pods": "10"}, zone=z) for i, z in enumerate("aabb")]
    cases += [
        (
            "spread: removing a lower-priority matching pod lowers the skew",
            [
                *zones,
                pod("w1", "n0", 10, labels={"app": "web"}),
                pod("w2", "n1", 10, labels={"app": "web"}),
                pod("w3", "n2", 0, labels={"app": "web"}),
                pod("w4", "n2", 0, labels={"app": "web"}),
                pod("w5", "n3", 10, labels={"app": "web"}),
            ],
            pod(
                "p",
                priority=3,
                labels={"app": "web"},
                topologySpreadConstraints=[
                    {**_spread(1, "zone", "web"), "nodeAffinityPolicy": "Ignore"}
                ],
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [IN_ZONE_B]}]
                        }
                    }
                },
            ),
        ),
        (
            "spread and resources: the global minimum drops as victims leave",
            [
                *zones,
                pod("w1", "n0", 0, {"cpu": "1"}, {"app": "web"}, "2024-01-01T00:00:00Z"),
                pod("w2", "n1", 0, {"cpu": "1"}, {"app": "web"}, "2024-01-01T00:00:00Z"),
                pod("w3", "n1", 0, {"cpu": "1"}, {"app": "web"}, "2024-01-01T00:00:00Z"),
                pod("x1", "n2", 0, {"cpu": "1"}, {"app": "web"}, "2024-02-01T00:00:00Z"),
                pod("w4", "n3", 0, {"cpu": "1"}, {"app": "web"}, "2024-03-01T00:00:00Z"),
            ],
            pod(
                "p",
                priority=10,
                labels={"app": "web"},
                topologySpreadConstraints=[_spread(1, "kubernetes.io/hostname", "web")],
                requests={"cpu": "2"},
            ),
        ),
        (
            "resources: the node with the lowest-priority victims wins",
            [
                node("a", {"cpu": "2", "pods": "10"}),
                node("b", {"cpu": "2", "pods": "10"}),
                node("c", {"cpu": "2", "pods": "10"}),
                pod("a1", "a", 50, {"cpu": "1500m"}),
                pod("b1", "b", 20, {"cpu": "1"}),
                pod("b2", "b", 20, {"cpu": "1"}),
                pod("c1", "c", 1000, {"cpu": "2"}),
            ],
            pod("p", priority=100, requests={"cpu": "1500m"}),
        ),
        (
            "resources: PDBs decide between two nodes",
            [
                node("a", {"cpu": "2", "pods": "10"}),
                node("b", {"cpu": "2", "pods": "10"}),
                pod("a1", "a", 1, {"cpu": "2"}, labels={"app": "db"}),
                pod("b1", "b", 5, {"cpu": "2"}, labels={"app": "web"}),
                pdb("db", {"app": "db"}, 0),
                pdb("web", {"app": "web"}, 1),
            ],
            pod("p", priority=100, requests={"cpu": "1"}),
        ),
        (
            "resources: start times break the tie",
            [
                node("a", {"cpu": "1", "pods": "10"}),
                node("b", {"cpu": "1", "pods": "10"}),
                pod("a1", "a", 1, {"cpu": "1"}, start="2024-01-01T00:00:00Z"),
                pod("b1", "b", 1, {"cpu": "1"}, start="2024-03-01T00:00:00Z"),
            ],
            pod("p", priority=100, requests={"cpu": "1"}),
        ),
        (
            "resources: negative priorities, fewer victims",
            [
                node("a", {"cpu": "2", "pods": "10"}),
                node("b", {"cpu": "2", "pods": "10"}),
                pod("a1", "a", -10, {"cpu": "1"}),
                pod("a2", "a", -10, {"cpu": "1"}),
                pod("b1", "b", -10, {"cpu": "2"}),
            ],
            pod("p", priority=0, requests={"cpu": "2"}),
        ),
        (
            "anti-affinity: evicting the lower-priority pod the preemptor repels",
            [
                node("a", {"cpu": "4", "pods": "10"}, zone="z1"),
                node("b", {"cpu": "4", "pods": "10"}, zone="z2"),
                pod("db1", "a", 1, labels={"app": "db"}),
                pod("db2", "b", 2000, labels={"app": "db"}),
            ],
            pod(
                "p",
                priority=100,
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "topologyKey": "zone",
                                "labelSelector": {"matchLabels": {"app": "db"}},
                            }
                        ]
                    }
                },
            ),
        ),
        (
            "taints: unresolvable nodes are not preemption candidates",
            [
                {
                    **node("a", {"cpu": "1", "pods": "10"}),
                    "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
                },
                node("b", {"cpu": "1", "pods": "10"}),
                pod("a1", "a", 0, {"cpu": "1"}),
                pod("b1", "b", 0, {"cpu": "1"}),
            ],
            pod("p", priority=10, requests={"cpu": "1"}),
        ),
    ]
    return cases


ORACLE_CASES = _oracle_cases()


@pytest.fixture(scope="module")
def oracle_results() -> dict[str, Any]:
    if not ORACLE.exists():
        reason = f"no oracle at {ORACLE} (bash oracle/build.sh)"
        if os.environ.get("TOPOSPREAD_REQUIRE_ORACLE") == "1":
            pytest.fail(f"TOPOSPREAD_REQUIRE_ORACLE=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    # The same PriorityClasses for the priorities written by value as run() gives.
    lines = [
        json.dumps({"id": name, "cluster": named[0], "pod": named[1], "config": None})
        for name, cluster, incoming in ORACLE_CASES
        for named in [with_priority_classes(cluster, incoming)]
    ]
    done = subprocess.run(
        [str(ORACLE), "batch"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    results = {}
    for line in done.stdout.splitlines():
        answer = json.loads(line)
        assert "error" not in answer, answer
        results[answer["id"]] = answer["result"]
    return results


@pytest.mark.differential
@pytest.mark.parametrize(
    ("name", "cluster", "incoming"), [pytest.param(*c, id=c[0]) for c in ORACLE_CASES]
)
def test_preemption_agrees_with_the_oracle(
    name: str, cluster: list[Obj], incoming: Obj, oracle_results: dict[str, Any]
) -> None:
    upstream = oracle_results[name]
    ours = run(cluster, incoming).to_json()
    assert ours["message"] == upstream["message"]
    assert [n["filter"] for n in ours["nodes"]] == [n["filter"] for n in upstream["nodes"]]
    theirs = upstream["preemption"]
    mine = ours["preemption"]
    assert (mine is None) == (theirs is None)
    if mine is None:
        return
    assert mine["victims"] == theirs["victims"]
    if theirs["nominatedNode"] is None:
        assert mine["nominatedNode"] is None
    else:
        # upstream breaks full ties by Go map order: its pick must be one of ours
        assert theirs["nominatedNode"] in mine["tiedNodes"]
