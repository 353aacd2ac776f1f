"""The v1 defaults of ``KubeSchedulerConfiguration``, as kube-scheduler v1.37.1 applies them.

Upstream: ``pkg/scheduler/apis/config/v1/defaults.go`` and ``default_plugins.go``, with
the feature gates at their v1.37.1 defaults — ``NodeDeclaredFeatures`` (GA) and
``DynamicResourceAllocation`` (GA) on; ``InPlacePodVerticalScalingSchedulerPreemption``
(alpha), ``GenericWorkload`` (beta, off by default) and ``TopologyAwareWorkloadScheduling``
(alpha) off; ``StorageCapacityScoring`` (beta) on; ``DRASchedulerFilterTimeout``,
``DRADeviceBindingConditions`` and ``DRAResourceClaimDeviceStatus`` on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from topospread.framework.config.types import (
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    ResourceSpec,
    ScoringStrategy,
)

__all__ = [
    "ARGS_PLUGINS",
    "DEFAULT_PARALLELISM",
    "DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE",
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "default_plugins",
    "default_raw_args",
    "default_resource_specs",
    "default_scoring_strategy",
    "merge_plugin_set",
    "merge_plugins",
    "plugins_names",
]

DEFAULT_PARALLELISM: Final = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE: Final = 0
"""``config.DefaultPercentageOfNodesToScore``: 0 selects the adaptive percentage."""
DEFAULT_POD_INITIAL_BACKOFF_SECONDS: Final = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS: Final = 10

ARGS_PLUGINS: Final = frozenset(
    {
        # The plugins whose <Name>Args kind is registered in kube-scheduler config/v1;
        # defaulting appends args for each of these that is enabled and has none.
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    }
)

_DEFAULT_MULTI_POINT: Final[tuple[PluginRef, ...]] = (
    # getDefaultPlugins, then applyFeatureGates: NodeDeclaredFeatures appended at the
    # end, DynamicResources (weight 2) inserted just before DefaultPreemption.
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeName"),
    PluginRef("NodeUnschedulable"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
    PluginRef("NodeDeclaredFeatures"),
)


def default_plugins() -> Plugins:
    """The default plugins of a profile: everything under ``multiPoint``, nothing elsewhere."""
    return Plugins(multi_point=PluginSet(enabled=_DEFAULT_MULTI_POINT))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """``mergePluginSet``: merge the user's set for one extension point into the default.

    * disabled: the user's names (weights dropped), then the default's disabled names;
    * enabled: unless ``"*"`` is disabled, the default plugins minus the disabled ones,
      each replaced in place by the user's entry of the same name (its weight wins);
      then every user entry that did not replace a default, in the user's order.
      A plugin the user lists twice is kept twice; the framework rejects that later.
    """
    disabled = [PluginRef(ref.name) for ref in custom.disabled]
    disabled.extend(PluginRef(ref.name) for ref in default.disabled)
    disabled_names = {ref.name for ref in disabled}
    # Later duplicates win the in-place replacement, as the Go map assignment does.
    custom_by_name = {ref.name: (i, ref) for i, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for ref in default.enabled:
            if ref.name in disabled_names:
                continue
            found = custom_by_name.get(ref.name)
            if found is not None:
                replaced.add(found[0])
                ref = found[1]
            enabled.append(ref)
    enabled.extend(ref for i, ref in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=tuple(enabled), disabled=tuple(disabled))


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """``mergePlugins``: the user's ``plugins`` merged into the defaults, point by point."""
    if custom is None:
        return default
    points = ("multi_point", *EXTENSION_POINTS)
    return replace(
        default,
        **{
            point: merge_plugin_set(getattr(default, point), getattr(custom, point))
            for point in points
        },
    )


def plugins_names(plugins: Plugins) -> list[str]:
    """``pluginsNames``: the sorted names enabled anywhere (podGroupPostFilter is not looked at,
    as upstream does not look at it)."""
    points = [p for p in ("multi_point", *EXTENSION_POINTS) if p != "pod_group_post_filter"]
    names: set[str] = set()
    for point in points:
        names.update(ref.name for ref in getattr(plugins, point).enabled)
    return sorted(names)


def default_resource_specs() -> tuple[ResourceSpec, ...]:
    """``defaultResourceSpec``: cpu and memory, weight 1 each."""
    return (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def default_scoring_strategy(strategy: ScoringStrategy | None) -> ScoringStrategy:
    """``SetDefaults_NodeResourcesFitArgs`` for the scoring strategy.

    A missing strategy becomes LeastAllocated over cpu and memory; an empty resource list
    becomes cpu and memory; a resource weight of 0 becomes 1.
    """
    if strategy is None:
        return ScoringStrategy("LeastAllocated", default_resource_specs())
    resources = strategy.resources or default_resource_specs()
    resources = tuple(r if r.weight != 0 else replace(r, weight=1) for r in resources)
    return replace(strategy, resources=resources)


def _with_defaults(args: Mapping[str, Any], defaults: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(args)
    for key, value in defaults:
        if result.get(key) is None:
            result[key] = value
    return result


def _resource_list(resources: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for res in resources:
        if isinstance(res, Mapping) and not res.get("weight"):
            res = {**res, "weight": 1}
        out.append(res)
    return out


def default_raw_args(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The v1 defaults of the args of a plugin topospread keeps as a plain dict.

    ``args`` is the v1 JSON form; the result is too. Plugins without registered args or
    defaults get ``args`` back unchanged.
    """
    if name == "DefaultPreemption":
        return _with_defaults(
            args, (("minCandidateNodesPercentage", 10), ("minCandidateNodesAbsolute", 100))
        )
    if name == "InterPodAffinity":
        return _with_defaults(args, (("hardPodAffinityWeight", 1),))
    if name == "VolumeBinding":
        result = _with_defaults(args, (("bindTimeoutSeconds", 600),))
        if not result.get("shape"):
            # StorageCapacityScoring (beta, on in v1.37): prefer the emptiest node.
            result["shape"] = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
        return result
    if name == "NodeResourcesBalancedAllocation":
        result = dict(args)
        resources = result.get("resources")
        if not resources:
            result["resources"] = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        elif isinstance(resources, list):
            result["resources"] = _resource_list(resources)
        return result
    if name == "DynamicResources":
        return _with_defaults(args, (("filterTimeout", "10s"), ("bindingTimeout", "10m0s")))
    return dict(args)
