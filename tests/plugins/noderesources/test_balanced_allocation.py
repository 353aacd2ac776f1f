"""NodeResourcesBalancedAllocation PreScore and Score.

Cases follow balanced_allocation_test.go (v1.37.1, TestNodeResourcesBalancedAllocation;
the DRA-backed cases are not modelled). ``makeNode(name, milliCPU, memory, extended)``
nodes; pods get one container per request map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from topospread.errors import ConfigError
from topospread.framework.config.types import ResourceSpec
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Code
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.plugins.noderesources import new_balanced_allocation
from topospread.plugins.noderesources.balanced_allocation import (
    DEFAULT_RESOURCES,
    BalancedAllocation,
    balanced_resource_scorer,
)

GPU = "nvidia.com/gpu"
WITH_GPU = (*DEFAULT_RESOURCES, ResourceSpec(GPU, 1))


def make_pod(*reqs: Mapping[str, str], node: str = "", name: str = "p") -> Pod:
    containers = tuple(
        Container(requests={k: parse_quantity(v) for k, v in r.items()}) for r in reqs
    )
    return Pod(ObjectMeta(name, "default"), node_name=node, containers=containers)


def make_node(name: str, milli_cpu: int, memory: int, gpus: int | None = None) -> Node:
    allocatable = {"cpu": parse_quantity(f"{milli_cpu}m"), "memory": parse_quantity(str(memory))}
    if gpus is not None:
        allocatable[GPU] = parse_quantity(str(gpus))
    return Node(ObjectMeta(name), allocatable=allocatable)


def cpu(c: str) -> dict[str, str]:
    return {"cpu": c}


def cpu_mem(c: str, m: str) -> dict[str, str]:
    return {"cpu": c, "memory": m}


REQUESTING = make_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"))
CPU_ONLY_ON_1 = make_pod(cpu("1000m"), cpu("2000m"), node="node1", name="e1")
BOTH_ON_2 = make_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2", name="e2")

CASES = [
    pytest.param(
        REQUESTING,
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        [],
        DEFAULT_RESOURCES,
        [68, 75],
        id="on empty nodes the node whose fractions stay closer scores higher",
    ),
    pytest.param(
        REQUESTING,
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [CPU_ONLY_ON_1, BOTH_ON_2],
        DEFAULT_RESOURCES,
        [73, 74],
        id="the score compares the balance with and without the pod",
    ),
    pytest.param(
        REQUESTING,
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        [CPU_ONLY_ON_1, BOTH_ON_2],
        DEFAULT_RESOURCES,
        [73, 70],
        id="differently sized nodes change the fractions",
    ),
    pytest.param(
        make_pod({"memory": "2000"}, {"memory": "3000"}),
        [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
        [CPU_ONLY_ON_1],
        DEFAULT_RESOURCES,
        [100, 50],
        id="a pod that evens out a lopsided node reaches 100 and one that unbalances 50",
    ),
    pytest.param(
        make_pod(cpu("1000m"), cpu("2000m")),
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        [CPU_ONLY_ON_1, BOTH_ON_2],
        DEFAULT_RESOURCES,
        [62, 62],
        id="a fraction is capped at 1 when requests reach capacity",
    ),
    pytest.param(
        make_pod({"cpu": "0", "memory": "0", GPU: "1"}),
        [make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000, 8)],
        [
            make_pod(
                cpu_mem("1000m", "2000"),
                {"cpu": "2000m", "memory": "3000", GPU: "3"},
                node="node1",
                name="e1",
            ),
            make_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2", name="e2"),
        ],
        WITH_GPU,
        [75, 76],
        id="a scalar resource the pod requests joins the standard deviation",
    ),
    pytest.param(
        REQUESTING,
        [make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000)],
        [],
        WITH_GPU,
        [56, 56],
        id="a scalar resource the pod does not request is left out",
    ),
]


def run(
    plugin: BalancedAllocation,
    pod: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod],
    *,
    pre_score: bool = True,
) -> list[int]:
    snapshot = Snapshot(nodes, existing)
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, pod, snapshot.node_infos) is None
    out = []
    for info in snapshot.node_infos:
        value, status = plugin.score(state, pod, info)
        assert status is None
        out.append(value)
    return out


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "expected"), CASES)
def test_balanced_allocation_scores(pod, nodes, existing, resources, expected):
    plugin = BalancedAllocation(resources, Features())
    assert run(plugin, pod, nodes, existing) == expected


def test_pre_score_skips_a_pod_that_requests_none_of_the_resources():
    plugin = BalancedAllocation(DEFAULT_RESOURCES, Features())
    snapshot = Snapshot([make_node("node1", 4000, 10000)])
    status = plugin.pre_score(CycleState(), make_pod({}), snapshot.node_infos)
    assert status is not None
    assert status.code is Code.SKIP


def test_score_without_pre_score_computes_the_requests_itself():
    plugin = BalancedAllocation(DEFAULT_RESOURCES, Features())
    nodes = [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)]
    got = run(plugin, REQUESTING, nodes, [CPU_ONLY_ON_1, BOTH_ON_2], pre_score=False)
    assert got == [73, 74]


def test_an_unchanged_balance_scores_75_and_a_worse_one_less():
    # Both vectors equally balanced: 50 + (50 + 0) / 2 = 75. From perfectly balanced
    # (100) to fully lopsided (50 with two resources): 50 + (50 - 50) / 2 = 50.
    assert balanced_resource_scorer([10, 10], [10, 10], [100, 100]) == 75
    assert balanced_resource_scorer([100, 0], [0, 0], [100, 100]) == 50
    # Three resources, std sqrt(2/9) = 0.471: 52 with the pod, 100 without:
    # 50 + (50 + 52 - 100) / 2 = 51.
    assert balanced_resource_scorer([100, 0, 0], [0, 0, 0], [100, 100, 100]) == 51


def test_the_factory_reads_the_v1_args_and_checks_weights():
    plugin = new_balanced_allocation(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 1}]},
        Handle(Snapshot([])),
        Features(),
    )
    assert plugin.resources == (ResourceSpec("cpu", 1), ResourceSpec(GPU, 1))
    assert (
        new_balanced_allocation(None, Handle(Snapshot([])), Features()).resources
        == DEFAULT_RESOURCES
    )
    with pytest.raises(ConfigError, match="must be 1"):
        new_balanced_allocation(
            {"resources": [{"name": "cpu", "weight": 2}]}, Handle(Snapshot([])), Features()
        )
