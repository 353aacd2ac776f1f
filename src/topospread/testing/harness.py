"""Run one plugin's extension points on a small snapshot, for table-driven tests."""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.config.types import PodTopologySpreadArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.model.objects import Node, Pod, TopologySpreadConstraint
from topospread.plugins.podtopologyspread import PodTopologySpread

__all__ = ["LIST_DEFAULTING", "build_spread_plugin", "fresh_state", "list_args"]

LIST_DEFAULTING = PodTopologySpreadArgs(default_constraints=(), defaulting_type="List")
"""Args with no default constraints at all."""


def build_spread_plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    *,
    args: PodTopologySpreadArgs = LIST_DEFAULTING,
    objects: ClusterObjects = ClusterObjects(),
    features: Features = Features(),
) -> tuple[PodTopologySpread, Snapshot]:
    """A PodTopologySpread plugin whose handle sees ``nodes`` with ``pods`` assigned."""
    snapshot = Snapshot(nodes, pods)
    return PodTopologySpread(args, Handle(snapshot, objects), features), snapshot


def list_args(*constraints: TopologySpreadConstraint) -> PodTopologySpreadArgs:
    """Args with ``defaultingType: List`` and these default constraints."""
    return PodTopologySpreadArgs(default_constraints=tuple(constraints), defaulting_type="List")


def fresh_state() -> CycleState:
    """An empty cycle state."""
    return CycleState()
