"""``RatioSpread``: a workload's pods in set ratios over the values of a node label.

For a pod of policy ``P`` (ratios ``w_v`` over the values ``v`` of ``P.topologyKey``,
``W = Σ w_v``) whose group already has ``c_v`` pods on nodes with value ``v`` and
``N = Σ c_v`` in all, placing the pod on a node of value ``v`` leaves that value
``excess_v = c_v + 1 - w_v (N + 1) / W`` pods over its exact share.

* **PreFilter** counts the group per value over every node of the snapshot (terminating
  pods and pods on nodes without one of the values are not counted) and keeps the counts
  in the cycle state; AddPod/RemovePod keep them right for nominated pods and preemption.
  A pod without the policy label is not this plugin's: Skip. A pod naming a policy the
  args do not define is refused (UnschedulableAndUnresolvable).
* **Filter** (``DoNotSchedule``) refuses a node without one of the policy's values
  (UnschedulableAndUnresolvable: no pod of the group can change that) and a node whose
  value would be over its share by more than ``maxSkew`` pods, ``excess_v > maxSkew``
  (Unschedulable: a group pod leaving can change it). With ``maxSkew: 1`` a value is never
  more than one pod over its share; a larger ``maxSkew`` lets the pods keep scheduling
  while one value's nodes are full, at the cost of the ratio. ``ScheduleAnyway`` policies
  are not filtered (PreFilter returns Skip).
* **Score** prefers the value furthest under its share: the raw score is
  ``-excess_v`` scaled by ``W`` (integers), NormalizeScore maps the scored nodes' range
  onto 0..100 (all 100 when they are equal), nodes without one of the values score 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Handle,
    NodeScore,
    PreFilterExtensions,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.runtime import PluginFactoryWithArgs
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod

from topospread_ratio_spread.args import (
    DO_NOT_SCHEDULE,
    Policy,
    RatioSpreadArgs,
    decode_args,
)

__all__ = ["NAME", "RatioSpread", "factory", "new"]

NAME: Final = "RatioSpread"
_STATE_KEY: Final = "PreFilter" + NAME

ERR_NO_VALUE: Final = "node(s) didn't have a value of the pod's ratio policy"
ERR_OVER_SHARE: Final = "node(s) would put the pod's ratio policy over its share"


@dataclass(slots=True)
class _Group:
    """The pod's policy, its group's selector and the group's counts per value."""

    policy: Policy
    namespace: str
    selector: Mapping[str, str]
    """Labels a pod of the group has: the policy label and the matchLabelKeys' values."""
    counts: dict[str, int] = field(default_factory=dict)

    def clone(self) -> _Group:
        return _Group(self.policy, self.namespace, self.selector, dict(self.counts))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def matches(self, pod: Pod) -> bool:
        meta = pod.metadata
        if meta.namespace != self.namespace or meta.deletion_timestamp is not None:
            return False
        labels = meta.labels
        return all(labels.get(k) == v for k, v in self.selector.items())

    def value(self, node_info: NodeInfo) -> str | None:
        """The node's value of the policy's label, None unless the policy names it."""
        value = node_info.node.labels.get(self.policy.topology_key)
        return value if value is not None and self.policy.weight(value) is not None else None

    def excess(self, value: str) -> tuple[int, int]:
        """``excess_v`` after placing the pod, as (numerator, denominator ``W``)."""
        total_weight = self.policy.total_weight
        weight = self.policy.weight(value) or 0
        numerator = (self.counts.get(value, 0) + 1) * total_weight - weight * (self.total + 1)
        return numerator, total_weight


class RatioSpread:
    """The plugin; one instance per profile, built by :func:`new` from its args."""

    def __init__(self, args: RatioSpreadArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    @property
    def name(self) -> str:
        return NAME

    # -- the group ---------------------------------------------------------------------

    def _group(self, pod: Pod) -> _Group | Status | None:
        """The pod's group with empty counts; None when the pod follows no policy; a
        refusing status when it names a policy the args do not define."""
        labels = pod.metadata.labels
        name = labels.get(self.args.policy_label)
        if name is None:
            return None
        policy = self.args.policy(name)
        if policy is None:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f'pod names ratio policy "{name}", which {NAME} does not define',),
            )
        selector = {self.args.policy_label: name}
        # As matchLabelKeys of a spread constraint: a key the pod lacks is ignored.
        selector.update((k, labels[k]) for k in policy.match_label_keys if k in labels)
        return _Group(policy, pod.metadata.namespace, selector)

    def _counted(self, group: _Group, nodes: Iterable[NodeInfo]) -> _Group:
        counts: dict[str, int] = {}
        for info in nodes:
            value = group.value(info)
            if value is None:
                continue
            n = sum(1 for p in info.pods_in_namespace(group.namespace) if group.matches(p))
            if n:
                counts[value] = counts.get(value, 0) + n
        group.counts = counts
        return group

    # -- PreFilter / Filter --------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        group = self._group(pod)
        if group is None:
            return None, Status(Code.SKIP)
        if isinstance(group, Status):
            return None, group
        if group.policy.when_unsatisfiable != DO_NOT_SCHEDULE:
            return None, Status(Code.SKIP)
        state.write(_STATE_KEY, self._counted(group, nodes))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        try:
            group = state.read(_STATE_KEY, _Group)
        except StateNotFoundError as exc:
            return Status(Code.ERROR, (str(exc),))
        value = group.value(node_info)
        if value is not None and group.matches(pod):
            group.counts[value] = group.counts.get(value, 0) + delta
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            group = state.read(_STATE_KEY, _Group)
        except StateNotFoundError as exc:
            return Status(Code.ERROR, (str(exc),))
        value = group.value(node_info)
        if value is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VALUE,))
        numerator, denominator = group.excess(value)
        if numerator > group.policy.max_skew * denominator:
            return Status(Code.UNSCHEDULABLE, (ERR_OVER_SHARE,))
        return None

    # -- PreScore / Score ----------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        try:
            # PreFilter's counts, AddPod/RemovePod included, when it ran (DoNotSchedule).
            group: _Group | Status | None = state.read(_STATE_KEY, _Group).clone()
        except StateNotFoundError:
            group = self._group(pod)
            if isinstance(group, _Group):
                # The shares are over the whole cluster, not only the feasible nodes.
                group = self._counted(group, self.handle.snapshot.node_infos)
        if not isinstance(group, _Group):
            return Status(Code.SKIP)
        state.write(_STATE_KEY + "/score", group)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            group = state.read(_STATE_KEY + "/score", _Group)
        except StateNotFoundError as exc:
            return 0, Status(Code.ERROR, (str(exc),))
        value = group.value(node_info)
        if value is None:
            return _UNSCORED, None
        numerator, _ = group.excess(value)
        return -numerator, None

    def score_extensions(self) -> RatioSpread:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        scored = [s.score for s in scores if s.score != _UNSCORED]
        if not scored:
            for s in scores:
                s.score = MIN_NODE_SCORE
            return None
        low, high = min(scored), max(scored)
        for s in scores:
            if s.score == _UNSCORED:
                s.score = MIN_NODE_SCORE
            elif high == low:
                s.score = MAX_NODE_SCORE
            else:
                s.score = (s.score - low) * MAX_NODE_SCORE // (high - low)
        return None


_UNSCORED: Final = -(2**62)
"""The raw score of a node without one of the policy's values: below any real one."""


def new(args: Any, handle: Handle, features: Features) -> RatioSpread:
    """Build the plugin from decoded args (the factory's ``new``)."""
    if not isinstance(args, RatioSpreadArgs):
        raise ConfigError(
            NAME, [f"want args to be of type RatioSpreadArgs, got {type(args).__name__}"]
        )
    return RatioSpread(args, handle)


factory: Final = PluginFactoryWithArgs(new=new, decode_args=decode_args)
"""What the ``topospread.plugins`` entry point names: the factory, with the args decoder."""
