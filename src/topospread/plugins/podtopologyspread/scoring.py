"""PreScore, Score and NormalizeScore of PodTopologySpread (soft constraints).

Raw score of a node = round( Σ over constraints whose key the node has of
``count(domain) × ln(domains + 2) + (maxSkew − 1)`` ), with Go's round-half-away-from-zero.
NormalizeScore maps the lowest raw score to 100: ``100 × (max + min − raw) ÷ max`` with
truncating integer division, ignored nodes 0, and every node 100 when max is 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.interfaces import MAX_NODE_SCORE, NodeScore
from topospread.framework.node_info import NodeInfo, PodCounter, Snapshot
from topospread.framework.node_table import BoolArray, DomainColumn, IntArray, NodeTable
from topospread.model.nodeaffinity import required_node_affinity
from topospread.model.objects import LABEL_HOSTNAME, Pod
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    count_pods_match_selector,
    counted_node_columns,
    counters_for,
    counts_every_node,
    has_keys_column,
    node_labels_match_spread_constraints,
)
from topospread.plugins.podtopologyspread.filtering import domain_counts_by_code

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "compute_pre_score_state",
    "get_pre_score_state",
    "go_round",
    "normalize_batch",
    "normalize_scores",
    "score_batch",
    "score_node",
    "topology_normalizing_weight",
]

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
_INVALID_SCORE = -1


def go_round(x: float) -> int:
    """Round half away from zero, as Go's ``math.Round`` (Python's round is half-to-even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def topology_normalizing_weight(size: int) -> float:
    """``ln(size + 2)``: keeps the counts of topologies with few domains from being watered down."""
    return math.log(size + 2)


@dataclass(slots=True)
class PreScoreState:
    """Matching pods per domain of the soft constraints, for the nodes being scored.

    Immutable once PreScore has written it, so ``clone`` returns itself. Hostname
    constraints keep no domain map: their counts are taken per node in Score.
    """

    constraints: tuple[Constraint, ...]
    """Soft constraints, in order (pod's own, or the defaults)."""
    ignored_nodes: frozenset[str]
    """Feasible nodes lacking a required topology key; they score 0."""
    topology_value_to_pod_counts: list[dict[str, int]]
    """Per constraint: domain value -> matching pods, only for domains of feasible nodes."""
    topology_normalizing_weight: list[float]
    """Per constraint: ln(number of domains + 2)."""
    require_all_topologies: bool = True
    """False only under System default constraints: nodes may then lack some keys."""
    topology_sizes: list[int] = field(default_factory=list)
    """Per constraint: the domain count the weight was computed from."""
    counters: list[PodCounter] | None = None
    """Per constraint: the snapshot's per-node counts, for hostname constraints in Score;
    None means count the node's pods."""
    snapshot: Snapshot | None = None
    """The snapshot the counters belong to; Score uses them only for its nodes."""

    def clone(self) -> PreScoreState:
        """The state is read-only after PreScore."""
        return self


def compute_pre_score_state(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    filtered_nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    *,
    require_all_topologies: bool,
    node_inclusion_policy: bool,
    comparison_operators: bool,
    snapshot: Snapshot | None = None,
    filtered_rows: IntArray | None = None,
) -> PreScoreState:
    """Seed domains from the feasible nodes, then count pods over all nodes (``PreScore``).

    ``filtered_rows``, when given, are the feasible nodes' rows in the snapshot's node
    table (the bulk search found them so). With the snapshot's counters (``all_nodes``
    being its node list) the counting costs
    O(feasible nodes) when every node counts (no nodeSelector or required node affinity,
    no constraint honouring taints) and O(nodes) otherwise, instead of O(pods); and with
    array operations over the snapshot's node table (:func:`_pre_score_in_bulk`).
    """
    if snapshot is not None and all_nodes is snapshot.node_infos and snapshot.use_count_cache:
        return _pre_score_in_bulk(
            pod,
            constraints,
            filtered_nodes,
            snapshot,
            filtered_rows,
            require_all_topologies=require_all_topologies,
            node_inclusion_policy=node_inclusion_policy,
            comparison_operators=comparison_operators,
        )
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    sizes = [0] * len(constraints)
    for node_info in filtered_nodes:
        labels = node_info.node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            ignored.add(node_info.name)
            continue
        for index, constraint in enumerate(constraints):
            if constraint.topology_key == LABEL_HOSTNAME:
                continue
            # A missing key (possible only under System defaults) forms the "" domain.
            value = labels.get(constraint.topology_key, "")
            if value not in counts[index]:
                counts[index][value] = 0
                sizes[index] += 1
    weights: list[float] = []
    for index, constraint in enumerate(constraints):
        size = sizes[index]
        if constraint.topology_key == LABEL_HOSTNAME:
            # Hostname domains are the scored nodes themselves.
            size = len(filtered_nodes) - len(ignored)
            sizes[index] = size
        weights.append(topology_normalizing_weight(size))

    required = required_node_affinity(pod)
    namespace = pod.namespace
    counters = counters_for(snapshot, all_nodes, constraints, namespace)
    state = PreScoreState(
        constraints=constraints,
        ignored_nodes=frozenset(ignored),
        topology_value_to_pod_counts=counts,
        topology_normalizing_weight=weights,
        require_all_topologies=require_all_topologies,
        topology_sizes=sizes,
        counters=counters,
        snapshot=snapshot if counters is not None else None,
    )
    if counters is not None:
        assert snapshot is not None
        if counts_every_node(required, constraints, node_inclusion_policy):
            # Nodes lacking a key are skipped when all keys are required; otherwise
            # (System defaults) a missing key forms the "" domain. Either way only the
            # seeded domains (those of feasible nodes) are read.
            keys = frozenset(c.topology_key for c in constraints)
            required_keys = keys if require_all_topologies else frozenset()
            for index, constraint in enumerate(constraints):
                domain_counts = counts[index]
                if not domain_counts:
                    continue
                totals = snapshot.domain_totals(
                    counters[index], constraint.topology_key, required_keys
                ).totals
                for value in domain_counts:
                    domain_counts[value] = totals.get(value, 0)
            return state
    for node_info in all_nodes:
        node = node_info.node
        if not node_inclusion_policy and not required.match(node):
            continue
        labels = node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        for index, constraint in enumerate(constraints):
            if node_inclusion_policy and not constraint.match_node_inclusion_policies(
                pod, node, required, comparison_operators
            ):
                continue
            value = labels.get(constraint.topology_key, "")
            domain_counts = counts[index]
            # Only domains of feasible nodes are counted; pods on infeasible nodes of
            # such a domain still count towards it.
            if value not in domain_counts:
                continue
            if counters is not None:
                domain_counts[value] += counters[index].count(node_info.name)
            else:
                domain_counts[value] += count_pods_match_selector(
                    node_info, constraint.selector, namespace
                )
    return state


def _codes_with_missing_as_empty(domains: DomainColumn, codes: IntArray) -> tuple[IntArray, int]:
    # A node without the key (possible only under System defaults) joins the "" domain,
    # which a real "" label value forms too: code -1 becomes that domain's code, or a
    # code past the column's values standing for "".
    empty = domains.code_of.get("", len(domains.values))
    return np.where(codes < 0, empty, codes), empty


def _pre_score_in_bulk(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    filtered_nodes: Sequence[NodeInfo],
    snapshot: Snapshot,
    filtered_rows: IntArray | None,
    *,
    require_all_topologies: bool,
    node_inclusion_policy: bool,
    comparison_operators: bool,
) -> PreScoreState:
    # compute_pre_score_state's two loops as array operations over the node table; the
    # same rules, the same domain order (first feasible node first).
    table = snapshot.table()
    infos = table.node_infos
    row_of = table.row_of
    if filtered_rows is not None and len(filtered_rows) == len(filtered_nodes):
        rows = filtered_rows
    else:
        rows = np.fromiter(
            (row_of[info.name] for info in filtered_nodes), np.int64, len(filtered_nodes)
        )
    keys = frozenset(c.topology_key for c in constraints)
    has_keys = has_keys_column(table, keys)
    if require_all_topologies:
        ignored_rows = rows[~has_keys[rows]]
        scored = rows[has_keys[rows]]
    else:
        ignored_rows = rows[:0]
        scored = rows
    ignored = frozenset(infos[row].name for row in ignored_rows.tolist())
    counters = counters_for(snapshot, snapshot.node_infos, constraints, pod.namespace)
    assert counters is not None
    seeded: list[list[int]] = []
    sizes: list[int] = []
    columns: list[tuple[DomainColumn, int]] = []
    for constraint in constraints:
        domains = table.domains(constraint.topology_key)
        codes, empty = _codes_with_missing_as_empty(domains, domains.codes[scored])
        columns.append((domains, empty))
        if constraint.topology_key == LABEL_HOSTNAME:
            seeded.append([])
            sizes.append(len(filtered_nodes) - len(ignored))
            continue
        present, first = np.unique(codes, return_index=True)
        in_order = present[np.argsort(first, kind="stable")].tolist()
        seeded.append(in_order)
        sizes.append(len(in_order))
    weights = [topology_normalizing_weight(size) for size in sizes]

    required = required_node_affinity(pod)
    every_node = counts_every_node(required, constraints, node_inclusion_policy)
    eligible_columns = counted_node_columns(
        table,
        pod,
        constraints,
        required,
        has_keys if require_all_topologies else np.ones(len(table), np.bool_),
        node_inclusion_policy=node_inclusion_policy,
        comparison_operators=comparison_operators,
    )
    counts: list[dict[str, int]] = []
    for index, constraint in enumerate(constraints):
        domains, empty = columns[index]
        value_of = [*domains.values, ""]
        if not seeded[index]:
            counts.append({})
            continue
        if every_node:
            totals = snapshot.domain_totals(
                counters[index],
                constraint.topology_key,
                keys if require_all_topologies else frozenset(),
            ).totals
            counts.append({value_of[c]: totals.get(value_of[c], 0) for c in seeded[index]})
            continue
        eligible_rows = np.flatnonzero(eligible_columns[index])
        codes, _ = _codes_with_missing_as_empty(domains, domains.codes[eligible_rows])
        per_code = np.zeros(len(domains.values) + 1, np.int64)
        np.add.at(per_code, codes, snapshot.counter_column(counters[index])[eligible_rows])
        counts.append({value_of[c]: int(per_code[c]) for c in seeded[index]})
    return PreScoreState(
        constraints=constraints,
        ignored_nodes=ignored,
        topology_value_to_pod_counts=counts,
        topology_normalizing_weight=weights,
        require_all_topologies=require_all_topologies,
        topology_sizes=sizes,
        counters=list(counters),
        snapshot=snapshot,
    )


def get_pre_score_state(state: CycleState) -> PreScoreState:
    """The state PreScore wrote; raises StateNotFoundError if it did not run (upstream's
    getPreScoreState words it "error reading ...", unlike the PreFilter state's)."""
    try:
        return state.read(PRE_SCORE_STATE_KEY, PreScoreState)
    except StateNotFoundError as exc:
        raise StateNotFoundError(f"error {exc}") from None


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The raw score of one feasible node (lower is better before normalization)."""
    if node_info.name in s.ignored_nodes:
        return 0
    labels = node_info.node.labels
    score = 0.0
    for index, constraint in enumerate(s.constraints):
        value = labels.get(constraint.topology_key)
        if value is None:
            continue
        if constraint.topology_key == LABEL_HOSTNAME:
            if s.counters is not None and node_info.snapshot is s.snapshot:
                count = s.counters[index].count(node_info.name)
            else:
                count = count_pods_match_selector(node_info, constraint.selector, pod.namespace)
        else:
            count = s.topology_value_to_pod_counts[index][value]
        score += count * s.topology_normalizing_weight[index] + (constraint.max_skew - 1)
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Map raw scores into 0..100 in place, lowest raw score best (``NormalizeScore``)."""
    min_score = 2**63 - 1
    max_score = 0
    for entry in scores:
        if entry.name in s.ignored_nodes:
            entry.score = _INVALID_SCORE
            continue
        min_score = min(min_score, entry.score)
        max_score = max(max_score, entry.score)
    for entry in scores:
        if entry.score == _INVALID_SCORE:
            entry.score = 0
        elif max_score == 0:
            entry.score = MAX_NODE_SCORE
        else:
            # Go's int64 division truncates towards zero; operands are non-negative here.
            entry.score = MAX_NODE_SCORE * (max_score + min_score - entry.score) // max_score


def score_batch(s: PreScoreState, table: NodeTable, rows: IntArray) -> IntArray | None:
    """:func:`score_node` of the nodes at ``rows`` of ``table``; None when hostname counts
    would need a walk over the pods (no snapshot counters)."""
    score = np.zeros(len(rows), np.float64)
    for index, constraint in enumerate(s.constraints):
        domains = table.domains(constraint.topology_key)
        codes = domains.codes[rows]
        if constraint.topology_key == LABEL_HOSTNAME:
            if s.counters is None or s.snapshot is None or s.snapshot.table() is not table:
                return None
            count = s.snapshot.counter_column(s.counters[index])[rows]
        else:
            count = domain_counts_by_code(s.topology_value_to_pod_counts[index], domains)[codes]
        term = count * s.topology_normalizing_weight[index] + (constraint.max_skew - 1)
        score += np.where(codes >= 0, term, 0.0)
    # go_round of non-negative values: floor(x + 0.5).
    raw: IntArray = np.floor(score + 0.5).astype(np.int64)
    if s.ignored_nodes:
        raw[_ignored(s, table, rows)] = 0
    return raw


def _ignored(s: PreScoreState, table: NodeTable, rows: IntArray) -> BoolArray:
    infos = table.node_infos
    ignored = s.ignored_nodes
    return np.fromiter((infos[row].name in ignored for row in rows.tolist()), np.bool_, len(rows))


def normalize_batch(s: PreScoreState, table: NodeTable, rows: IntArray, raw: IntArray) -> IntArray:
    """:func:`normalize_scores` over an array of raw scores."""
    valid = ~_ignored(s, table, rows) if s.ignored_nodes else np.ones(len(rows), np.bool_)
    if not valid.any():
        return np.zeros(len(rows), np.int64)
    min_score = int(raw[valid].min())
    max_score = max(int(raw[valid].max()), 0)
    if max_score == 0:
        normalized = np.full(len(rows), MAX_NODE_SCORE, np.int64)
    else:
        normalized = MAX_NODE_SCORE * (max_score + min_score - raw) // max_score
    result: IntArray = np.where(valid, normalized, 0)
    return result
