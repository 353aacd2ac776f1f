"""NodePorts PreFilter and Filter.

Cases follow node_ports_test.go (v1.37.1, TestNodePorts); ports are written as
upstream's ``newPod`` helper takes them: ``PROTOCOL/hostIP/hostPort``.
"""

from __future__ import annotations

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status
from topospread.model.objects import Container, ContainerPort, Node, ObjectMeta, Pod
from topospread.plugins.nodeports import ERR_REASON, NodePorts, host_ports


def port(spec: str) -> ContainerPort:
    protocol, ip, number = spec.split("/")
    return ContainerPort(
        container_port=int(number), host_port=int(number), protocol=protocol, host_ip=ip
    )


def new_pod(*specs: str, name: str = "m1") -> Pod:
    return Pod(
        ObjectMeta(name, "default"), containers=(Container(ports=tuple(port(s) for s in specs)),)
    )


def init_pod(sidecar: bool) -> Pod:
    init = Container(
        ports=(ContainerPort(container_port=8001, host_port=8001, protocol="TCP"),),
        restart_policy="Always" if sidecar else None,
    )
    return Pod(ObjectMeta("p", "default"), containers=(Container(),), init_containers=(init,))


def node_with(*pods: Pod) -> NodeInfo:
    return NodeInfo(Node(ObjectMeta("node")), pods)


CONFLICT = Status(Code.UNSCHEDULABLE, (ERR_REASON,))

CASES = [
    pytest.param(
        new_pod("UDP/127.0.0.1/8080"),
        node_with(new_pod("UDP/127.0.0.1/9090")),
        None,
        id="another port fits",
    ),
    pytest.param(
        new_pod("UDP/127.0.0.1/8080"),
        node_with(new_pod("UDP/127.0.0.1/8080")),
        CONFLICT,
        id="the same udp port conflicts",
    ),
    pytest.param(
        new_pod("TCP/127.0.0.1/8080"),
        node_with(new_pod("TCP/127.0.0.1/8080")),
        CONFLICT,
        id="the same tcp port conflicts",
    ),
    pytest.param(
        new_pod("TCP/127.0.0.1/8080"),
        node_with(new_pod("TCP/127.0.0.2/8080")),
        None,
        id="the same port on another host ip fits",
    ),
    pytest.param(
        new_pod("UDP/127.0.0.1/8080"),
        node_with(new_pod("TCP/127.0.0.1/8080")),
        None,
        id="the same port with another protocol fits",
    ),
    pytest.param(
        new_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        node_with(new_pod("UDP/127.0.0.1/8080")),
        CONFLICT,
        id="a conflict on the second port rejects the node",
    ),
    pytest.param(
        new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        node_with(new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
        CONFLICT,
        id="a conflict on the first port rejects the node",
    ),
    pytest.param(
        new_pod("TCP/0.0.0.0/8001"),
        node_with(new_pod("TCP/127.0.0.1/8001")),
        CONFLICT,
        id="a wanted 0.0.0.0 port conflicts with that port on any ip",
    ),
    pytest.param(
        new_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        node_with(new_pod("TCP/127.0.0.1/8001")),
        CONFLICT,
        id="a second wanted port on 0.0.0.0 conflicts with a specific ip in use",
    ),
    pytest.param(
        new_pod("TCP/127.0.0.1/8001"),
        node_with(new_pod("TCP/0.0.0.0/8001")),
        CONFLICT,
        id="a port in use on 0.0.0.0 conflicts with every ip",
    ),
    pytest.param(
        new_pod("UDP/127.0.0.1/8001"),
        node_with(new_pod("TCP/0.0.0.0/8001")),
        None,
        id="0.0.0.0 in use with another protocol fits",
    ),
    pytest.param(
        new_pod("UDP/127.0.0.1/8001"),
        node_with(new_pod("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
        CONFLICT,
        id="0.0.0.0 in use with the same protocol conflicts",
    ),
    pytest.param(
        new_pod("TCP//8001"),
        node_with(new_pod("TCP/127.0.0.1/8001")),
        CONFLICT,
        id="an empty host ip means 0.0.0.0",
    ),
    pytest.param(
        new_pod("/127.0.0.1/8001"),
        node_with(new_pod("TCP/127.0.0.1/8001")),
        CONFLICT,
        id="an empty protocol means TCP",
    ),
    pytest.param(
        init_pod(sidecar=True),
        node_with(new_pod("TCP/0.0.0.0/8001")),
        CONFLICT,
        id="a sidecar init container's host port conflicts",
    ),
    pytest.param(
        new_pod("TCP/0.0.0.0/8001"),
        node_with(init_pod(sidecar=False)),
        None,
        id="an ordinary init container on the node holds no port",
    ),
]


@pytest.mark.parametrize(("pod", "node_info", "want"), CASES)
def test_node_ports_filter(pod, node_info, want):
    plugin = NodePorts()
    state = CycleState()
    assert plugin.pre_filter(state, pod, [node_info]) == (None, None)
    assert plugin.filter(state, pod, node_info) == want


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(Pod(ObjectMeta("p", "default")), id="a pod without ports"),
        pytest.param(
            init_pod(sidecar=False),
            id="a pod whose only host port is on an ordinary init container",
        ),
        pytest.param(
            Pod(ObjectMeta("p", "default"), containers=(Container(ports=(ContainerPort(80),)),)),
            id="a pod with container ports but no host port",
        ),
    ],
)
def test_pre_filter_skips(pod):
    _, status = NodePorts().pre_filter(CycleState(), pod, [])
    assert status is not None
    assert status.code is Code.SKIP
    assert host_ports(pod) == ()


def test_filter_without_pre_filter_is_an_error():
    status = NodePorts().filter(CycleState(), new_pod("TCP/0.0.0.0/80"), node_with())
    assert status is not None
    assert status.code is Code.ERROR
