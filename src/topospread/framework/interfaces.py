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
* PostFilter runs only when no node fits, with every node's rejecting status; it may
  nominate a node (preemption) for a later cycle. Success ends the PostFilter phase.

Batch extensions (optional, for speed, never for different answers): a Filter plugin may
also offer ``filter_batch`` (every node's verdict at once, as a NumPy mask over the
snapshot's :class:`~topospread.framework.node_table.NodeTable`), a Score plugin
``score_batch`` and its ScoreExtensions ``normalize_batch``. Each returns None when it
cannot answer this cycle in bulk, and the runtime then calls the per-node method. A batch
answer must equal what the per-node calls would give, node for node.

The binding cycle (``schedule_one.go`` ``bindingCycle``, after the chosen node is assumed):
Reserve (each plugin in order; a failure runs every plugin's Unreserve, in reverse
order), Permit, PreBind, Bind (the first plugin that does not Skip binds), PostBind
(informational). A failure after Reserve runs Unreserve too. Plugins write through
``Handle.binding``.

EnqueueExtensions (``fwk.EnqueueExtensions``): a plugin that may reject pods (it has a
PreFilter or Filter) declares with ``events_to_register()`` the cluster events that may
make those pods schedulable (:mod:`topospread.framework.events`). The live scheduler's
queue builds its requeue map per profile from the enabled plugins; a rejecting plugin
without the method is registered for every event, as upstream's ``defaultEnqueueExtension``
(``pkg/scheduler/framework/runtime/framework.go``, ``fillEnqueueExtensions``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from topospread.framework.binding import BindingPort
from topospread.framework.cycle_state import CycleState
from topospread.framework.events import ClusterEventWithHint
from topospread.framework.node_info import ClusterObjects, NodeInfo, Snapshot
from topospread.framework.node_table import BoolArray, IntArray, NodeTable
from topospread.framework.status import Code, Status
from topospread.framework.waiting import WaitingPods
from topospread.model.objects import Pod

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "AsyncBindPlugin",
    "BatchFilterPlugin",
    "BatchNormalizeScore",
    "BatchScorePlugin",
    "BindPlugin",
    "EnqueueExtensions",
    "FilterPlugin",
    "Handle",
    "NodeScore",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlightPlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ReservePlugin",
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
    binding: BindingPort | None = None
    """Where the binding cycle writes (:mod:`topospread.framework.binding`): the live API
    or the simulated cluster; None where no pod is bound (``explain``, the planners)."""
    waiting_pods: WaitingPods | None = None
    """The pods waiting at Permit (:mod:`topospread.framework.waiting`); None where no
    binding cycle runs, and a Permit Wait is then an error."""


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


_UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


@dataclass(frozen=True, slots=True)
class NodeToStatus:
    """Why each node was rejected (``framework.NodeToStatus``): explicit entries plus one
    status for every node without an entry (``absentNodesStatus``).

    The cycle records Filter rejections explicitly; nodes a PreFilter result left out, or
    every node when PreFilter rejected the pod, take the absent status.
    """

    explicit: Mapping[str, Status] = field(default_factory=dict)
    """Node name -> rejecting status, in snapshot order."""
    absent: Status = _UNRESOLVABLE
    """The status of nodes without an entry; by default UnschedulableAndUnresolvable."""

    def get(self, node_name: str) -> Status:
        """The node's status (``NodeToStatus.Get``)."""
        return self.explicit.get(node_name, self.absent)

    def nodes_for_status_code(self, node_infos: Iterable[NodeInfo], code: Code) -> list[NodeInfo]:
        """The nodes whose status has ``code`` (``NodesForStatusCode``), in snapshot order.

        Upstream walks a Go map for the explicit entries (random order); snapshot order
        is the deterministic stand-in.
        """
        if self.absent.code is code:
            return [info for info in node_infos if self.get(info.name).code is code]
        return [
            info
            for info in node_infos
            if info.name in self.explicit and self.explicit[info.name].code is code
        ]


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What a PostFilter plugin proposes (``fwk.PostFilterResult``).

    ``nominated_node_name`` "" clears the pod's nomination (``ModeOverride`` with no
    node); a None result upstream (no PostFilterResult) leaves it unchanged.
    """

    nominated_node_name: str
    victims: Mapping[str, tuple[Pod, ...]] = field(default_factory=dict)
    """topospread's addition, for explanations: every candidate node the preemption dry
    run found, with the pods it would evict there (most important first)."""
    tied_nodes: tuple[str, ...] = ()
    """topospread's addition: candidates still tied after every criterion of
    ``pickOneNodeForPreemption`` (upstream picks among them by Go map order)."""


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
class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node fits, e.g. to find preemption victims (``fwk.PostFilterPlugin``)."""

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """A nomination (or None) and a status; Success means the pod may fit later."""
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


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """A Filter that can also judge every node at once."""

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """True per table row where ``filter`` would return None; None to decline.

        Only offered where ``filter`` cannot return an Error this cycle. The array may be
        a memoised column: callers must not modify it.
        """
        ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """A Score plugin that can also score many nodes at once."""

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """The raw ``score`` of the nodes at ``rows`` (a new array); None to decline."""
        ...


@runtime_checkable
class BatchNormalizeScore(Protocol):
    """ScoreExtensions that can also normalize an array of raw scores."""

    def normalize_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, scores: IntArray
    ) -> IntArray | None:
        """``normalize_score`` of the nodes at ``rows`` with raw ``scores``; None to decline."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """The cluster events that may make the pods this plugin rejected schedulable."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """``EventsToRegister``: the events, each with an optional queueing hint. An empty
        sequence: no cluster event helps (only the pod's own update or the unschedulable
        timeout moves such a pod)."""
        ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Keeps a pod out of the active queue until it may be scheduled (``fwk.PreEnqueuePlugin``:
    SchedulingGates, DynamicResources' claims not created yet)."""

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """None to let the pod in; a rejection (UnschedulableAndUnresolvable) keeps it
        waiting, with no scheduling attempt and no Event, until an event its plugin
        registered for (or the pod's own update) says it may help."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders the active queue (``fwk.QueueSortPlugin``). Upstream's ``Less(a, b)`` becomes a
    sort key here, since Python's heaps order by keys: ``a`` goes first when its key is
    smaller. Every profile uses the same QueueSort plugin (validation refuses otherwise)."""

    def sort_key(self, pod: Pod, timestamp: float) -> tuple[float, ...]:
        """The pod's place in the queue; ``timestamp`` is when it was (re-)queued."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Assumes what the pod will use on its node; Unreserve undoes it (``fwk.ReservePlugin``)."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Before the bind: a rejection or error fails the binding cycle."""
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo ``reserve`` (idempotent; also called when this plugin's Reserve did not run)."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approves, rejects or delays the bind (``fwk.PermitPlugin``)."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """A status and, for Wait, how many seconds the pod may wait (at most 15 min) for
        this plugin's ``Handle.waiting_pods.get(uid).allow(name)``."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Writes what the pod needs before it is bound (``fwk.PreBindPlugin``)."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Through ``Handle.binding``; an error fails the binding cycle."""
        ...


@runtime_checkable
class PreBindPreFlightPlugin(PreBindPlugin, Protocol):
    """A PreBind plugin that can tell beforehand whether its PreBind has work for the pod
    (``PreBindPreFlight``). A PreBind plugin without it is taken to have work."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip when PreBind would do nothing for this pod on this node; None (Success)
        when it will work; an error status when it cannot tell."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod (``fwk.BindPlugin``); Skip leaves it to the next one."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """None when bound, Skip when not this plugin's pod, else an error."""
        ...


@runtime_checkable
class AsyncBindPlugin(BindPlugin, Protocol):
    """A Bind plugin that can bind without holding the calling thread until the API
    server answers (DefaultBinder over the live scheduler's write processes)."""

    @property
    def binds_async(self) -> bool:
        """Whether :meth:`bind_async` can ever bind (False: it always answers False, and
        the framework does not offer it the pod)."""
        ...

    def bind_async(
        self,
        state: CycleState,
        pod: Pod,
        node_name: str,
        done: Callable[[Status | None], None],
    ) -> bool:
        """Start binding the pod; False when this plugin cannot bind it this way now (the
        framework's synchronous ``bind`` is used instead). When True, ``done`` is called
        exactly once, maybe on another thread, with what ``bind`` would have returned
        (never Skip)."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Told that the pod was bound (``fwk.PostBindPlugin``)."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Informational; cannot fail."""
        ...
