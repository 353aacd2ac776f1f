"""NodeUnschedulable Filter (node_unschedulable_test.go, v1.37.1)."""

from __future__ import annotations

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import Node, ObjectMeta, Pod, Toleration
from topospread.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, new

REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))
KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "gate", "status"),
    [
        pytest.param(True, (), False, REJECT, id="a cordoned node rejects the pod"),
        pytest.param(False, (), False, None, id="a normal node admits the pod"),
        pytest.param(
            True,
            (Toleration(KEY, "Exists", effect="NoSchedule"),),
            False,
            None,
            id="tolerating the unschedulable taint admits a cordoned node",
        ),
        pytest.param(
            True,
            (Toleration(operator="Exists"),),
            False,
            None,
            id="a wildcard toleration admits a cordoned node",
        ),
        pytest.param(
            True,
            (Toleration(KEY, "Exists", effect="NoExecute"),),
            False,
            REJECT,
            id="tolerating another effect does not help",
        ),
        pytest.param(
            True,
            (Toleration(KEY, "Equal", "x"),),
            False,
            REJECT,
            id="Equal with a value does not match the valueless taint",
        ),
        pytest.param(
            True,
            (Toleration(KEY, "Lt", "1"),),
            True,
            REJECT,
            id="Lt cannot match the valueless taint even with the gate on",
        ),
    ],
)
def test_node_unschedulable(
    unschedulable: bool, tolerations: tuple[Toleration, ...], gate: bool, status: Status | None
) -> None:
    plugin = new(
        None, Handle(Snapshot([])), Features(enable_taint_toleration_comparison_operators=gate)
    )
    the_pod = Pod(ObjectMeta("p", "default"), tolerations=tolerations)
    info = NodeInfo(Node(ObjectMeta("n"), unschedulable=unschedulable))
    state = CycleState()
    assert plugin.pre_filter(state, the_pod, [info]) == (None, None)
    assert plugin.filter(state, the_pod, info) == status
