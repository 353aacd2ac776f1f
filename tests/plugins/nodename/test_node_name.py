"""NodeName PreFilter and Filter (node_name_test.go, v1.37.1)."""

from __future__ import annotations

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, PreFilterResult
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import Node, ObjectMeta, Pod
from topospread.plugins.nodename import ERR_REASON, new

REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))


@pytest.mark.parametrize(
    ("node_name", "pre_result", "status"),
    [
        pytest.param("", None, None, id="a pod without nodeName fits any node"),
        pytest.param(
            "foo",
            PreFilterResult(frozenset({"foo"})),
            None,
            id="a pod naming this node fits and narrows PreFilter",
        ),
        pytest.param(
            "bar",
            PreFilterResult(frozenset({"bar"})),
            REJECT,
            id="a pod naming another node is unresolvable here",
        ),
    ],
)
def test_node_name(
    node_name: str, pre_result: PreFilterResult | None, status: Status | None
) -> None:
    plugin = new(None, Handle(Snapshot([])), Features())
    the_pod = Pod(ObjectMeta("p", "default"), node_name=node_name)
    info = NodeInfo(Node(ObjectMeta("foo")))
    state = CycleState()
    assert plugin.pre_filter(state, the_pod, [info]) == (pre_result, None)
    assert plugin.filter(state, the_pod, info) == status
