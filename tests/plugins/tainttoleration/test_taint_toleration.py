"""TaintToleration Filter.

Cases follow pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
(v1.37.1: TestTaintTolerationFilter and the comparison-operator gate table).
"""

from __future__ import annotations

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import Node, ObjectMeta, Pod, Taint, Toleration
from topospread.plugins.tainttoleration import ERR_REASON_UNTOLERATED, new

REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,))
SLA = "node.kubernetes.io/sla"


def pod(*tolerations: Toleration) -> Pod:
    return Pod(ObjectMeta("pod1", "default"), tolerations=tolerations)


def node(*taints: Taint) -> NodeInfo:
    return NodeInfo(Node(ObjectMeta("nodeA"), taints=taints))


DEDICATED_USER1 = Taint("dedicated", "NoSchedule", "user1")


@pytest.mark.parametrize(
    ("the_pod", "the_node", "gate", "status"),
    [
        pytest.param(
            pod(),
            node(DEDICATED_USER1),
            False,
            REJECT,
            id="a pod without tolerations cannot use a tainted node",
        ),
        pytest.param(
            pod(Toleration("dedicated", "", "user1", "NoSchedule")),
            node(DEDICATED_USER1),
            False,
            None,
            id="a matching toleration admits the dedicated node",
        ),
        pytest.param(
            pod(Toleration("dedicated", "Equal", "user2", "NoSchedule")),
            node(DEDICATED_USER1),
            False,
            REJECT,
            id="a toleration for another value is rejected",
        ),
        pytest.param(
            pod(Toleration("foo", "Exists", effect="NoSchedule")),
            node(Taint("foo", "NoSchedule", "bar")),
            False,
            None,
            id="Exists tolerates the taint whatever its value",
        ),
        pytest.param(
            pod(
                Toleration("dedicated", "Equal", "user2", "NoSchedule"),
                Toleration("foo", "Exists", effect="NoSchedule"),
            ),
            node(Taint("dedicated", "NoSchedule", "user2"), Taint("foo", "NoSchedule", "bar")),
            False,
            None,
            id="several taints all tolerated",
        ),
        pytest.param(
            pod(Toleration("foo", "Equal", "bar", "PreferNoSchedule")),
            node(Taint("foo", "NoSchedule", "bar")),
            False,
            REJECT,
            id="a toleration with another non-empty effect is rejected",
        ),
        pytest.param(
            pod(Toleration("foo", "Equal", "bar")),
            node(Taint("foo", "NoSchedule", "bar")),
            False,
            None,
            id="a toleration with an empty effect tolerates NoSchedule",
        ),
        pytest.param(
            pod(Toleration("dedicated", "Equal", "user2", "NoSchedule")),
            node(Taint("dedicated", "PreferNoSchedule", "user1")),
            False,
            None,
            id="PreferNoSchedule taints never block",
        ),
        pytest.param(
            pod(),
            node(Taint("dedicated", "PreferNoSchedule", "user1")),
            False,
            None,
            id="no toleration is needed for PreferNoSchedule",
        ),
        pytest.param(
            pod(),
            node(Taint("evict", "NoExecute")),
            False,
            REJECT,
            id="NoExecute taints block scheduling",
        ),
        pytest.param(
            pod(Toleration("node.example.com/priority-level", "Gt", "950", "NoSchedule")),
            node(Taint("node.example.com/priority-level", "NoSchedule", "800")),
            True,
            REJECT,
            id="Gt rejects a taint value below the threshold",
        ),
        pytest.param(
            pod(Toleration(SLA, "Gt", "750", "NoSchedule")),
            node(Taint(SLA, "NoSchedule", "950")),
            True,
            None,
            id="Gt admits a taint value above the threshold",
        ),
        pytest.param(
            pod(Toleration("node.example.com/priority-level", "Lt", "800", "NoSchedule")),
            node(Taint("node.example.com/priority-level", "NoSchedule", "950")),
            True,
            REJECT,
            id="Lt rejects a taint value above the threshold",
        ),
        pytest.param(
            pod(Toleration(SLA, "Lt", "950", "NoSchedule")),
            node(Taint(SLA, "NoSchedule", "800")),
            True,
            None,
            id="Lt admits a taint value below the threshold",
        ),
        pytest.param(
            pod(Toleration(SLA, "Gt", "950", "NoSchedule")),
            node(Taint(SLA, "NoSchedule", "high")),
            True,
            REJECT,
            id="Gt rejects a non-numeric taint value",
        ),
        pytest.param(
            pod(Toleration(SLA, "Gt", "750", "NoSchedule")),
            node(Taint(SLA, "NoSchedule", "950")),
            False,
            REJECT,
            id="Gt tolerates nothing with the gate at its default",
        ),
        pytest.param(
            pod(
                Toleration("dedicated", "Equal", "user1", "NoSchedule"),
                Toleration(SLA, "Gt", "750", "NoSchedule"),
            ),
            node(DEDICATED_USER1),
            False,
            None,
            id="with the gate off an Equal toleration beside a Gt one still works",
        ),
        pytest.param(
            pod(
                Toleration("dedicated", "Equal", "user1", "NoSchedule"),
                Toleration(SLA, "Gt", "750", "NoSchedule"),
            ),
            node(DEDICATED_USER1, Taint(SLA, "NoSchedule", "950")),
            False,
            REJECT,
            id="with the gate off a taint needing the Gt toleration is untolerated",
        ),
    ],
)
def test_taint_toleration_filter(
    the_pod: Pod, the_node: NodeInfo, gate: bool, status: Status | None
) -> None:
    features = Features(enable_taint_toleration_comparison_operators=gate)
    plugin = new(None, Handle(Snapshot([])), features)
    state = CycleState()
    assert plugin.pre_filter(state, the_pod, [the_node]) == (None, None)
    assert plugin.filter(state, the_pod, the_node) == status


def test_untolerated_taint_names_the_first_one() -> None:
    plugin = new(None, Handle(Snapshot([])), Features())
    info = node(Taint("soft", "PreferNoSchedule"), DEDICATED_USER1, Taint("b", "NoExecute"))
    assert plugin.untolerated_taint(pod(), info) == DEDICATED_USER1
