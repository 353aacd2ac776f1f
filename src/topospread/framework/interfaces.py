"""The extension points, one small Protocol each (``fwk.*Plugin`` upstream).

Contract, as the framework runtime guarantees it:

* PreFilter runs once per cycle, before any Filter, with every node of the snapshot.
  It returns ``(result, status)``: ``result`` may narrow the candidate nodes (``None``
  means all nodes); a Skip status means this plugin's Filter is not called this cycle.
* Filter runs per candidate node and returns ``None`` (fits) or a rejecting status:
  Unschedulable (preemption may help) or UnschedulableAndUnresolvable (it cannot).
* PreScore runs once with the nodes that passed every filter; Skip means Score and
  NormalizeScore of this plugin are not called.
* Score runs per feasible node; NormalizeScore then maps the raw scores into 0..100 in
  place. The framework multiplies by the plugin's weight afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import ClusterObjects, NodeInfo, Snapshot
from topospread.framework.status import Status
from topospread.model.objects import Pod

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "FilterPlugin",
    "Handle",
    "NodeScore",
    "Plugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ScoreExtensions",
    "ScorePlugin",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass(frozen=True, slots=True)
class Handle:
    """What plugins may read besides the pod: the cycle's snapshot and listed objects."""

    snapshot: Snapshot
    objects: ClusterObjects = ClusterObjects()
    parallelism: int = 16


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        """Whether no narrowing applies."""
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """The intersection of two results (``PreFilterResult.Merge``)."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NodeScore:
    """A node's score from one plugin; NormalizeScore rewrites ``score`` in place."""

    name: str
    score: int


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a name."""

    @property
    def name(self) -> str:
        """The registry name, e.g. ``PodTopologySpread``."""
        ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state, used for nominated pods and preemption."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Account for ``pod_to_add`` as if it ran on ``node_info``."""
        ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Account for ``pod_to_remove`` leaving ``node_info``."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Computes per-cycle state before filtering; may narrow nodes or Skip."""

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Run once per cycle with all nodes."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod support, or None."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Decides whether the pod fits one node."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """None if the pod fits, else a rejecting status."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Computes per-cycle scoring state from the feasible nodes; may Skip."""

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Run once with the nodes that passed filtering."""
        ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """Normalization of raw scores into 0..MAX_NODE_SCORE."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Rewrite ``scores`` in place."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks feasible nodes."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """A raw score for one node."""
        ...

    def score_extensions(self) -> ScoreExtensions | None:
        """NormalizeScore support, or None."""
        ...
