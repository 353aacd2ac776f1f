"""The framework runtime: builds a profile's plugins and runs the extension points.

Mirrors ``pkg/scheduler/framework/runtime`` for what one scheduling attempt needs:
multiPoint expansion and score weights as ``NewFramework`` computes them, then
PreFilter → Filter → PreScore → Score → NormalizeScore → weights, with upstream's
status semantics (first rejecting Filter wins, PreFilter/PreScore Skip disables the
plugin's Filter/Score for the cycle, Error aborts).

Plugins that exist upstream but are not implemented here are recorded in
:attr:`Framework.unimplemented`, per extension point, so callers can say so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from topospread.errors import ConfigError, FieldError
from topospread.framework.config.args import ArgsDecoder, ArgsError
from topospread.framework.config.types import IN_TREE_PLUGINS, Plugins, PluginSet, Profile
from topospread.framework.cycle_state import CycleState
from topospread.framework.events import ClusterEventWithHint, unroll_wildcard_resource
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    AsyncBindPlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    NodeToStatus,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, IntArray, NodeTable
from topospread.framework.status import Code, Status, as_status, is_success
from topospread.framework.waiting import WaitingPod
from topospread.model.objects import Pod

__all__ = [
    "EXTENSION_POINTS",
    "BatchScores",
    "Framework",
    "NodePluginScores",
    "PluginFactory",
    "PluginFactoryWithArgs",
    "PreFilterOutcome",
]

PluginFactory = Callable[[object | None, Handle, Features], Plugin]
"""Builds a plugin from its (decoded, defaulted, validated) args."""


@dataclass(frozen=True, slots=True)
class PluginFactoryWithArgs:
    """A plugin factory that decodes its own ``pluginConfig`` args: what a plugin from
    another distribution registers (kube-scheduler: a factory plus an args kind in the
    scheme). ``decode_configuration`` calls :attr:`decode_args` when it is given the
    registry's decoders; args that reach the factory undecoded (a mapping, from a caller
    that decoded without them) are decoded here, so the plugin always gets typed args."""

    new: Callable[[Any, Handle, Features], Plugin]
    """Builds the plugin from its typed args (``decode_args({})`` when none were given)."""
    decode_args: ArgsDecoder
    """Decodes, defaults and validates the args strictly (:mod:`.config.args`)."""

    def __call__(self, args: object | None, handle: Handle, features: Features) -> Plugin:
        if args is None or isinstance(args, Mapping):
            try:
                args = self.decode_args(args or {})
            except ArgsError as exc:
                raise ConfigError("", [*exc.unknown_messages(), *exc.errors]) from None
        return self.new(args, handle, features)


EXTENSION_POINTS: tuple[str, ...] = (
    "pre_filter",
    "filter",
    "post_filter",
    "reserve",
    "pre_score",
    "score",
    "pre_bind",
    "bind",
    "post_bind",
    "permit",
    "pre_enqueue",
    "queue_sort",
)
"""Extension points in the order upstream's getExtensionPoints lists them."""

_RUNNABLE: Mapping[str, type] = {
    "pre_filter": PreFilterPlugin,
    "filter": FilterPlugin,
    "post_filter": PostFilterPlugin,
    "pre_score": PreScorePlugin,
    "score": ScorePlugin,
}

_BINDING_CYCLE: Mapping[str, type] = {
    "pre_enqueue": PreEnqueuePlugin,
    "queue_sort": QueueSortPlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "pre_bind": PreBindPlugin,
    "bind": BindPlugin,
    "post_bind": PostBindPlugin,
}
"""The queue's and the binding cycle's points: run where a plugin implements them; an
upstream plugin enabled there that topospread's does not implement (DefaultPreemption's
PreEnqueue, which waits for an async preemption that topospread finishes within its
cycle) is not reported as unimplemented, since no verdict depends on it."""


@dataclass(frozen=True, slots=True)
class PreFilterOutcome:
    """What RunPreFilterPlugins returns: narrowing, status, and the narrowing plugins."""

    result: PreFilterResult | None
    status: Status | None
    plugins_with_nodes: frozenset[str] = frozenset()


@dataclass(slots=True)
class NodePluginScores:
    """Per node: each score plugin's normalized score (before weight) and the weighted total."""

    name: str
    scores: dict[str, int] = field(default_factory=dict)
    """Plugin name -> normalized score in 0..100."""
    total_score: int = 0
    """Σ normalized × weight."""


@dataclass(slots=True)
class BatchScores:
    """Scores of many nodes at once: per plugin the normalized scores (before weight)
    and the weighted totals, each an array aligned with the scored rows."""

    rows: IntArray
    by_plugin: dict[str, IntArray]
    totals: IntArray


def _enabled_names(plugin_set: PluginSet) -> list[str]:
    return [ref.name for ref in plugin_set.enabled]


class Framework:
    """One profile's plugins, ready to run scheduling cycles."""

    nominated_pods_for_node: Callable[[str], Sequence[Pod]] | None = None
    """The pod nominator (``NominatedPodsForNode``): node name -> the pending pods nominated
    to it by preemption. None (the default, as for ``explain``): there are none."""

    def __init__(
        self,
        profile: Profile,
        registry: Mapping[str, PluginFactory],
        handle: Handle,
        features: Features = Features(),
        *,
        source: str = "",
    ) -> None:
        self.profile = profile
        self.handle = handle
        self.unimplemented: dict[str, list[str]] = {}
        """Extension point -> upstream plugins enabled there that topospread does not run."""
        plugins = profile.plugins
        needed: list[str] = []
        for point in (*EXTENSION_POINTS, "multi_point"):
            for name in _enabled_names(getattr(plugins, point)):
                if name not in needed:
                    needed.append(name)
        self._instances: dict[str, Plugin] = {}
        errors: list[FieldError | str] = []
        for name in needed:
            factory = registry.get(name)
            if factory is None:
                if name not in IN_TREE_PLUGINS:
                    errors.append(
                        f'profile "{profile.scheduler_name}": plugin "{name}" does not exist'
                    )
                continue
            try:
                self._instances[name] = factory(profile.plugin_config.get(name), handle, features)
            except ConfigError:
                raise
            except Exception as exc:
                # An out-of-tree factory that raises: NewFramework's "initializing plugin"
                # error, in one line rather than a traceback.
                errors.append(
                    f'profile "{profile.scheduler_name}": initializing plugin "{name}": '
                    f"{type(exc).__name__}: {exc}"
                )
        if errors:
            raise ConfigError(source, errors)
        for instance in self._instances.values():
            # Upstream's handle is the framework itself; plugins that run other plugins
            # (DefaultPreemption: AddPod/RemovePod and Filter) are given it here.
            bind = getattr(instance, "bind_framework", None)
            if callable(bind):
                bind(self)

        self._points: dict[str, list[str]] = {
            point: self._expand(plugins, point) for point in EXTENSION_POINTS
        }
        self.pre_filter_plugins: list[PreFilterPlugin] = self._runnable("pre_filter")
        self.filter_plugins: list[FilterPlugin] = self._runnable("filter")
        self.post_filter_plugins: list[PostFilterPlugin] = self._runnable("post_filter")
        self.pre_score_plugins: list[PreScorePlugin] = self._runnable("pre_score")
        self.score_plugins: list[ScorePlugin] = self._runnable("score")
        self.score_weights: dict[str, int] = self._score_weights(plugins)
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = self._binding_cycle("pre_enqueue")
        queue_sort: list[QueueSortPlugin] = self._binding_cycle("queue_sort")
        self.queue_sort_plugin: QueueSortPlugin | None = queue_sort[0] if queue_sort else None
        """The profile's QueueSort (validation allows exactly one)."""
        self.reserve_plugins: list[ReservePlugin] = self._binding_cycle("reserve")
        self.permit_plugins: list[PermitPlugin] = self._binding_cycle("permit")
        self.pre_bind_plugins: list[PreBindPlugin] = self._binding_cycle("pre_bind")
        self.bind_plugins: list[BindPlugin] = self._binding_cycle("bind")
        self.post_bind_plugins: list[PostBindPlugin] = self._binding_cycle("post_bind")
        pre_flights = [p for p in self.pre_bind_plugins if isinstance(p, PreBindPreFlightPlugin)]
        self._pre_flights: list[PreBindPreFlightPlugin] | None = (
            pre_flights if len(pre_flights) == len(self.pre_bind_plugins) else None
        )
        """Every PreBind plugin's pre-flight, or None when one has none (it may have work)."""
        first_binder = self.bind_plugins[0] if self.bind_plugins else None
        self._async_binder: AsyncBindPlugin | None = (
            first_binder
            if isinstance(first_binder, AsyncBindPlugin) and first_binder.binds_async
            else None
        )
        self._filters_for_skip: tuple[frozenset[str], list[FilterPlugin]] | None = None
        self.batch_enabled = True
        """Whether cycles with a node search may use the plugins' batch extensions;
        tests switch it off to compare with the per-node path. Not a user option."""
        self.nominated_node_names: Callable[[], Iterable[str]] | None = None
        """The nodes that have nominated pods (set with ``nominated_pods_for_node``): the
        bulk search re-checks exactly these with :meth:`run_filter_plugins_with_nominated_pods`."""

    # -- construction --------------------------------------------------------------

    def _implements(self, name: str, point: str) -> bool:
        # What upstream's plugin implements decides the expansion, so that a plugin
        # topospread implements only partly is still reported where it is missing.
        if name in IN_TREE_PLUGINS:
            return point in IN_TREE_PLUGINS[name]
        instance = self._instances.get(name)
        protocol = _RUNNABLE.get(point) or _BINDING_CYCLE.get(point)
        return instance is not None and protocol is not None and isinstance(instance, protocol)

    def _expand(self, plugins: Plugins, point: str) -> list[str]:
        # expandMultiPointPlugins: explicitly configured plugins that are also in
        # multiPoint come first (in the explicit order), then multiPoint plugins, then
        # the rest of the explicit list.
        plugin_set: PluginSet = getattr(plugins, point)
        enabled = _enabled_names(plugin_set)
        disabled = {ref.name for ref in plugin_set.disabled}
        if "*" in disabled or not plugins.multi_point.enabled:
            return enabled
        multi: list[str] = []
        overrides: list[str] = []
        for name in _enabled_names(plugins.multi_point):
            if not self._implements(name, point) or name in disabled:
                continue
            if name in enabled:
                overrides.append(name)
                continue
            if name not in multi:
                multi.append(name)
        ordered = [n for n in enabled if n in overrides]
        ordered += multi
        ordered += [n for n in enabled if n not in overrides]
        return ordered

    def _runnable(self, point: str) -> list[Any]:
        runnable = []
        protocol = _RUNNABLE[point]
        for name in self._points[point]:
            instance = self._instances.get(name)
            if instance is None or not isinstance(instance, protocol):
                self.unimplemented.setdefault(point, []).append(name)
                continue
            runnable.append(instance)
        return runnable

    def _binding_cycle(self, point: str) -> list[Any]:
        protocol = _BINDING_CYCLE[point]
        return [
            instance
            for name in self._points[point]
            if isinstance(instance := self._instances.get(name), protocol)
        ]

    def _score_weights(self, plugins: Plugins) -> dict[str, int]:
        # getValidScoreWeights: the Score list's weight wins over multiPoint's; 0 means 1.
        weights: dict[str, int] = {}
        for ref in (*plugins.score.enabled, *plugins.multi_point.enabled):
            if ref.name in weights or not self._implements(ref.name, "score"):
                continue
            weights[ref.name] = ref.weight or 1
        return weights

    def plugins_at(self, point: str) -> list[str]:
        """Names enabled at an extension point after multiPoint expansion, in run order."""
        return list(self._points[point])

    def plugin(self, name: str) -> Plugin | None:
        """The plugin instance with this name, if it runs in this profile."""
        return self._instances.get(name)

    def enqueue_extensions(self) -> list[tuple[str, tuple[ClusterEventWithHint, ...]]]:
        """Each rejecting plugin's requeue events (``fillEnqueueExtensions``), in order.

        As upstream, only plugins that can reject a pod take part (topospread runs
        PreFilter and Filter; a plugin declaring ``events_to_register`` without them, such
        as DefaultPreemption for its PreEnqueue, takes part too); one that does not declare
        its events is registered for every event (``defaultEnqueueExtension``:
        :func:`~topospread.framework.events.unroll_wildcard_resource`).
        """
        names = [*self._points["pre_filter"], *self._points["filter"], *self._instances]
        extensions: list[tuple[str, tuple[ClusterEventWithHint, ...]]] = []
        seen: set[str] = set()
        for name in names:
            instance = self._instances.get(name)
            if instance is None or name in seen:
                continue
            seen.add(name)
            if isinstance(instance, EnqueueExtensions):
                extensions.append((name, tuple(instance.events_to_register())))
            elif isinstance(instance, (PreFilterPlugin, FilterPlugin)):
                extensions.append((name, unroll_wildcard_resource()))
        return extensions

    # -- running -------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        """Run every PreFilter (``RunPreFilterPlugins``) and record the skipped plugins."""
        nodes = self.handle.snapshot.node_infos
        skipped: set[str] = set()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        return_status: Status | None = None
        try:
            for plugin in self.pre_filter_plugins:
                plugin_result, status = plugin.pre_filter(state, pod, nodes)
                if status is not None and status.is_skip:
                    skipped.add(plugin.name)
                    continue
                if not is_success(status):
                    assert status is not None
                    status = status.with_plugin(plugin.name)
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return PreFilterOutcome(None, status)
                    if status.code is Code.UNSCHEDULABLE:
                        return_status = status
                        continue
                    return PreFilterOutcome(
                        None,
                        Status(
                            Code.ERROR,
                            (f'running PreFilter plugin "{plugin.name}": {status.message}',),
                            plugin.name,
                        ),
                    )
                if plugin_result is not None and not plugin_result.all_nodes():
                    with_nodes.append(plugin.name)
                result = plugin_result if result is None else result.merge(plugin_result)
                if result is not None and result.node_names is not None and not result.node_names:
                    names = sorted(set(with_nodes))
                    if len(names) == 1:
                        message = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        message = (
                            f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                        )
                    return PreFilterOutcome(
                        result,
                        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,)),
                        frozenset(names),
                    )
            return PreFilterOutcome(result, return_status, frozenset(with_nodes))
        finally:
            state.skip_filter_plugins = frozenset(skipped)

    def _active_filters(self, skip: frozenset[str]) -> list[FilterPlugin]:
        # The Filters not skipped this cycle, worked out once per distinct skip set
        # rather than per node.
        cached = self._filters_for_skip
        if cached is not None and cached[0] == skip:
            return cached[1]
        active = [p for p in self.filter_plugins if p.name not in skip]
        self._filters_for_skip = (skip, active)
        return active

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Run the Filters on one node; the first non-success status wins (``RunFilterPlugins``)."""
        for plugin in self._active_filters(state.skip_filter_plugins):
            status = plugin.filter(state, pod, node_info)
            if status is not None and status.code is not Code.SUCCESS:
                if not status.is_rejected:
                    status = Status(
                        Code.ERROR, (f'running "{plugin.name}" filter plugin: {status.message}',)
                    )
                return status.with_plugin(plugin.name)
        return None

    def run_filter_plugins_batch(self, state: CycleState, pod: Pod) -> BoolArray | None:
        """Every node's Filter verdict at once (True = feasible), or None when some active
        Filter declines to answer in bulk this cycle (then the per-node path runs)."""
        table = self.handle.snapshot.table()
        mask: BoolArray | None = None
        for plugin in self._active_filters(state.skip_filter_plugins):
            batch = getattr(plugin, "filter_batch", None)
            if batch is None:
                return None
            verdicts: BoolArray | None = batch(state, pod, table)
            if verdicts is None:
                return None
            mask = verdicts.copy() if mask is None else np.logical_and(mask, verdicts, out=mask)
        return mask if mask is not None else np.ones(len(table), np.bool_)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """AddPod of every PreFilter plugin not skipped (``RunPreFilterExtensionAddPod``)."""
        for plugin in self.pre_filter_plugins:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name in state.skip_filter_plugins:
                continue
            status = extensions.add_pod(state, pod_to_schedule, pod_to_add, node_info)
            if not is_success(status):
                assert status is not None
                return as_status(
                    f'running AddPod on PreFilter plugin "{plugin.name}": {status.message}'
                )
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """RemovePod of every PreFilter plugin not skipped (``RunPreFilterExtensionRemovePod``)."""
        for plugin in self.pre_filter_plugins:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name in state.skip_filter_plugins:
                continue
            status = extensions.remove_pod(state, pod_to_schedule, pod_to_remove, node_info)
            if not is_success(status):
                assert status is not None
                return as_status(
                    f'running RemovePod on PreFilter plugin "{plugin.name}": {status.message}'
                )
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """The Filters with the node's nominated pods (``RunFilterPluginsWithNominatedPods``).

        ``addGENominatedPods``: the pods :attr:`nominated_pods_for_node` names for this
        node with a priority at least the pod's (not the pod itself) are added to a clone
        of the NodeInfo and, through AddPod, of the cycle state — the pod must not take
        room opened for them. If any were added and the Filters pass with them, the
        Filters run again without them (a nominated pod may yet land elsewhere, and some
        Filters, like pod affinity, pass only with it). Without nominated pods this is
        :meth:`run_filter_plugins`. A failing AddPod is an Error.
        """
        nominator = self.nominated_pods_for_node
        if nominator is None:
            return self.run_filter_plugins(state, pod, node_info)
        nominated = nominator(node_info.name)
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        priority = pod.priority or 0  # corev1helpers.PodPriority
        state_out: CycleState | None = None
        info_out: NodeInfo | None = None
        for other in nominated:
            if (other.priority or 0) < priority or _same_pod(other, pod):
                continue
            if state_out is None or info_out is None:
                state_out, info_out = state.clone(), node_info.clone()
            info_out.add_pod(other)
            status = self.run_pre_filter_extension_add_pod(state_out, pod, other, info_out)
            if status is not None:
                return as_status(status.message)
        if state_out is None or info_out is None:
            return self.run_filter_plugins(state, pod, node_info)
        status = self.run_filter_plugins(state_out, pod, info_out)
        if status is not None:
            return status  # rejected (or an Error) with the nominated pods: no second pass
        return self.run_filter_plugins(state, pod, node_info)

    # -- the queue (framework.go: RunPreEnqueuePlugins, QueueSortFunc) -----------------

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status:
        """``RunPreEnqueuePlugins``: each PreEnqueue in order until one fails; a rejection
        keeps its code (attributed to the plugin), an error is wrapped as upstream's
        ``running PreEnqueue plugin "NAME": ...``."""
        for plugin in self.pre_enqueue_plugins:
            status = plugin.pre_enqueue(pod)
            if is_success(status):
                continue
            assert status is not None
            if status.is_rejected:
                return status.with_plugin(plugin.name)
            return _wrapped("PreEnqueue", plugin.name, status)
        return Status(Code.SUCCESS)

    # -- the binding cycle (framework.go: RunReservePlugins*, RunPermitPlugins, ...) ----

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """``RunReservePluginsReserve``: each Reserve in order until one fails; a rejection
        keeps its code (attributed to the plugin), an error is wrapped as upstream's
        ``running Reserve plugin "NAME": ...``. The caller runs Unreserve on failure."""
        for plugin in self.reserve_plugins:
            status = plugin.reserve(state, pod, node_name)
            if is_success(status):
                continue
            assert status is not None
            if status.is_rejected:
                return status.with_plugin(plugin.name)
            return _wrapped("Reserve", plugin.name, status)
        return Status(Code.SUCCESS)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``RunReservePluginsUnreserve``: every Unreserve, in the reverse order of Reserve."""
        for plugin in reversed(self.reserve_plugins):
            plugin.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """``RunPermitPlugins``: a rejection keeps its code (attributed to the plugin), an
        error becomes ``running Permit plugin ...``; when plugins ask to wait and none
        rejects, the pod joins ``Handle.waiting_pods`` with each plugin's timeout (at most
        15 min) and the status is Wait (the binding cycle then waits on it)."""
        waits: dict[str, float] = {}
        for plugin in self.permit_plugins:
            status, timeout = plugin.permit(state, pod, node_name)
            if is_success(status):
                continue
            assert status is not None
            if status.is_rejected:
                return status.with_plugin(plugin.name)
            if status.code is Code.WAIT and self.handle.waiting_pods is not None:
                waits[plugin.name] = timeout
                continue
            if status.code is Code.WAIT:
                status = as_status("waiting on permit needs a binding cycle (none runs here)")
            return _wrapped("Permit", plugin.name, status).with_plugin(plugin.name)
        if waits and self.handle.waiting_pods is not None:
            self.handle.waiting_pods.add(WaitingPod(pod, waits))
            message = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            return Status(Code.WAIT, (message,))
        return Status(Code.SUCCESS)

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """``RunPreBindPlugins``: each PreBind in order until one fails (a Skip counts as
        success); errors are wrapped as ``running PreBind plugin "NAME": ...``."""
        for plugin in self.pre_bind_plugins:
            status = plugin.pre_bind(state, pod, node_name)
            if is_success(status) or (status is not None and status.is_skip):
                continue
            assert status is not None
            if status.is_rejected:
                return status.with_plugin(plugin.name)
            return _wrapped("PreBind", plugin.name, status)
        return Status(Code.SUCCESS)

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """``RunPreBindPreFlights``: Skip when every PreBind plugin says its PreBind has
        nothing to do for the pod (then PreBind need not run); Success when one may have
        work (a plugin without ``pre_bind_pre_flight`` may); an error as upstream wraps
        it."""
        if self._pre_flights is None:
            return Status(Code.SUCCESS)
        for plugin in self._pre_flights:
            status = plugin.pre_bind_pre_flight(state, pod, node_name)
            if status is not None and status.is_skip:
                continue
            if is_success(status):
                return Status(Code.SUCCESS)
            assert status is not None
            return Status(
                Code.ERROR,
                (f'running PreBindPreFlight "{plugin.name}": {status.message}',),
                error=status.error,
            )
        return Status(Code.SKIP)

    @property
    def binds_async(self) -> bool:
        """Whether :meth:`run_bind_plugins_async` can ever bind: its first Bind plugin can
        bind without holding the thread over the binding port it has."""
        return self._async_binder is not None

    def run_bind_plugins_async(
        self,
        state: CycleState,
        pod: Pod,
        node_name: str,
        done: Callable[[Status], None],
    ) -> bool:
        """:meth:`run_bind_plugins` without holding the thread, when the first Bind plugin
        can bind that way now (:class:`AsyncBindPlugin`): ``done`` gets the status
        ``run_bind_plugins`` would return, once, maybe on another thread. False when it
        cannot: the caller runs ``run_bind_plugins``."""
        plugin = self._async_binder
        if plugin is None:
            return False

        def bound(status: Status | None) -> None:
            assert status is None or not status.is_skip
            done(_bind_status(plugin.name, status))

        return plugin.bind_async(state, pod, node_name, bound)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """``RunBindPlugins``: the first plugin that does not Skip binds; Skip when every
        one skipped (or none runs: the caller's own binder, DefaultBinder, binds)."""
        for plugin in self.bind_plugins:
            status = plugin.bind(state, pod, node_name)
            if status is not None and status.is_skip:
                continue
            return _bind_status(plugin.name, status)
        return Status(Code.SKIP)

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``RunPostBindPlugins``."""
        for plugin in self.post_bind_plugins:
            plugin.post_bind(state, pod, node_name)

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Run the PostFilters until one succeeds (``RunPostFilterPlugins``).

        Success or UnschedulableAndUnresolvable ends the run; another non-rejecting code
        becomes an Error; otherwise the last result and every plugin's reasons are kept
        and the status is Unschedulable, attributed to the first rejecting plugin.
        """
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector: str | None = None
        for plugin in self.post_filter_plugins:
            r, status = plugin.post_filter(state, pod, filtered_node_status_map)
            if status is None or status.code is Code.SUCCESS:
                return r, status if status is not None else Status(Code.SUCCESS)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, status.with_plugin(plugin.name)
            if not status.is_rejected:
                return None, as_status(status.message).with_plugin(plugin.name)
            if r is not None:
                result = r
            reasons.extend(status.reasons)
            if rejector is None:
                rejector = plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Run every PreScore and record the skipped plugins (``RunPreScorePlugins``)."""
        skipped: set[str] = set()
        try:
            for plugin in self.pre_score_plugins:
                status = plugin.pre_score(state, pod, nodes)
                if status is not None and status.is_skip:
                    skipped.add(plugin.name)
                    continue
                if not is_success(status):
                    assert status is not None
                    return as_status(f'running PreScore plugin "{plugin.name}": {status.message}')
            return None
        finally:
            state.skip_score_plugins = frozenset(skipped)

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, normalize, check the 0..100 range and weight (``RunScorePlugins``).

        In upstream's three phases (``pkg/scheduler/framework/runtime/framework.go``): every
        node's raw scores, plugin after plugin on each node; then each plugin's
        NormalizeScore; then the range check and weights, node after node. An error ends
        the phase with upstream's wording; of several, the first node's (then the first
        plugin's) is reported, as a sequential run of upstream's parallel loops would.
        """
        plugins = [p for p in self.score_plugins if p.name not in state.skip_score_plugins]
        raw: list[list[NodeScore]] = [[] for _ in plugins]
        for info in nodes:
            for index, plugin in enumerate(plugins):
                value, status = plugin.score(state, pod, info)
                if status is not None and status.code is not Code.SUCCESS:
                    return [], as_status(score_error(plugin.name, status.message))
                raw[index].append(NodeScore(info.name, value))
        for index, plugin in enumerate(plugins):
            extensions = plugin.score_extensions()
            if extensions is None:
                continue
            status = extensions.normalize_score(state, pod, raw[index])
            if not is_success(status):
                assert status is not None
                return [], as_status(normalize_error(plugin.name, status.message))
        results = [NodePluginScores(info.name) for info in nodes]
        weights = [self.score_weights.get(plugin.name, 1) for plugin in plugins]
        for position, entry in enumerate(results):
            for index, plugin in enumerate(plugins):
                value = raw[index][position].score
                if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                    return [], as_status(invalid_score_error(plugin.name, value))
                entry.scores[plugin.name] = value
                entry.total_score += value * weights[index]
        return results, None

    def run_score_plugins_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> tuple[BatchScores | None, Status | None]:
        """:meth:`run_score_plugins` over the nodes at ``rows`` of ``table``, with arrays.

        Plugins with ``score_batch`` / ``normalize_batch`` answer in bulk; the others are
        called per node, exactly as :meth:`run_score_plugins` calls them, and errors are
        reported as it reports them (the first node's, then the first plugin's).
        """
        plugins = [p for p in self.score_plugins if p.name not in state.skip_score_plugins]
        infos = table.node_infos
        raws: list[IntArray] = []
        first_error: tuple[int, int, str] | None = None
        for index, plugin in enumerate(plugins):
            batch = getattr(plugin, "score_batch", None)
            raw: IntArray | None = batch(state, pod, table, rows) if batch is not None else None
            if raw is None:
                values = []
                for position, row in enumerate(rows.tolist()):
                    value, status = plugin.score(state, pod, infos[row])
                    if status is not None and status.code is not Code.SUCCESS:
                        error = (position, index, score_error(plugin.name, status.message))
                        if first_error is None or error[:2] < first_error[:2]:
                            first_error = error
                        break
                    values.append(value)
                raw = np.array(values, np.int64)
            raws.append(raw)
        if first_error is not None:
            return None, as_status(first_error[2])
        for index, plugin in enumerate(plugins):
            extensions = plugin.score_extensions()
            if extensions is None:
                continue
            normalized: IntArray | None = None
            normalize = getattr(extensions, "normalize_batch", None)
            if normalize is not None:
                normalized = normalize(state, pod, table, rows, raws[index])
            if normalized is None:
                entries = [
                    NodeScore(infos[row].name, value)
                    for row, value in zip(rows.tolist(), raws[index].tolist(), strict=True)
                ]
                status = extensions.normalize_score(state, pod, entries)
                if not is_success(status):
                    assert status is not None
                    return None, as_status(normalize_error(plugin.name, status.message))
                normalized = np.array([e.score for e in entries], np.int64)
            raws[index] = normalized
        # One matrix (plugins × nodes): one range check and one weighted sum instead of
        # a few array calls per plugin, which at a few hundred nodes cost more than the
        # arithmetic.
        matrix: IntArray = (
            np.stack(raws).astype(np.int64, copy=False)
            if raws
            else np.zeros((0, len(rows)), np.int64)
        )
        if matrix.size and (
            int(matrix.min()) < MIN_NODE_SCORE or int(matrix.max()) > MAX_NODE_SCORE
        ):
            # Upstream checks node after node, each node's plugins in order: the first
            # node with an out-of-range score, then its first plugin, is reported.
            out = (matrix < MIN_NODE_SCORE) | (matrix > MAX_NODE_SCORE)
            position = int(np.flatnonzero(out.any(axis=0))[0])
            index = int(np.flatnonzero(out[:, position])[0])
            return None, as_status(
                invalid_score_error(plugins[index].name, int(matrix[index, position]))
            )
        weights = np.array([self.score_weights.get(p.name, 1) for p in plugins], np.int64)
        totals: IntArray = weights @ matrix
        by_plugin = {plugin.name: matrix[index] for index, plugin in enumerate(plugins)}
        return BatchScores(rows, by_plugin, totals), None


def _bind_status(plugin: str, status: Status | None) -> Status:
    """``RunBindPlugins``' answer for the Bind plugin that did not Skip: Success, its
    rejection attributed to it, or its error wrapped."""
    if is_success(status):
        return Status(Code.SUCCESS)
    assert status is not None
    if status.is_rejected:
        return status.with_plugin(plugin)
    return _wrapped("Bind", plugin, status)


def _wrapped(point: str, plugin: str, status: Status) -> Status:
    # fwk.AsStatus(fmt.Errorf("running %s plugin %q: %w", ...)): an Error status that
    # still wraps the plugin's error (%w).
    return Status(
        Code.ERROR, (f'running {point} plugin "{plugin}": {status.message}',), error=status.error
    )


def score_error(plugin: str, message: str) -> str:
    """``RunScorePlugins``' error for a Score that failed (``runRawScorePlugins``)."""
    return f'running Score plugins: plugin "{plugin}" failed with: {message}'


def normalize_error(plugin: str, message: str) -> str:
    """``normalizeScores``' error for a NormalizeScore that failed."""
    return f'running Normalize on Score plugins: plugin "{plugin}" failed with: {message}'


def invalid_score_error(plugin: str, value: int) -> str:
    """``normalizeScores``' error for a normalized score outside 0..100."""
    return (
        "applying score defaultWeights on Score plugins: "
        f'plugin "{plugin}" returns an invalid score {value}, '
        f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )


def _same_pod(a: Pod, b: Pod) -> bool:
    # Upstream compares UIDs, which the API server always sets. A cluster holds one pod
    # per namespace/name, so a file that lists the incoming pod with another uid (or none)
    # lists that same pod.
    return a.key == b.key or bool(a.metadata.uid and a.metadata.uid == b.metadata.uid)
