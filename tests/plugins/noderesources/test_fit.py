"""NodeResourcesFit PreFilter and Filter.

Cases follow pkg/scheduler/framework/plugins/noderesources/fit_test.go (v1.37.1:
TestEnoughRequests, TestPredicateWithPods/TestNotEnoughRequests); the node there has
allocatable cpu 10m, memory 20, pods 32, example.com/aaa 5, ephemeral-storage 20 and
hugepages-2Mi 5.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from topospread.errors import ConfigError
from topospread.framework.config.types import NodeResourcesFitArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import Quantity, parse_quantity
from topospread.plugins.noderesources import (
    Fit,
    InsufficientResource,
    new_fit,
)

A = "example.com/aaa"
B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
HUGE = "hugepages-2Mi"

ALLOCATABLE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    A: "5",
    "ephemeral-storage": "20",
    HUGE: "5",
}


def rl(values: Mapping[str, str]) -> dict[str, Quantity]:
    return {name: parse_quantity(v) for name, v in values.items()}


def cpu_mem(cpu: int = 0, mem: int = 0, **extra: str) -> dict[str, str]:
    values = {"cpu": f"{cpu}m", "memory": str(mem)}
    values.update({k.replace("__", "/").replace("_", "-"): v for k, v in extra.items()})
    return values


def pod(
    *containers: Mapping[str, str],
    init: tuple[Mapping[str, str], ...] = (),
    overhead: Mapping[str, str] | None = None,
    pod_level: Mapping[str, str] | None = None,
    name: str = "p",
) -> Pod:
    return Pod(
        ObjectMeta(name, "default"),
        containers=tuple(Container(requests=rl(c)) for c in containers),
        init_containers=tuple(Container(requests=rl(c)) for c in init),
        overhead=rl(overhead or {}),
        pod_resources_requests=rl(pod_level) if pod_level is not None else None,
    )


def node_info(*existing: Pod, allocatable: Mapping[str, str] = ALLOCATABLE) -> NodeInfo:
    return NodeInfo(Node(ObjectMeta("node"), allocatable=rl(allocatable)), existing)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def ins(name: str) -> str:
    return f"Insufficient {name}"


IGNORE_B = NodeResourcesFitArgs(ignored_resources=(B,))
IGNORE_GROUP = NodeResourcesFitArgs(ignored_resource_groups=("example.com",))
NO_ARGS = NodeResourcesFitArgs()


@pytest.mark.parametrize(
    ("the_pod", "the_node", "args", "status"),
    [
        pytest.param(
            pod(),
            node_info(pod(cpu_mem(10, 20))),
            NO_ARGS,
            None,
            id="no resources requested always fits",
        ),
        pytest.param(
            pod(cpu_mem(1, 1)),
            node_info(pod(cpu_mem(10, 20))),
            NO_ARGS,
            unschedulable(ins("cpu"), ins("memory")),
            id="too many resources fails with one reason per resource",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), init=(cpu_mem(3, 1),)),
            node_info(pod(cpu_mem(8, 19))),
            NO_ARGS,
            unschedulable(ins("cpu")),
            id="too many resources fails due to init container cpu",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), init=(cpu_mem(3, 1), cpu_mem(2, 1))),
            node_info(pod(cpu_mem(8, 19))),
            NO_ARGS,
            unschedulable(ins("cpu")),
            id="too many resources fails due to highest init container cpu",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), init=(cpu_mem(1, 3),)),
            node_info(pod(cpu_mem(9, 19))),
            NO_ARGS,
            unschedulable(ins("memory")),
            id="too many resources fails due to init container memory",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), init=(cpu_mem(1, 1), cpu_mem(1, 1))),
            node_info(pod(cpu_mem(9, 19))),
            NO_ARGS,
            None,
            id="init containers fit because it is the max not the sum of containers",
        ),
        pytest.param(
            pod(cpu_mem(1, 1)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            None,
            id="both resources fit",
        ),
        pytest.param(
            pod(cpu_mem(2, 1)),
            node_info(pod(cpu_mem(9, 5))),
            NO_ARGS,
            unschedulable(ins("cpu")),
            id="only memory fits",
        ),
        pytest.param(
            pod(cpu_mem(1, 2)),
            node_info(pod(cpu_mem(5, 19))),
            NO_ARGS,
            unschedulable(ins("memory")),
            id="only cpu fits",
        ),
        pytest.param(
            pod(cpu_mem(5, 1)),
            node_info(pod(cpu_mem(5, 19))),
            NO_ARGS,
            None,
            id="a request equal to the free amount fits",
        ),
        pytest.param(
            pod(cpu_mem(4, 1), init=(cpu_mem(5, 1),)),
            node_info(pod(cpu_mem(5, 19))),
            NO_ARGS,
            None,
            id="an init container equal to the free amount fits",
        ),
        pytest.param(
            pod({A: "1"}),
            node_info(pod()),
            NO_ARGS,
            None,
            id="an extended resource fits",
        ),
        pytest.param(
            pod({A: "10"}),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(A)),
            id="an extended request above capacity is unresolvable",
        ),
        pytest.param(
            pod({}, init=({A: "10"},)),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(A)),
            id="an init container extended request above capacity is unresolvable",
        ),
        pytest.param(
            pod({A: "1"}),
            node_info(pod({A: "5"})),
            NO_ARGS,
            unschedulable(ins(A)),
            id="extended resource allocatable is enforced",
        ),
        pytest.param(
            pod({A: "3"}, {A: "3"}),
            node_info(pod({A: "2"})),
            NO_ARGS,
            unresolvable(ins(A)),
            id="extended requests of several containers add up",
        ),
        pytest.param(
            pod({}, init=({A: "3"}, {A: "2"})),
            node_info(pod({A: "2"})),
            NO_ARGS,
            None,
            id="extended resource allocatable admits several init containers",
        ),
        pytest.param(
            pod({B: "1"}),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(B)),
            id="an unknown extended resource is unresolvable",
        ),
        pytest.param(
            pod({K8S_A: "10"}),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(K8S_A)),
            id="a kubernetes.io resource is enforced",
        ),
        pytest.param(
            pod({HUGE: "10"}),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(HUGE)),
            id="hugepages capacity is enforced",
        ),
        pytest.param(
            pod({HUGE: "3"}, {HUGE: "3"}),
            node_info(pod({HUGE: "2"})),
            NO_ARGS,
            unresolvable(ins(HUGE)),
            id="hugepages of several containers add up",
        ),
        pytest.param(
            pod({B: "1"}),
            node_info(pod()),
            IGNORE_B,
            None,
            id="an ignored extended resource is not checked",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), overhead=cpu_mem(3, 13)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            None,
            id="requests plus overhead fit",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), overhead=cpu_mem(1, 15)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            unschedulable(ins("memory")),
            id="requests plus overhead do not fit in memory",
        ),
        pytest.param(
            pod({B: "1", K8S_A: "1"}),
            node_info(pod()),
            IGNORE_GROUP,
            unresolvable(ins(K8S_A)),
            id="an ignored resource group skips only extended resources",
        ),
        pytest.param(
            pod({B: "0"}),
            node_info(pod()),
            IGNORE_GROUP,
            None,
            id="a zero extended request is not checked",
        ),
        pytest.param(
            pod({"cpu": "0", "memory": "0"}),
            node_info(pod(cpu_mem(10, 20))),
            NO_ARGS,
            None,
            id="zero requests are not checked",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), pod_level=cpu_mem(2, 2)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            None,
            id="pod-level and container-level requests both fit",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), pod_level=cpu_mem(6, 2)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            unschedulable(ins("cpu")),
            id="a pod-level cpu request that does not fit",
        ),
        pytest.param(
            pod(cpu_mem(1, 1), pod_level=cpu_mem(2, 16)),
            node_info(pod(cpu_mem(5, 5))),
            NO_ARGS,
            unschedulable(ins("memory")),
            id="a pod-level memory request that does not fit",
        ),
        pytest.param(
            pod({}, pod_level={HUGE: "10"}),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins(HUGE)),
            id="a pod-level hugepages request that does not fit",
        ),
        pytest.param(
            pod(cpu_mem(1, 1, ephemeral_storage="25")),
            node_info(pod()),
            NO_ARGS,
            unresolvable(ins("ephemeral-storage")),
            id="ephemeral storage is enforced",
        ),
        pytest.param(
            pod(cpu_mem(20, 2)),
            node_info(pod(cpu_mem(0, 19))),
            NO_ARGS,
            unresolvable(ins("cpu"), ins("memory")),
            id="one request above allocatable makes the whole status unresolvable",
        ),
    ],
)
def test_enough_requests(
    the_pod: Pod, the_node: NodeInfo, args: NodeResourcesFitArgs, status: Status | None
) -> None:
    plugin = Fit(args, Features())
    state = CycleState()
    assert plugin.pre_filter(state, the_pod, [the_node]) == (None, None)
    assert plugin.filter(state, the_pod, the_node) == status


def test_pod_level_resources_gate_off_uses_containers() -> None:
    plugin = Fit(NO_ARGS, Features(enable_pod_level_resources=False))
    the_pod = pod(cpu_mem(1, 1), pod_level=cpu_mem(6, 2))
    state = CycleState()
    plugin.pre_filter(state, the_pod, [])
    assert plugin.filter(state, the_pod, node_info(pod(cpu_mem(5, 5)))) is None


@pytest.mark.parametrize(
    ("the_pod", "existing", "allocatable", "status"),
    [
        pytest.param(
            pod(),
            (pod(name="a"),),
            {"pods": "1"},
            unschedulable("Too many pods"),
            id="a pod without requests fails when no pod slot is left",
        ),
        pytest.param(
            pod(cpu_mem(1, 1)),
            (pod(cpu_mem(10, 20), name="a"),),
            {"cpu": "10m", "memory": "20", "pods": "1"},
            unschedulable("Too many pods", ins("cpu"), ins("memory")),
            id="a full pod count comes first among several reasons",
        ),
        pytest.param(
            pod(cpu_mem(1, 1)),
            (),
            {"cpu": "10m", "memory": "20"},
            unschedulable("Too many pods"),
            id="a node without allocatable pods admits none",
        ),
        pytest.param(
            pod(cpu_mem(1, 1)),
            (pod(name="a"),),
            {"cpu": "10m", "memory": "20", "pods": "2"},
            None,
            id="a free pod slot fits",
        ),
    ],
)
def test_pod_count(
    the_pod: Pod, existing: tuple[Pod, ...], allocatable: dict[str, str], status: Status | None
) -> None:
    plugin = Fit(NO_ARGS, Features())
    state = CycleState()
    plugin.pre_filter(state, the_pod, [])
    assert plugin.filter(state, the_pod, node_info(*existing, allocatable=allocatable)) == status


def test_insufficient_resources_carry_amounts() -> None:
    plugin = Fit(NO_ARGS, Features())
    got = plugin.insufficient_resources(
        plugin.pod_requests(pod({A: "10"})), node_info(pod({A: "1"}))
    )
    assert got == [InsufficientResource(A, ins(A), 10, 1, 5, unresolvable=True)]


def test_node_totals_follow_pod_changes() -> None:
    plugin = Fit(NO_ARGS, Features())
    info = node_info(pod(cpu_mem(10, 0), name="a"))
    the_pod = pod(cpu_mem(1, 0))
    state = CycleState()
    plugin.pre_filter(state, the_pod, [info])
    assert plugin.filter(state, the_pod, info) == unschedulable(ins("cpu"))
    info.remove_pod(pod(name="a"))
    assert plugin.filter(state, the_pod, info) is None


def test_filter_without_pre_filter_is_an_error() -> None:
    status = Fit(NO_ARGS, Features()).filter(CycleState(), pod(), node_info())
    assert status == Status(
        Code.ERROR, ('error reading "PreFilterNodeResourcesFit" from cycleState: not found',)
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            NodeResourcesFitArgs(ignored_resources=("a/b/c",)),
            r"ignoredResources\[0\]",
            id="an invalid ignored resource name is rejected",
        ),
        pytest.param(
            NodeResourcesFitArgs(ignored_resource_groups=("example.com/aaa",)),
            "resource group name can't contain '/'",
            id="a resource group with a slash is rejected",
        ),
    ],
)
def test_args_validation(args: NodeResourcesFitArgs, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        new_fit(args, Handle(Snapshot([])), Features())


def test_factory_defaults() -> None:
    assert new_fit(None, Handle(Snapshot([])), Features()).name == "NodeResourcesFit"
