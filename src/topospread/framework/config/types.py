"""The decoded, defaulted ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

These are the values kube-scheduler v1.37.1 works from after decoding a config file,
applying the v1 defaults and validating: one :class:`Profile` per scheduler name, each
with its :class:`Plugins` exactly as ``mergePlugins`` leaves them (default plugins under
``multiPoint``, user settings merged in, *not yet* expanded to extension points — the
framework runtime does that expansion with :data:`IN_TREE_PLUGINS`) and its plugin args.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from topospread.model.objects import NodeAffinity, TopologySpreadConstraint

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "IN_TREE_PLUGINS",
    "KIND",
    "DefaultPreemptionArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesFitArgs",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
    "Profile",
    "RequestedToCapacityRatio",
    "ResourceSpec",
    "SchedulerConfiguration",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
]

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

EXTENSION_POINTS: Final[tuple[str, ...]] = (
    "pre_enqueue",
    "queue_sort",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "post_bind",
    "placement_generate",
    "placement_score",
    "pod_group_post_filter",
)
"""Attribute names of the per-extension-point sets of :class:`Plugins`, in the v1 field
order (``multi_point`` excluded). These are also the values of :data:`IN_TREE_PLUGINS`."""

_FILTERS: Final = frozenset({"pre_filter", "filter"})
_SCORES: Final = frozenset({"pre_score", "score"})

IN_TREE_PLUGINS: Final[Mapping[str, frozenset[str]]] = {
    # pkg/scheduler/framework/plugins/registry.go (NewInTreeRegistry) of v1.37.1; the
    # extension points are the framework interfaces each plugin type implements.
    "DefaultBinder": frozenset({"bind"}),
    "DefaultPreemption": frozenset({"pre_enqueue", "post_filter", "pod_group_post_filter"}),
    "DeferredPodScheduling": _FILTERS | {"permit"},
    "DynamicResources": _FILTERS
    | {"pre_enqueue", "post_filter", "pod_group_post_filter", "score", "reserve", "pre_bind"},
    "GangScheduling": frozenset({"pre_enqueue", "permit"}),
    "ImageLocality": frozenset({"score"}),
    "InterPodAffinity": _FILTERS | _SCORES,
    "NodeAffinity": _FILTERS | _SCORES,
    "NodeDeclaredFeatures": _FILTERS,
    "NodeName": _FILTERS,
    "NodePorts": _FILTERS,
    "NodeResourcesBalancedAllocation": _SCORES,
    "NodeResourcesFit": _FILTERS | _SCORES | {"placement_score"},
    "NodeUnschedulable": _FILTERS,
    "NodeVolumeLimits": _FILTERS,
    "PodGroupPodsCount": frozenset({"placement_score"}),
    "PodTopologySpread": _FILTERS | _SCORES,
    "PrioritySort": frozenset({"queue_sort"}),
    "SchedulingGates": frozenset({"pre_enqueue"}),
    "TaintToleration": _FILTERS | _SCORES,
    "TopologyPlacementGenerator": frozenset({"placement_generate"}),
    "VolumeBinding": _FILTERS | _SCORES | {"reserve", "pre_bind"},
    "VolumeRestrictions": _FILTERS,
    "VolumeZone": _FILTERS,
}
"""Every plugin of the v1.37.1 in-tree registry, with the extension points it implements
(as :data:`EXTENSION_POINTS` names). ``Reserve`` includes ``Unreserve``."""


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named in a plugin set (``v1.Plugin``)."""

    name: str
    """The plugin's registry name, or ``"*"`` in a disabled list for "all defaults"."""
    weight: int | None = None
    """Score weight; ``None`` when not given (the runtime then uses 1 for score plugins)."""


@dataclass(frozen=True, slots=True)
class PluginSet:
    """Enabled and disabled plugins of one extension point (``v1.PluginSet``)."""

    enabled: tuple[PluginRef, ...] = ()
    """Plugins to run, in order: defaults (possibly re-weighted) first, then the user's."""
    disabled: tuple[PluginRef, ...] = ()
    """Default plugins not to run here; weights are dropped, as upstream drops them."""


@dataclass(frozen=True, slots=True)
class Plugins:
    """One :class:`PluginSet` per extension point, as defaulted v1 ``Plugins`` (not expanded)."""

    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    """``preEnqueue``: gate pods before they enter the active queue."""
    queue_sort: PluginSet = field(default_factory=PluginSet)
    """``queueSort``: order the scheduling queue; exactly one may end up enabled."""
    pre_filter: PluginSet = field(default_factory=PluginSet)
    """``preFilter``: per-pod precomputation and early rejection."""
    filter: PluginSet = field(default_factory=PluginSet)
    """``filter``: per-node feasibility."""
    post_filter: PluginSet = field(default_factory=PluginSet)
    """``postFilter``: run when no node fits (preemption)."""
    pre_score: PluginSet = field(default_factory=PluginSet)
    """``preScore``: per-pod precomputation for scoring."""
    score: PluginSet = field(default_factory=PluginSet)
    """``score``: rank feasible nodes; weights apply here."""
    reserve: PluginSet = field(default_factory=PluginSet)
    """``reserve``: reserve resources on the chosen node (and ``Unreserve``)."""
    permit: PluginSet = field(default_factory=PluginSet)
    """``permit``: approve, deny or delay binding."""
    pre_bind: PluginSet = field(default_factory=PluginSet)
    """``preBind``: work before binding (volumes, devices)."""
    bind: PluginSet = field(default_factory=PluginSet)
    """``bind``: bind the pod to the node."""
    post_bind: PluginSet = field(default_factory=PluginSet)
    """``postBind``: informational, after a successful bind."""
    multi_point: PluginSet = field(default_factory=PluginSet)
    """``multiPoint``: plugins enabled at every extension point they implement."""
    placement_generate: PluginSet = field(default_factory=PluginSet)
    """``placementGenerate``: candidate placements of a pod group (workload scheduling)."""
    placement_score: PluginSet = field(default_factory=PluginSet)
    """``placementScore``: rank pod-group placements; weights apply here."""
    pod_group_post_filter: PluginSet = field(default_factory=PluginSet)
    """``podGroupPostFilter``: run when a pod group cannot be scheduled."""


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """``PodTopologySpreadArgs``: the cluster-level default constraints."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    """Constraints for pods that set none; only used with ``defaulting_type="List"``.
    They carry no label selector: the plugin derives one from the pod's owners."""
    defaulting_type: str = "System"
    """``System`` (the default) or ``List``. ``System`` uses the built-in constraints
    (zone skew 5, hostname skew 3, both ScheduleAnyway); ``List`` uses
    :attr:`default_constraints`."""


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """``DefaultPreemptionArgs``: how many nodes the preemption dry run must find.

    The configuration keeps these args in their defaulted v1 form (a dict, validated);
    :meth:`from_v1` reads that form.
    """

    min_candidate_nodes_percentage: int = 10
    """Percentage of the candidate nodes to dry-run at least (0..100)."""
    min_candidate_nodes_absolute: int = 100
    """Candidate nodes to dry-run at least (capped at the number of candidate nodes)."""

    @classmethod
    def from_v1(cls, args: Mapping[str, object]) -> DefaultPreemptionArgs:
        """From the defaulted v1 JSON form (``minCandidateNodesPercentage``, ...)."""
        percentage = args.get("minCandidateNodesPercentage", 10)
        absolute = args.get("minCandidateNodesAbsolute", 100)
        return cls(
            percentage if isinstance(percentage, int) else 10,
            absolute if isinstance(absolute, int) else 100,
        )


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource and its weight in a scoring strategy (``v1.ResourceSpec``)."""

    name: str
    """Resource name, e.g. ``cpu``."""
    weight: int = 1
    """Weight in 1..100; 0 in the input defaults to 1."""


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """A point of a piecewise-linear utilization → score function."""

    utilization: int
    """Utilization in percent, 0..100."""
    score: int
    """Score at that utilization, 0..10."""


_DEFAULT_VOLUME_BINDING_SHAPE: Final = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """``VolumeBindingArgs``, as ``SetDefaults_VolumeBindingArgs`` leaves them."""

    bind_timeout_seconds: int = 600
    """How long PreBind waits for the claims to be bound (not used by decisions)."""
    shape: tuple[UtilizationShapePoint, ...] = _DEFAULT_VOLUME_BINDING_SHAPE
    """The StorageCapacityScoring function of utilization; the default (with the gate on,
    as in v1.37) scores an empty node 10 and a full one 0."""

    @classmethod
    def from_v1(cls, args: Mapping[str, object]) -> VolumeBindingArgs:
        """From the defaulted v1 JSON form (``bindTimeoutSeconds``, ``shape``)."""
        timeout = args.get("bindTimeoutSeconds", 600)
        raw_shape = args.get("shape")
        shape: list[UtilizationShapePoint] = []
        if isinstance(raw_shape, list):
            for point in raw_shape:
                if isinstance(point, Mapping):
                    utilization, score = point.get("utilization", 0), point.get("score", 0)
                    shape.append(
                        UtilizationShapePoint(
                            utilization if isinstance(utilization, int) else 0,
                            score if isinstance(score, int) else 0,
                        )
                    )
        return cls(
            timeout if isinstance(timeout, int) else 600,
            tuple(shape) if shape else _DEFAULT_VOLUME_BINDING_SHAPE,
        )


@dataclass(frozen=True, slots=True)
class RequestedToCapacityRatio:
    """Parameters of the ``RequestedToCapacityRatio`` scoring strategy."""

    shape: tuple[UtilizationShapePoint, ...] = ()
    """The function, utilization strictly increasing."""


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """How NodeResourcesFit scores nodes."""

    type: str = "LeastAllocated"
    """``LeastAllocated``, ``MostAllocated`` or ``RequestedToCapacityRatio``."""
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu"), ResourceSpec("memory"))
    """Resources considered, with weights; defaults to cpu and memory, weight 1 each."""
    requested_to_capacity_ratio: RequestedToCapacityRatio | None = None
    """Required with, and only allowed with, type ``RequestedToCapacityRatio``."""


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """``NodeResourcesFitArgs``."""

    ignored_resources: tuple[str, ...] = ()
    """Extended resources Filter does not check."""
    ignored_resource_groups: tuple[str, ...] = ()
    """Extended resource prefixes (``example.com`` for ``example.com/gpu``) not checked."""
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)
    """Score strategy; defaults to LeastAllocated over cpu and memory."""


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """``InterPodAffinityArgs``."""

    hard_pod_affinity_weight: int = 1
    """Score weight of an existing pod's *required* affinity term the incoming pod matches;
    0..100, missing defaults to 1, an explicit 0 turns that scoring off."""
    ignore_preferred_terms_of_existing_pods: bool = False
    """When set, PreScore skips pods without inter-pod affinity terms of their own instead
    of scoring existing pods' preferences towards them."""


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """``NodeAffinityArgs``."""

    added_affinity: NodeAffinity | None = None
    """Node affinity ANDed with every pod's own, for all pods of the profile."""


@dataclass(frozen=True, slots=True)
class Profile:
    """One scheduling profile (``KubeSchedulerProfile``), defaulted."""

    scheduler_name: str
    """Pods with this ``spec.schedulerName`` are scheduled by this profile."""
    plugins: Plugins
    """The defaulted plugin sets, multiPoint not yet expanded."""
    plugin_config: Mapping[str, object]
    """Args by plugin name, in upstream order (the user's entries, then defaults for
    enabled plugins with an args type, by name). Values are :class:`PodTopologySpreadArgs`,
    :class:`NodeResourcesFitArgs`, :class:`NodeAffinityArgs`, :class:`InterPodAffinityArgs`,
    or, for the other plugins,
    the defaulted args as a plain ``dict`` in their v1 JSON form."""
    percentage_of_nodes_to_score: int | None = None
    """Profile override of the global percentage; ``None`` when not set."""


@dataclass(frozen=True, slots=True)
class Extender:
    """An ``extenders`` entry, as far as validation reads it: topospread runs no extenders
    (an HTTP call out of the scheduling cycle), but refuses the ones kube-scheduler
    refuses."""

    url_prefix: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    """``weight`` (int64, not defaulted): multiplies the extender's priorities."""
    bind_verb: str = ""


@dataclass(frozen=True, slots=True)
class SchedulerConfiguration:
    """A decoded, defaulted and valid ``KubeSchedulerConfiguration``."""

    profiles: tuple[Profile, ...]
    """At least one profile, scheduler names unique."""
    percentage_of_nodes_to_score: int = 0
    """Percent of nodes to find feasible before scoring; 0 means the adaptive default."""
    parallelism: int = 16
    """Goroutines upstream uses for filtering and scoring (kept for fidelity)."""
    pod_initial_backoff_seconds: int = 1
    """Initial backoff of an unschedulable pod."""
    pod_max_backoff_seconds: int = 10
    """Maximum backoff of an unschedulable pod."""
    extenders: tuple[Extender, ...] = ()
    """``extenders``: validated, not run."""

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile for ``scheduler_name``, if any."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)
