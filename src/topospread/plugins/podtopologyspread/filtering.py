"""PreFilter, Filter and AddPod/RemovePod of PodTopologySpread (hard constraints).

The Filter rule, per DoNotSchedule constraint in order::

    skew = matchNum(node's domain) + selfMatch - globalMin      must be <= maxSkew

where ``globalMin`` is the smallest count over eligible domains, or 0 when there are
fewer eligible domains than ``minDomains``. A node without the topology key is
UnschedulableAndUnresolvable; a skew violation is Unschedulable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo, PodCounter, Snapshot
from topospread.framework.node_table import BoolArray, DomainColumn, IntArray, NodeTable
from topospread.framework.status import Code, Status
from topospread.model.nodeaffinity import (
    RequiredNodeAffinity,
    required_node_affinity,
)
from topospread.model.objects import Node, Pod
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    count_pods_match_selector,
    counted_node_columns,
    counters_for,
    counts_every_node,
    has_keys_column,
    node_labels_match_spread_constraints,
)

__all__ = [
    "MAX_INT32",
    "PRE_FILTER_STATE_KEY",
    "CriticalPaths",
    "PreFilterState",
    "SkewCheck",
    "check_constraint",
    "compute_pre_filter_state",
    "domain_counts_by_code",
    "filter_batch",
    "filter_node",
    "get_pre_filter_state",
    "update_with_pod",
]

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"
MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two domains with the fewest matching pods of one constraint.

    Slot 0 always holds the minimum; slot 1 is only an upper bound on the second
    minimum after incremental updates. CAVEAT: two slots suffice because preemption
    only removes pods from one node and evaluates each node on its own copy of the
    state; updates spread over several domains of one copy could leave the minimum
    stale. The empty value "" doubles as the free-slot marker, which stays sound even
    for a real "" domain.
    """

    __slots__ = ("num0", "num1", "value0", "value1")

    def __init__(
        self, value0: str = "", num0: int = MAX_INT32, value1: str = "", num1: int = MAX_INT32
    ) -> None:
        self.value0, self.num0 = value0, num0
        self.value1, self.num1 = value1, num1

    @property
    def min_match_num(self) -> int:
        """The smallest count over the domains seen."""
        return self.num0

    def update(self, value: str, num: int) -> None:
        """Record that domain ``value`` now has ``num`` matching pods (``criticalPaths.update``)."""
        if value == self.value0 or value == self.value1:
            if value == self.value0:
                self.num0 = num
            else:
                self.num1 = num
            if self.num0 > self.num1:
                self.value0, self.num0, self.value1, self.num1 = (
                    self.value1,
                    self.num1,
                    self.value0,
                    self.num0,
                )
        elif num < self.num0:
            self.value1, self.num1 = self.value0, self.num0
            self.value0, self.num0 = value, num
        elif num < self.num1:
            self.value1, self.num1 = value, num

    def copy(self) -> CriticalPaths:
        """An independent copy."""
        return CriticalPaths(self.value0, self.num0, self.value1, self.num1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CriticalPaths):
            return NotImplemented
        return (self.value0, self.num0, self.value1, self.num1) == (
            other.value0,
            other.num0,
            other.value1,
            other.num1,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CriticalPaths(({self.value0!r}, {self.num0}), ({self.value1!r}, {self.num1}))"


class _BulkCounts:
    """One constraint's counts as PreFilter's bulk path leaves them: per domain code of a
    node table, over the eligible rows. The map by domain value is built only when asked
    for (explanations, preemption's clones, the per-node Filter); Filter in bulk reads
    ``per_code`` directly, and a cycle over thousands of domains then builds no map."""

    __slots__ = ("domain_count", "domains", "eligible_codes", "per_code")

    def __init__(self, domains: DomainColumn, eligible_codes: IntArray, per_code: IntArray) -> None:
        self.domains = domains
        self.eligible_codes = eligible_codes
        """The domain code of each eligible node, in node order."""
        self.per_code = per_code
        """Matching pods per code, one extra 0 last for code -1; 0 for absent domains."""
        present = np.zeros(len(per_code), np.bool_)
        present[eligible_codes] = True
        self.domain_count = int(np.count_nonzero(present))

    def as_map(self) -> dict[str, int]:
        # Domains enter the map in order of their first eligible node, as the per-node
        # loop would enter them.
        present, first_row = np.unique(self.eligible_codes, return_index=True)
        in_order = present[np.argsort(first_row, kind="stable")].tolist()
        values = self.domains.values
        return dict(
            zip([values[c] for c in in_order], self.per_code[in_order].tolist(), strict=True)
        )


class PreFilterState:
    """Counts of matching pods per eligible domain, per hard constraint.

    Written by PreFilter when the pod has at least one hard constraint (PreFilter returns
    Skip otherwise and writes nothing). ``constraints`` is shared between clones;
    ``tp_value_to_match_num`` and ``critical_paths`` are copied, since AddPod/RemovePod
    change them.
    """

    __slots__ = ("_bulk", "_maps", "by_code", "constraints", "critical_paths")

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        tp_value_to_match_num: list[dict[str, int]] | None,
        critical_paths: list[CriticalPaths],
        by_code: list[tuple[DomainColumn, IntArray] | None] | None = None,
        bulk: list[_BulkCounts] | None = None,
    ) -> None:
        self.constraints = constraints
        """Hard constraints, in the pod's order."""
        self._maps = tp_value_to_match_num
        self._bulk = bulk
        self.critical_paths = critical_paths
        """Per constraint: the two least-loaded domains."""
        self.by_code = by_code
        """Per constraint, when PreFilter counted in bulk: ``tp_value_to_match_num``
        indexed by the codes of a node table's domain column (see
        :func:`domain_counts_by_code`). Dropped by AddPod/RemovePod, which change only
        the maps."""

    @property
    def tp_value_to_match_num(self) -> list[dict[str, int]]:
        """Per constraint: domain value -> matching pods; every eligible domain has an
        entry."""
        if self._maps is None:
            assert self._bulk is not None
            self._maps = [counts.as_map() for counts in self._bulk]
            self._bulk = None
        return self._maps

    def domain_count(self, index: int) -> int:
        """How many domains are eligible for constraint ``index``."""
        if self._maps is None:
            assert self._bulk is not None
            return self._bulk[index].domain_count
        return len(self._maps[index])

    def min_match_num(self, index: int) -> int:
        """The global minimum for constraint ``index``, with minDomains applied."""
        constraint = self.constraints[index]
        # Fewer eligible domains than minDomains: the global minimum is treated as 0.
        if self.domain_count(index) < constraint.min_domains:
            return 0
        return self.critical_paths[index].min_match_num

    def clone(self) -> PreFilterState:
        """A copy that AddPod/RemovePod may change freely."""
        return PreFilterState(
            self.constraints,
            [dict(m) for m in self.tp_value_to_match_num],
            [p.copy() for p in self.critical_paths],
            self.by_code,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreFilterState):
            return NotImplemented
        return (
            self.constraints == other.constraints
            and self.tp_value_to_match_num == other.tp_value_to_match_num
            and self.critical_paths == other.critical_paths
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"PreFilterState({self.constraints!r}, {self.tp_value_to_match_num!r}, "
            f"{self.critical_paths!r})"
        )


_FEW_DOMAINS = 64
"""Up to this many domains over all hard constraints, PreFilter copies the maintained
per-domain totals; above it, it counts with arrays over the node table."""


def compute_pre_filter_state(
    pod: Pod,
    nodes: Sequence[NodeInfo],
    constraints: tuple[Constraint, ...],
    *,
    node_inclusion_policy: bool,
    comparison_operators: bool,
    snapshot: Snapshot | None = None,
) -> PreFilterState:
    """Count matching pods per domain over all nodes (``calPreFilterState``).

    With the snapshot's counters (``nodes`` being its node list) the cost is O(domains)
    when every node counts — the pod has no nodeSelector or required node affinity and
    no constraint honours taints — and otherwise a few array operations over the nodes
    (:func:`_compute_in_bulk`), instead of O(pods).
    """
    required = required_node_affinity(pod)
    namespace = pod.namespace
    counters = counters_for(snapshot, nodes, constraints, namespace)
    if counters is not None:
        assert snapshot is not None
        if counts_every_node(required, constraints, node_inclusion_policy):
            # A node missing any constraint's key is left out of every constraint's
            # counts: the totals are taken over nodes carrying all the keys.
            keys = frozenset(c.topology_key for c in constraints)
            totals = [
                snapshot.domain_totals(counter, c.topology_key, keys).totals
                for c, counter in zip(constraints, counters, strict=True)
            ]
            if sum(map(len, totals)) <= _FEW_DOMAINS:
                return _with_critical_paths(constraints, [dict(t) for t in totals])
            # Many domains (hostname): the maps would cost O(domains) of Python per
            # cycle, twice (critical paths, Filter's arrays); the bulk path's array
            # operations over the nodes give the same state and build no map.
        return _compute_in_bulk(
            pod,
            constraints,
            snapshot,
            counters,
            required,
            node_inclusion_policy=node_inclusion_policy,
            comparison_operators=comparison_operators,
        )
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node_info in nodes:
        node = node_info.node
        if not node_inclusion_policy and not required.match(node):
            continue
        labels = node.labels
        # A node missing any constraint's key is left out of every constraint's counts.
        if not node_labels_match_spread_constraints(labels, constraints):
            continue
        for index, constraint in enumerate(constraints):
            if node_inclusion_policy and not constraint.match_node_inclusion_policies(
                pod, node, required, comparison_operators
            ):
                continue
            value = labels[constraint.topology_key]
            domain_counts = counts[index]
            matched = count_pods_match_selector(node_info, constraint.selector, namespace)
            domain_counts[value] = domain_counts.get(value, 0) + matched
    return _with_critical_paths(constraints, counts)


def _compute_in_bulk(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    snapshot: Snapshot,
    counters: Sequence[PodCounter],
    required: RequiredNodeAffinity,
    *,
    node_inclusion_policy: bool,
    comparison_operators: bool,
) -> PreFilterState:
    # The node loop of compute_pre_filter_state with arrays over the snapshot's table.
    # Which nodes count depends only on node objects and the pod's node selection and
    # tolerations, so those masks are memoised columns; the counts come from the
    # counters' columns. Domains enter each map in order of their first counted node,
    # as the loop would enter them, and the critical paths are those the loop's
    # updates leave: slot 0 the first domain with the least count, slot 1 the first
    # with the least count among the others.
    table = snapshot.table()
    keys = frozenset(c.topology_key for c in constraints)
    eligible_columns = counted_node_columns(
        table,
        pod,
        constraints,
        required,
        has_keys_column(table, keys),
        node_inclusion_policy=node_inclusion_policy,
        comparison_operators=comparison_operators,
    )
    bulk: list[_BulkCounts] = []
    paths: list[CriticalPaths] = []
    by_code: list[tuple[DomainColumn, IntArray] | None] = []
    for constraint, counter, eligible in zip(constraints, counters, eligible_columns, strict=True):
        domains = table.domains(constraint.topology_key)
        rows = np.flatnonzero(eligible)
        codes = domains.codes[rows]
        matching = snapshot.counter_column(counter)[rows]
        # Counts are whole numbers far below 2**53: bincount's float sums are exact.
        per_code = np.bincount(codes, weights=matching, minlength=len(domains.values) + 1)
        per_code = per_code.astype(np.int64)
        bulk.append(_BulkCounts(domains, codes, per_code))
        paths.append(_critical_paths_of(domains.values, codes, per_code))
        by_code.append((domains, per_code))
    return PreFilterState(constraints, None, paths, by_code, bulk)


def _critical_paths_of(
    values: Sequence[str], eligible_codes: IntArray, per_code: IntArray
) -> CriticalPaths:
    # What CriticalPaths.update leaves after visiting the domains in order of their first
    # eligible node: slot 0 the first domain with the least count, slot 1 the first with
    # the least count among the others. The first eligible node whose domain holds the
    # least count belongs to the first such domain, so no ordering of domains is needed.
    paths = CriticalPaths()
    if not len(eligible_codes):
        return paths
    at_node = per_code[eligible_codes]
    first = int(np.argmin(at_node))
    code0 = int(eligible_codes[first])
    paths.value0, paths.num0 = values[code0], int(at_node[first])
    others = eligible_codes != code0
    if others.any():
        rest = np.where(others, at_node, np.iinfo(np.int64).max)
        second = int(np.argmin(rest))
        code1 = int(eligible_codes[second])
        paths.value1, paths.num1 = values[code1], int(at_node[second])
    return paths


def _with_critical_paths(
    constraints: tuple[Constraint, ...], counts: list[dict[str, int]]
) -> PreFilterState:
    paths: list[CriticalPaths] = []
    for domain_counts in counts:
        critical = CriticalPaths()
        for value, num in domain_counts.items():
            critical.update(value, num)
        paths.append(critical)
    return PreFilterState(constraints, counts, paths)


def get_pre_filter_state(state: CycleState) -> PreFilterState:
    """The state PreFilter wrote; raises StateNotFoundError if it did not run."""
    return state.read(PRE_FILTER_STATE_KEY, PreFilterState)


def update_with_pod(
    s: PreFilterState,
    updated_pod: Pod,
    preemptor: Pod,
    node: Node | None,
    delta: int,
    *,
    node_inclusion_policy: bool,
    comparison_operators: bool,
) -> None:
    """Add (+1) or remove (-1) one pod's contribution (``updateWithPod``).

    No existence check, as upstream: removing a matching pod that was never counted still
    decrements; a pod of another namespace or on a node missing a key changes nothing.
    """
    if node is None or updated_pod.namespace != preemptor.namespace:
        return
    if not node_labels_match_spread_constraints(node.labels, s.constraints):
        return
    required = required_node_affinity(preemptor)
    if not node_inclusion_policy and not required.match(node):
        return
    for index, constraint in enumerate(s.constraints):
        if not constraint.selector.matches(updated_pod.labels):
            continue
        if node_inclusion_policy and not constraint.match_node_inclusion_policies(
            preemptor, node, required, comparison_operators
        ):
            continue
        value = node.labels[constraint.topology_key]
        s.by_code = None
        domain_counts = s.tp_value_to_match_num[index]
        domain_counts[value] = domain_counts.get(value, 0) + delta
        s.critical_paths[index].update(value, domain_counts[value])


@dataclass(frozen=True, slots=True)
class SkewCheck:
    """The arithmetic of one constraint on one node, for Filter and for explanations."""

    constraint_index: int
    topology_value: str | None
    """The node's domain, or None when the node lacks the topology key."""
    match_num: int
    self_match: int
    min_match_num: int
    domains: int
    """Number of eligible domains of this constraint."""

    @property
    def skew(self) -> int:
        """matchNum + selfMatch - globalMin."""
        return self.match_num + self.self_match - self.min_match_num


def check_constraint(s: PreFilterState, index: int, pod: Pod, node: Node) -> SkewCheck:
    """Evaluate constraint ``index`` of ``s`` for placing ``pod`` on ``node``."""
    constraint = s.constraints[index]
    value = node.labels.get(constraint.topology_key)
    if value is None:
        return SkewCheck(index, None, 0, 0, 0, s.domain_count(index))
    return SkewCheck(
        constraint_index=index,
        topology_value=value,
        # A domain with no entry (e.g. the node itself was excluded by a policy) counts 0.
        match_num=s.tp_value_to_match_num[index].get(value, 0),
        self_match=1 if constraint.selector.matches(pod.labels) else 0,
        min_match_num=s.min_match_num(index),
        domains=s.domain_count(index),
    )


def filter_node(
    s: PreFilterState, pod: Pod, node: Node, missing_label_reason: str, skew_reason: str
) -> Status | None:
    """The Filter verdict: the first failing constraint, in order, decides the code.

    The same arithmetic as :func:`check_constraint`, inlined: Filter runs per node.
    """
    labels = node.metadata.labels
    pod_labels = pod.metadata.labels
    for index, constraint in enumerate(s.constraints):
        value = labels.get(constraint.topology_key)
        if value is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (missing_label_reason,))
        match_num = s.tp_value_to_match_num[index].get(value, 0)
        self_match = 1 if constraint.selector.matches(pod_labels) else 0
        if match_num + self_match - s.min_match_num(index) > constraint.max_skew:
            return Status(Code.UNSCHEDULABLE, (skew_reason,))
    return None


def domain_counts_by_code(counts: Mapping[str, int], domains: DomainColumn) -> IntArray:
    """``counts`` indexed by ``domains``' codes, with one extra 0 last for code -1 (a node
    without the key) and 0 for domains without an entry."""
    by_code = np.zeros(len(domains.values) + 1, np.int64)
    code_of = domains.code_of
    for value, count in counts.items():
        code = code_of.get(value)
        if code is not None:
            by_code[code] = count
    return by_code


def filter_batch(s: PreFilterState, pod: Pod, table: NodeTable) -> BoolArray:
    """:func:`filter_node` for every node of ``table``: True where it passes."""
    passes: BoolArray = np.ones(len(table), np.bool_)
    pod_labels = pod.metadata.labels
    for index, constraint in enumerate(s.constraints):
        domains = table.domains(constraint.topology_key)
        codes = domains.codes
        cached = s.by_code[index] if s.by_code is not None else None
        if cached is not None and cached[0] is domains:
            by_code = cached[1]
        else:
            by_code = domain_counts_by_code(s.tp_value_to_match_num[index], domains)
        match_num = by_code[codes]
        self_match = 1 if constraint.selector.matches(pod_labels) else 0
        passes &= codes >= 0
        passes &= match_num + self_match - s.min_match_num(index) <= constraint.max_skew
    return passes
