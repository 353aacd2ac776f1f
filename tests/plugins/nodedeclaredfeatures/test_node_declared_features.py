"""NodeDeclaredFeatures without the oracle (tests/differential compares it with upstream)."""

from __future__ import annotations

from typing import Any

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code
from topospread.model.decode import decode_documents
from topospread.model.objects import Node, Pod
from topospread.plugins.nodedeclaredfeatures import (
    ERR_REASON,
    NodeDeclaredFeatures,
    declared_features,
    required_features,
)


def _decode(doc: dict[str, Any]) -> Any:
    (obj,) = decode_documents([doc]).objects
    return obj


def _node(features: list[str]) -> Node:
    node = _decode(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"declaredFeatures": features},
        }
    )
    assert isinstance(node, Node)
    return node


def _pod(**spec: Any) -> Pod:
    pod = _decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
        }
    )
    assert isinstance(pod, Pod)
    return pod


RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}


def test_what_a_pod_needs() -> None:
    assert required_features(_pod()) == frozenset()
    restart = _pod(
        containers=[
            {"name": "c", "image": "i", "restartPolicy": "Never", "restartPolicyRules": [RULE]}
        ]
    )
    assert required_features(restart) == {"RestartAllContainersOnContainerExits"}
    assert required_features(_pod(hostNetwork=True, hostUsers=False)) == {
        "UserNamespacesHostNetworkSupport"
    }
    assert required_features(_pod(hostNetwork=True)) == frozenset()


def test_node_lists_are_walked_as_sorted() -> None:
    assert declared_features(_node(["RestartAllContainersOnContainerExits"])) == {
        "RestartAllContainersOnContainerExits"
    }
    # TryMap's merge walk passes RestartAll… once it has moved beyond it.
    assert declared_features(
        _node(["VolumeBindMountOptions", "RestartAllContainersOnContainerExits"])
    ) == {"VolumeBindMountOptions"}
    assert declared_features(_node(["Unknown"])) == frozenset()


def test_filter_rejects_nodes_without_the_feature() -> None:
    plugin = NodeDeclaredFeatures()
    pod = _pod(hostNetwork=True, hostUsers=False)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status is None
    bare = plugin.filter(state, pod, NodeInfo(_node([])))
    assert bare is not None
    assert bare.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert bare.reasons == (ERR_REASON,)
    assert plugin.filter(state, pod, NodeInfo(_node(["UserNamespacesHostNetworkSupport"]))) is None
    _, skip = plugin.pre_filter(CycleState(), _pod(), [])
    assert skip is not None
    assert skip.code is Code.SKIP
