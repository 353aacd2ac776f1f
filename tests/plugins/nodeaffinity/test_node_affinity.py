"""The NodeAffinity plugin's PreFilter and Filter.

Cases follow pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
(v1.37.1, TestNodeAffinity and TestNodeAffinityArgs parsing).
"""

from __future__ import annotations

import pytest

from topospread.errors import ConfigError
from topospread.framework.config.types import NodeAffinityArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, PreFilterResult
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model import objects
from topospread.model.objects import (
    Affinity,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PreferredSchedulingTerm,
)
from topospread.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    new,
)

NAME = "metadata.name"
SKIP = Status(Code.SKIP)
REJECT_POD = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,))
REJECT_ENFORCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,))
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))


def expr(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, tuple(values))


def names(*values: str) -> NodeSelectorRequirement:
    return expr(NAME, "In", *values)


def term(*exprs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()):
    return NodeSelectorTerm(tuple(exprs), fields)


def required(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(tuple(terms))


def pod(node_selector: dict[str, str] | None = None, req: NodeSelector | None = None) -> Pod:
    affinity = Affinity(node_affinity=objects.NodeAffinity(required=req)) if req else None
    return Pod(ObjectMeta("p", "default"), node_selector=node_selector or {}, affinity=affinity)


def node(name: str = "node1", **labels: str) -> NodeInfo:
    return NodeInfo(Node(ObjectMeta(name, labels=dict(labels))))


def added(sel: NodeSelector) -> NodeAffinityArgs:
    return NodeAffinityArgs(objects.NodeAffinity(required=sel))


ZONE_FOO = required(term(expr("zone", "In", "foo")))


@pytest.mark.parametrize(
    ("the_pod", "the_node", "args", "pre_result", "pre_status", "status"),
    [
        pytest.param(
            pod({"foo": "bar"}),
            node(),
            NodeAffinityArgs(),
            None,
            None,
            REJECT_POD,
            id="a nodeSelector label the node lacks rejects it",
        ),
        pytest.param(
            pod({"foo": "bar"}),
            node(foo="bar"),
            NodeAffinityArgs(),
            None,
            None,
            None,
            id="a nodeSelector with the same labels fits",
        ),
        pytest.param(
            pod(),
            node(foo="bar"),
            NodeAffinityArgs(),
            None,
            SKIP,
            None,
            id="a pod without affinity or selector skips the plugin",
        ),
        pytest.param(
            Pod(ObjectMeta("p", "default"), affinity=Affinity(objects.NodeAffinity())),
            node(foo="bar"),
            NodeAffinityArgs(),
            None,
            SKIP,
            None,
            id="affinity without a required selector skips the plugin",
        ),
        pytest.param(
            pod(req=required(term())),
            node(foo="bar"),
            NodeAffinityArgs(),
            None,
            None,
            REJECT_POD,
            id="an empty term matches no node",
        ),
        pytest.param(
            pod(req=required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
            node(GPU="NVIDIA-GRID-K1"),
            NodeAffinityArgs(),
            None,
            None,
            REJECT_POD,
            id="ANDed expressions that do not all match reject the node",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1"),)))),
            node("node1"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node1"})),
            None,
            None,
            id="a name field pins PreFilter to that node",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1"),)))),
            node("node2"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node1"})),
            None,
            REJECT_POD,
            id="another node is rejected by Filter",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1"),)), term(expr("foo", "In", "bar")))),
            node("node2", foo="bar"),
            NodeAffinityArgs(),
            None,
            None,
            None,
            id="a second term without a name pin keeps all nodes",
        ),
        pytest.param(
            pod(req=required(term(expr("foo", "In", "bar"), fields=(names("node1"),)))),
            node("node2", foo="bar"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node1"})),
            None,
            REJECT_POD,
            id="a term pinning a name and labels narrows and rejects another node",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1"),)), term(fields=(names("node2"),)))),
            node("node2"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node1", "node2"})),
            None,
            None,
            id="name pins of two terms are unioned",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1"), names("node2"))))),
            node("node2", foo="bar"),
            NodeAffinityArgs(),
            None,
            CONFLICT,
            REJECT_POD,
            id="conflicting name pins in one term are unresolvable",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node2"), names("node2"))))),
            node("node2"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node2"})),
            None,
            None,
            id="name pins within a term are intersected",
        ),
        pytest.param(
            pod(req=required(term(fields=(names("node1", "node2"), names("node2", "node3"))))),
            node("node2"),
            NodeAffinityArgs(),
            PreFilterResult(frozenset({"node2"})),
            None,
            REJECT_POD,
            id="multi-valued name pins narrow PreFilter but never parse for Filter",
        ),
        pytest.param(
            pod(req=required(term(fields=(expr(NAME, "NotIn", "node1"),)))),
            node("node2"),
            NodeAffinityArgs(),
            None,
            None,
            None,
            id="a NotIn name field does not narrow",
        ),
        pytest.param(
            pod(req=ZONE_FOO),
            node("node2", zone="foo"),
            added(required(term(fields=(names("node2"),)))),
            None,
            None,
            None,
            id="matches added affinity and the pod's affinity",
        ),
        pytest.param(
            pod(req=required(term(expr("zone", "In", "bar")))),
            node("node2", zone="foo"),
            added(required(term(fields=(names("node2"),)))),
            None,
            None,
            REJECT_POD,
            id="matches added affinity but not the pod's affinity",
        ),
        pytest.param(
            pod(),
            node("node2", zone="foo"),
            added(required(term(expr("zone", "In", "bar")))),
            None,
            None,
            REJECT_ENFORCED,
            id="a node outside added affinity is rejected even for a pod without affinity",
        ),
    ],
)
def test_node_affinity(
    the_pod: Pod,
    the_node: NodeInfo,
    args: NodeAffinityArgs,
    pre_result: PreFilterResult | None,
    pre_status: Status | None,
    status: Status | None,
) -> None:
    plugin = NodeAffinity(args, Features())
    state = CycleState()
    got_result, got_status = plugin.pre_filter(state, the_pod, [the_node])
    assert (got_result, got_status) == (pre_result, pre_status)
    assert plugin.filter(state, the_pod, the_node) == status


@pytest.mark.parametrize(
    ("the_pod", "the_node", "status"),
    [
        pytest.param(
            pod({"foo": "bar"}),
            node(foo="bar"),
            None,
            id="matches the nodeSelector even if PreFilter is not called",
        ),
        pytest.param(
            pod(req=ZONE_FOO),
            node(zone="bar"),
            REJECT_POD,
            id="checks node affinity even if PreFilter is not called",
        ),
    ],
)
def test_filter_without_pre_filter(the_pod: Pod, the_node: NodeInfo, status: Status | None) -> None:
    plugin = NodeAffinity(NodeAffinityArgs(), Features())
    assert plugin.filter(CycleState(), the_pod, the_node) == status


def test_added_affinity_must_parse() -> None:
    bad = objects.NodeAffinity(
        required=required(term(fields=(names("a", "b"),))),
        preferred=(PreferredSchedulingTerm(1, term(expr("foo", "Bogus"))),),
    )
    with pytest.raises(ConfigError) as info:
        new(NodeAffinityArgs(bad), Handle(Snapshot([])), Features())
    assert info.value.lines() == [
        "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        '.nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["a","b"]: '
        "must have one element",
        "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        '[0].matchExpressions[0].operator: Unsupported value: "Bogus": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    ]


def test_factory_rejects_foreign_args() -> None:
    with pytest.raises(ConfigError, match="args are not of type NodeAffinityArgs"):
        new(object(), Handle(Snapshot([])), Features())


def test_factory_accepts_no_args() -> None:
    plugin = new(None, Handle(Snapshot([])), Features())
    assert plugin.name == "NodeAffinity"
