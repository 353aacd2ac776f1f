"""The snapshot as columns: one NumPy array entry per node, for vectorised plugins.

A scheduling cycle that searches a few hundred of 5,000 nodes cannot afford a Python
call per node per plugin. :class:`NodeTable` keeps, in snapshot node order, what the
batch extension points (:mod:`topospread.framework.interfaces`) compute with:

* resource columns (:class:`UsageColumns`): allocatable, ``Requested`` and
  ``NonZeroRequested`` totals and pod counts, updated row by row from the pods added to
  or removed from the snapshot since the last cycle; and, kept with them, memoised
  per-node answers that depend on a node's usage (:meth:`UsageColumns.kept_column`),
  e.g. NodeResourcesFit's verdict and score for the requests of a Deployment's replicas,
  computed again only for the rows whose usage changed since the last cycle;
* per topology key, each node's domain as an integer code (:meth:`NodeTable.domains`);
* memoised per-node answers that depend only on node objects
  (:meth:`NodeTable.node_column`), e.g. whether a node's taints are tolerated by a
  given set of tolerations.

CAVEAT (what keeps the columns right): every pod change reaches the table through
``Snapshot._pod_changed`` (as :class:`~topospread.framework.node_info.PodCounter`
relies on too) and every node change through ``Snapshot._nodes_changed``, which drops
all node-derived columns. Integer columns are int64: a cluster whose quantities reach
2**62 marks the usage ``exact = False`` and batch plugins fall back to per-node calls.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from topospread.model.objects import Pod
from topospread.model.resources import node_allocatable, pod_resource

if TYPE_CHECKING:
    from topospread.framework.node_info import NodeInfo

__all__ = ["BoolArray", "DomainColumn", "IntArray", "NodeTable", "UsageColumns"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_LIMIT: Final = 2**62
"""Quantities at or above this could overflow int64 sums; such tables are not exact."""
_MAX_NODE_COLUMNS: Final = 256
_MAX_KEPT_COLUMNS: Final = 64
_FEW_ROWS: Final = 8
"""Up to this many changed rows are brought up to date one by one (``compute_row``):
for a few rows a plain call costs less than the array calls of ``compute``."""


class UsageColumns:
    """Allocatable and requested resources per node (``NodeInfo.Allocatable``,
    ``Requested``, ``NonZeroRequested``), for one setting of the PodLevelResources gate."""

    __slots__ = (
        "_alloc_scalar",
        "_changed",
        "_changed_base",
        "_kept",
        "_req_scalar",
        "_table",
        "alloc_cpu",
        "alloc_ephemeral",
        "alloc_memory",
        "allowed_pods",
        "exact",
        "non_zero_cpu",
        "non_zero_memory",
        "pod_count",
        "pod_level_resources",
        "req_cpu",
        "req_ephemeral",
        "req_memory",
    )

    def __init__(self, table: NodeTable, pod_level_resources: bool) -> None:
        self._table = table
        self.pod_level_resources = pod_level_resources
        infos = table.node_infos
        count = len(infos)
        self.alloc_cpu: IntArray = np.zeros(count, np.int64)
        self.alloc_memory: IntArray = np.zeros(count, np.int64)
        self.alloc_ephemeral: IntArray = np.zeros(count, np.int64)
        self.allowed_pods: IntArray = np.zeros(count, np.int64)
        self.req_cpu: IntArray = np.zeros(count, np.int64)
        self.req_memory: IntArray = np.zeros(count, np.int64)
        self.req_ephemeral: IntArray = np.zeros(count, np.int64)
        self.non_zero_cpu: IntArray = np.zeros(count, np.int64)
        self.non_zero_memory: IntArray = np.zeros(count, np.int64)
        self.pod_count: IntArray = np.zeros(count, np.int64)
        self._alloc_scalar: dict[str, IntArray] = {}
        self._req_scalar: dict[str, IntArray] = {}
        self.exact = True
        """False when some quantity is too large for exact int64 arithmetic."""
        self._changed: list[int] = []
        """The rows :meth:`apply` changed, in order: entry ``i`` is change number
        ``_changed_base + i`` (older ones are dropped, see :meth:`kept_column`)."""
        self._changed_base = 0
        self._kept: OrderedDict[Hashable, tuple[npt.NDArray[Any] | None, int]] = OrderedDict()
        for row, info in enumerate(infos):
            allocatable = node_allocatable(info.node)
            self._set(self.alloc_cpu, row, allocatable.milli_cpu)
            self._set(self.alloc_memory, row, allocatable.memory)
            self._set(self.alloc_ephemeral, row, allocatable.ephemeral_storage)
            self._set(self.allowed_pods, row, allocatable.allowed_pod_number)
            for pod in info.pods:
                self.apply(row, pod, 1)
        self._changed.clear()

    def _set(self, column: IntArray, row: int, value: int) -> None:
        if abs(value) >= _LIMIT:
            self.exact = False
            value = 0
        column[row] = value

    def apply(self, row: int, pod: Pod, delta: int) -> None:
        """Count (``delta`` 1) or uncount (-1) one pod on the node at ``row``."""
        res = pod_resource(pod, pod_level_resources=self.pod_level_resources)
        r = res.resource
        for column, value in (
            (self.req_cpu, r.milli_cpu),
            (self.req_memory, r.memory),
            (self.req_ephemeral, r.ephemeral_storage),
            (self.non_zero_cpu, res.non0_cpu),
            (self.non_zero_memory, res.non0_mem),
        ):
            if value:
                self._set(column, row, int(column[row]) + delta * value)
        self.pod_count[row] += delta
        for name, value in r.scalar_resources.items():
            scalar = self._req_scalar.get(name)
            if scalar is not None and value:
                self._set(scalar, row, int(scalar[row]) + delta * value)
        changed = self._changed
        changed.append(row)
        if len(changed) > max(4096, 2 * len(self.pod_count)):
            # The log stays bounded: a kept column that has not caught up by now is
            # computed afresh on its next use.
            self._changed_base += len(changed)
            changed.clear()

    def kept_column(
        self,
        key: Hashable,
        compute: Callable[[IntArray], npt.NDArray[Any] | None],
        compute_row: Callable[[int], Any],
    ) -> npt.NDArray[Any] | None:
        """``compute(rows)`` over every row, memoised under ``key`` and kept current:
        the rows whose usage changed since the last call are computed again, by
        ``compute_row(row)`` when they are few. Read-only. None when ``compute`` returns
        None (it cannot answer in bulk): remembered, as such a refusal comes from the node
        objects or the key, until this table is replaced.

        CAVEAT: both functions must depend only on what ``key`` determines, the node
        objects (a node change builds a new table) and the node's pods as counted here
        (every pod change reaches :meth:`apply`); ``compute_row`` must give what
        ``compute`` gives for that row. Reusing the answer across cycles is then exact:
        the replicas of one Deployment, the same requests cycle after cycle, recompute
        only the node the last one went to.
        """
        end = self._changed_base + len(self._changed)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is None:
            return None
        if kept is not None and kept[1] >= self._changed_base:
            column, seen = kept
            assert column is not None
            if seen < end:
                dirty = sorted(set(self._changed[seen - self._changed_base :]))
                if len(dirty) <= _FEW_ROWS:
                    for row in dirty:
                        column[row] = compute_row(row)
                else:
                    rows: IntArray = np.array(dirty, np.int64)
                    values = compute(rows)
                    if values is None:
                        self._kept[key] = (None, end)
                        return None
                    column[rows] = values
                self._kept[key] = (column, end)
            self._kept.move_to_end(key)
            return column
        fresh = compute(np.arange(len(self._table.node_infos), dtype=np.int64))
        self._kept[key] = (fresh, end)
        self._kept.move_to_end(key)
        if len(self._kept) > _MAX_KEPT_COLUMNS:
            self._kept.popitem(last=False)
        return fresh

    def allocatable_scalar(self, name: str) -> IntArray:
        """Allocatable of a scalar resource (extended, hugepages, ...) per node; 0 if absent."""
        column = self._alloc_scalar.get(name)
        if column is None:
            column = np.zeros(len(self._table.node_infos), np.int64)
            for row, info in enumerate(self._table.node_infos):
                self._set(column, row, node_allocatable(info.node).scalar(name))
            self._alloc_scalar[name] = column
        return column

    def requested_scalar(self, name: str) -> IntArray:
        """What the pods of each node request of a scalar resource."""
        column = self._req_scalar.get(name)
        if column is None:
            column = np.zeros(len(self._table.node_infos), np.int64)
            for row, info in enumerate(self._table.node_infos):
                total = 0
                for pod in info.pods:
                    total += pod_resource(
                        pod, pod_level_resources=self.pod_level_resources
                    ).resource.scalar(name)
                self._set(column, row, total)
            self._req_scalar[name] = column
        return column


class DomainColumn:
    """Each node's value of one label as a code: ``codes[row]`` indexes ``values``, -1
    when the node lacks the label. Codes follow first appearance in node order."""

    __slots__ = ("code_of", "codes", "values")

    def __init__(self, infos: Sequence[NodeInfo], key: str) -> None:
        self.code_of: dict[str, int] = {}
        codes = np.empty(len(infos), np.int64)
        code_of = self.code_of
        for row, info in enumerate(infos):
            value = info.node.metadata.labels.get(key)
            if value is None:
                codes[row] = -1
                continue
            code = code_of.get(value)
            if code is None:
                code = code_of[value] = len(code_of)
            codes[row] = code
        self.codes: IntArray = codes
        self.values: list[str] = list(code_of)


class NodeTable:
    """Columns over a snapshot's nodes (see the module docstring)."""

    __slots__ = (
        "_domains",
        "_node_columns",
        "_pending",
        "_usage",
        "node_info_array",
        "node_infos",
        "node_names",
        "row_of",
    )

    def __init__(self, node_infos: Sequence[NodeInfo]) -> None:
        self.node_infos: tuple[NodeInfo, ...] = tuple(node_infos)
        """The snapshot's nodes, in its order; row ``i`` is ``node_infos[i]``."""
        # Object arrays: picking a few hundred rows out of them is one array call, where
        # a Python loop over the rows costs several times more.
        self.node_info_array: npt.NDArray[np.object_] = np.empty(len(self.node_infos), object)
        """``node_infos`` as an object array."""
        self.node_info_array[:] = self.node_infos
        self.node_names: npt.NDArray[np.object_] = np.array(
            [info.name for info in self.node_infos], object
        )
        """Each row's node name, as an object array."""
        self.row_of: dict[str, int] = {info.name: row for row, info in enumerate(node_infos)}
        """Node name -> row."""
        self._usage: dict[bool, UsageColumns] = {}
        self._domains: dict[str, DomainColumn] = {}
        self._node_columns: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: list[tuple[str, Pod, int]] = []

    def __len__(self) -> int:
        return len(self.node_infos)

    def pod_changed(self, node_name: str, pod: Pod, delta: int) -> None:
        """Record a pod added (1) to or removed (-1) from a node; applied on next use."""
        if self._usage:
            self._pending.append((node_name, pod, delta))

    def usage(self, pod_level_resources: bool) -> UsageColumns:
        """The resource columns, current with every pod change so far."""
        if self._pending:
            pending, self._pending = self._pending, []
            for name, pod, delta in pending:
                row = self.row_of.get(name)
                if row is None:
                    continue
                for kept in self._usage.values():
                    kept.apply(row, pod, delta)
        columns = self._usage.get(pod_level_resources)
        if columns is None:
            columns = self._usage[pod_level_resources] = UsageColumns(self, pod_level_resources)
        return columns

    def domains(self, key: str) -> DomainColumn:
        """Each node's domain of topology key ``key``."""
        column = self._domains.get(key)
        if column is None:
            column = self._domains[key] = DomainColumn(self.node_infos, key)
        return column

    def node_column(self, key: Hashable, compute: Callable[[NodeInfo], Any], dtype: Any) -> Any:
        """``compute(node)`` for every node as an array, memoised under ``key``.

        ``compute`` must depend only on the node object (labels, taints, images, ...) and
        on what ``key`` determines: the memo lives until a node is added, removed or
        changed."""
        column = self._node_columns.get(key)
        if column is not None:
            self._node_columns.move_to_end(key)
            return column
        column = np.fromiter((compute(info) for info in self.node_infos), dtype, len(self))
        self._node_columns[key] = column
        if len(self._node_columns) > _MAX_NODE_COLUMNS:
            self._node_columns.popitem(last=False)
        return column
