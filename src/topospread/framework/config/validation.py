"""Validation of a defaulted ``KubeSchedulerConfiguration``, as kube-scheduler v1.37.1 does it.

Upstream: ``pkg/scheduler/apis/config/validation/validation.go`` and
``validation_pluginargs.go``. Paths and messages are upstream's. Where upstream walks a
Go map (the extension points checked for removed plugins) a fixed order is used.

Two upstream quirks are reproduced because users see them:

* a duplicate scheduler name prints ``Duplicate value: {}`` (upstream passes a
  ``*field.Path`` as the value, which marshals to an empty JSON object);
* ``NodeResourcesFit`` args are not checked by config validation upstream (its entry
  is keyed ``"NodeResourcesFitArgs"`` and never matches); kube-scheduler reports them
  when it builds the plugin, without a path prefix. Here they are checked with the
  config, under the full ``profiles[i].pluginConfig[j].args`` path, so that the error
  names where to look; the message bodies are upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.errors import FieldError
from topospread.framework.config.types import (
    API_VERSION,
    IN_TREE_PLUGINS,
    Extender,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    Profile,
    ResourceSpec,
    SchedulerConfiguration,
    UtilizationShapePoint,
)
from topospread.model.nodeaffinity import (
    NodeSelectorParseError,
    node_selector,
    preferred_scheduling_terms,
)
from topospread.model.validation import validate_label_name

__all__ = [
    "score_weight_problems",
    "validate_configuration",
    "validate_inter_pod_affinity_args",
    "validate_node_affinity_args",
    "validate_node_resources_fit_args",
    "validate_pod_topology_spread_args",
    "validate_profile",
]

_INVALID_PLUGINS: Final = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
"""Plugins removed by ``kubescheduler.config.k8s.io/v1`` (``invalidPluginsByVersion``)."""

_STAGES: Final = (
    ("preEnqueue", "pre_enqueue"),
    ("queueSort", "queue_sort"),
    ("preFilter", "pre_filter"),
    ("filter", "filter"),
    ("postFilter", "post_filter"),
    ("preScore", "pre_score"),
    ("score", "score"),
    ("reserve", "reserve"),
    ("permit", "permit"),
    ("preBind", "pre_bind"),
    ("bind", "bind"),
    ("postBind", "post_bind"),
    ("podGroupPostFilter", "pod_group_post_filter"),
)
"""The extension points upstream checks for removed plugins (not multiPoint)."""

_SCORING_STRATEGY_TYPES: Final = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
_SCHEDULE_ACTIONS: Final = ("DoNotSchedule", "ScheduleAnyway")
_MAX_CUSTOM_PRIORITY_SCORE: Final = 10


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _invalid_plugin_message() -> str:
    return (
        f'was invalid in version "{API_VERSION}" '
        f'(KubeSchedulerConfiguration is version "{API_VERSION}")'
    )


# -- plugin args --------------------------------------------------------------------------------


def validate_pod_topology_spread_args(path: str, args: PodTopologySpreadArgs) -> list[FieldError]:
    """``ValidatePodTopologySpreadArgs``.

    ``defaultingType`` must be ``System`` or ``List``, and ``System`` forbids a
    non-empty list. Per default constraint: ``maxSkew`` > 0 ("not in valid range
    (0, inf)"); ``topologyKey`` required and a valid label name; ``whenUnsatisfiable``
    required and supported; no ``labelSelector`` (it is derived per pod); and the pair
    (topologyKey, whenUnsatisfiable) not repeating an *earlier* constraint, reported at
    the later index. Fields like ``minDomains`` are not checked here.
    """
    errs: list[FieldError] = []
    dt_path = _child(path, "defaultingType")
    if args.defaulting_type not in ("System", "List"):
        errs.append(FieldError.not_supported(dt_path, args.defaulting_type, ("System", "List")))
    elif args.defaulting_type == "System" and args.default_constraints:
        errs.append(
            FieldError.invalid(
                dt_path, args.defaulting_type, "when .defaultConstraints are not empty"
            )
        )
    constraints_path = _child(path, "defaultConstraints")
    for i, c in enumerate(args.default_constraints):
        p = _index(constraints_path, i)
        if c.max_skew <= 0:
            errs.append(
                FieldError.invalid(_child(p, "maxSkew"), c.max_skew, "not in valid range (0, inf)")
            )
        key_path = _child(p, "topologyKey")
        if not c.topology_key:
            errs.append(FieldError.required(key_path, "can not be empty"))
        else:
            errs.extend(validate_label_name(c.topology_key, key_path))
        action_path = _child(p, "whenUnsatisfiable")
        if not c.when_unsatisfiable:
            errs.append(FieldError.required(action_path, "can not be empty"))
        elif c.when_unsatisfiable not in _SCHEDULE_ACTIONS:
            errs.append(
                FieldError.not_supported(action_path, c.when_unsatisfiable, _SCHEDULE_ACTIONS)
            )
        if c.label_selector is not None:
            errs.append(
                FieldError.forbidden(
                    _child(p, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        if any(
            c.topology_key == other.topology_key
            and c.when_unsatisfiable == other.when_unsatisfiable
            for other in args.default_constraints[:i]
        ):
            errs.append(FieldError.duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
    return errs


def _validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    if not shape:
        return [FieldError.required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "utilization"),
                    point.utilization,
                    "not in valid range [0, 100]",
                )
            )
        if not 0 <= point.score <= _MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {_MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _validate_resources(resources: Sequence[ResourceSpec], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, resource in enumerate(resources):
        if resource.weight <= 0 or resource.weight > 100:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "weight"),
                    resource.weight,
                    f"resource weight of {resource.name} not in valid range (0, 100]",
                )
            )
    return errs


def validate_node_resources_fit_args(path: str, args: NodeResourcesFitArgs) -> list[FieldError]:
    """``ValidateNodeResourcesFitArgs``: ignored resources and groups are label names
    (groups without ``/``); the scoring strategy type, weights and shape."""
    errs: list[FieldError] = []
    for i, name in enumerate(args.ignored_resources):
        errs.extend(validate_label_name(name, _index(_child(path, "ignoredResources"), i)))
    for i, group in enumerate(args.ignored_resource_groups):
        p = _index(_child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(FieldError.invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(validate_label_name(group, p))
    strategy = args.scoring_strategy
    strategy_path = _child(path, "scoringStrategy")
    if strategy.type not in _SCORING_STRATEGY_TYPES:
        errs.append(
            FieldError.not_supported(
                _child(strategy_path, "type"), strategy.type, _SCORING_STRATEGY_TYPES
            )
        )
    errs.extend(_validate_resources(strategy.resources, _child(strategy_path, "resources")))
    ratio_path = _child(strategy_path, "requestedToCapacityRatio")
    if strategy.type == "RequestedToCapacityRatio":
        if strategy.requested_to_capacity_ratio is None:
            errs.append(
                FieldError.required(
                    ratio_path, "must be specified when type is RequestedToCapacityRatio"
                )
            )
        else:
            errs.extend(
                _validate_function_shape(
                    strategy.requested_to_capacity_ratio.shape, _child(ratio_path, "shape")
                )
            )
    elif strategy.requested_to_capacity_ratio is not None:
        errs.append(
            FieldError.forbidden(
                ratio_path, "must be nil when type is not RequestedToCapacityRatio"
            )
        )
    return errs


def validate_node_affinity_args(path: str, args: NodeAffinityArgs) -> list[FieldError]:
    """``ValidateNodeAffinityArgs``: ``addedAffinity`` must parse as the scheduler parses it
    (``nodeaffinity.NewNodeSelector`` / ``NewPreferredSchedulingTerms``)."""
    affinity = args.added_affinity
    if affinity is None:
        return []
    errs: list[FieldError] = []
    base = _child(path, "addedAffinity")
    if affinity.required is not None:
        try:
            node_selector(
                affinity.required, _child(base, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        except NodeSelectorParseError as exc:
            errs.extend(exc.errors)
    if affinity.preferred:
        try:
            preferred_scheduling_terms(
                affinity.preferred, _child(base, "preferredDuringSchedulingIgnoredDuringExecution")
            )
        except NodeSelectorParseError as exc:
            errs.extend(exc.errors)
    return errs


def _int_arg(args: Mapping[str, Any], key: str) -> int:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _validate_default_preemption_args(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    pct_path = _child(path, "minCandidateNodesPercentage")
    abs_path = _child(path, "minCandidateNodesAbsolute")
    pct = _int_arg(args, "minCandidateNodesPercentage")
    absolute = _int_arg(args, "minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        errs.append(FieldError.invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(FieldError.invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(
            FieldError.invalid(
                pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"
            )
        )
        errs.append(
            FieldError.invalid(
                abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"
            )
        )
    return errs


def validate_inter_pod_affinity_args(path: str, args: InterPodAffinityArgs) -> list[FieldError]:
    """``ValidateInterPodAffinityArgs``: hardPodAffinityWeight within [0, 100]."""
    weight = args.hard_pod_affinity_weight
    if not 0 <= weight <= 100:
        return [
            FieldError.invalid(
                _child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]"
            )
        ]
    return []


def _validate_balanced_allocation_args(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    resources = args.get("resources")
    for i, res in enumerate(resources if isinstance(resources, list) else ()):
        if not isinstance(res, Mapping):
            continue
        name = res.get("name", "")
        p = _index(_child(path, "resources"), i)
        if name in seen:
            errs.append(FieldError.duplicate(_child(p, "name"), name))
        else:
            seen.add(name)
        weight = _int_arg(res, "weight")
        if weight != 1:
            errs.append(FieldError.invalid(_child(p, "weight"), weight, "must be 1"))
    return errs


def _validate_plugin_args(path: str, name: str, args: object) -> list[FieldError]:
    if name == "PodTopologySpread" and isinstance(args, PodTopologySpreadArgs):
        return validate_pod_topology_spread_args(path, args)
    if name == "NodeResourcesFit" and isinstance(args, NodeResourcesFitArgs):
        return validate_node_resources_fit_args(path, args)
    if name == "NodeAffinity" and isinstance(args, NodeAffinityArgs):
        return validate_node_affinity_args(path, args)
    if name == "InterPodAffinity" and isinstance(args, InterPodAffinityArgs):
        return validate_inter_pod_affinity_args(path, args)
    if isinstance(args, Mapping):
        if name == "DefaultPreemption":
            return _validate_default_preemption_args(path, args)
        if name == "NodeResourcesBalancedAllocation":
            return _validate_balanced_allocation_args(path, args)
    return []


# -- profiles and the configuration ---------------------------------------------------------


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [FieldError.invalid(path, value, "not in valid range [0-100]")]
    return []


def validate_profile(
    path: str,
    profile: Profile,
    plugin_config: Sequence[tuple[str, object]] | None = None,
) -> list[FieldError]:
    """``validateKubeSchedulerProfile``: name, percentage, removed plugins, plugin config.

    ``plugin_config`` is the profile's plugin config as a list, so that duplicate names can
    be reported; it defaults to ``profile.plugin_config``.
    """
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(FieldError.required(_child(path, "schedulerName")))
    errs.extend(
        _validate_percentage(
            _child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score
        )
    )
    plugins_path = _child(path, "plugins")
    for stage, attr in _STAGES:
        plugin_set: PluginSet = getattr(profile.plugins, attr)
        for i, ref in enumerate(plugin_set.enabled):
            if ref.name in _INVALID_PLUGINS:
                errs.append(
                    FieldError.invalid(
                        _index(_child(_child(plugins_path, stage), "enabled"), i),
                        ref.name,
                        _invalid_plugin_message(),
                    )
                )
    entries = list(profile.plugin_config.items()) if plugin_config is None else plugin_config
    seen: set[str] = set()
    for j, (name, args) in enumerate(entries):
        config_path = _index(_child(path, "pluginConfig"), j)
        if name in seen:
            errs.append(FieldError.duplicate(config_path, name))
        else:
            seen.add(name)
        if name in _INVALID_PLUGINS:
            errs.append(FieldError.invalid(config_path, name, _invalid_plugin_message()))
        else:
            errs.extend(_validate_plugin_args(_child(config_path, "args"), name, args))
    return errs


def _comparable(
    plugin_set: PluginSet,
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    # apiequality.Semantic.DeepEqual on the internal type: nil weight is 0, nil list is empty.
    return (
        tuple((r.name, r.weight or 0) for r in plugin_set.enabled),
        tuple((r.name, r.weight or 0) for r in plugin_set.disabled),
    )


def _plugin_set_value(plugin_set: PluginSet) -> dict[str, object]:
    # The internal config.PluginSet has no JSON tags: Go field names, Go field order.
    def refs(items: Sequence[Any]) -> object:
        return [{"Name": r.name, "Weight": r.weight or 0} for r in items] or None

    return {"Enabled": refs(plugin_set.enabled), "Disabled": refs(plugin_set.disabled)}


def _validate_common_queue_sort(profiles: Sequence[Profile]) -> list[FieldError]:
    errs: list[FieldError] = []
    canon = profiles[0].plugins.queue_sort
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            FieldError.invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    canon_args = profiles[0].plugin_config.get(queue_sort_name) if queue_sort_name else None
    for i, profile in enumerate(profiles[1:], start=1):
        current = profile.plugins.queue_sort
        if _comparable(current) != _comparable(canon):
            errs.append(
                FieldError.invalid(
                    _child(_index("profiles", i), "plugins.queueSort"),
                    _plugin_set_value(current),
                    "must be the same for all profiles",
                )
            )
        if queue_sort_name and queue_sort_name in profile.plugin_config:
            args = profile.plugin_config[queue_sort_name]
            if args != canon_args:
                errs.append(
                    FieldError.invalid(
                        _child(_index("profiles", i), "pluginConfig.args"),
                        args if isinstance(args, Mapping) else None,
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


_MAX_SCORE = 100
"""``fwk.MaxScore``: a plugin's normalized score per node."""
_MAX_INT64 = (1 << 63) - 1
"""``fwk.MaxTotalScore`` (``math.MaxInt64``)."""


def _int64(value: int) -> int:
    # Go's int64 arithmetic wraps around.
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def score_weight_problems(config: SchedulerConfiguration) -> list[str]:
    """What ``getValidScoreWeights`` (pkg/scheduler/framework/runtime/framework.go) refuses
    when ``NewFramework`` builds each profile, after validation passed (profile.go's words).

    Over the explicit list, then multiPoint (first entry of a name wins; plugins that do
    not implement the interface skipped), each weight (0 means 1) must keep
    ``weight * MaxScore <= MaxTotalScore - total`` in int64. Validation checks no plugin
    weight, so a negative one is taken; it lowers the running total, and the next
    positive weight overflows ``MaxTotalScore - total``: kube-scheduler refuses the
    configuration then, and accepts a negative weight only on the last plugin it
    weighs."""
    for profile in config.profiles:
        plugins = profile.plugins
        for what, point, explicit in (
            ("score plugins", "score", plugins.score.enabled),
            ("placement score plugins", "placement_score", plugins.placement_score.enabled),
        ):
            seen: set[str] = set()
            total = 0
            for ref in (*explicit, *plugins.multi_point.enabled):
                if ref.name in seen or point not in IN_TREE_PLUGINS.get(ref.name, ()):
                    continue
                seen.add(ref.name)
                weighted = (ref.weight or 1) * _MAX_SCORE
                if weighted > _int64(_MAX_INT64 - total):
                    return [
                        f"creating profile for scheduler name {profile.scheduler_name}: "
                        f"{what}: total score of Score plugins could overflow"
                    ]
                total = _int64(total + weighted)
    return []


def framework_problems(config: SchedulerConfiguration) -> list[str]:
    """What ``NewFramework`` (pkg/scheduler/framework/runtime/framework.go) refuses once
    multiPoint is expanded: a profile without exactly one QueueSort plugin, or without a
    Bind plugin. kube-scheduler does not start with it. Which extension points a plugin
    from outside the package implements is not known here, so only what is certain
    either way is refused."""
    problems = []
    for profile in config.profiles:
        name = profile.scheduler_name
        sorts, maybe_sorts = _expanded(profile.plugins, "queue_sort")
        binds, maybe_binds = _expanded(profile.plugins, "bind")
        if sorts > 1 or (sorts + maybe_sorts == 0):
            problems.append(
                f"creating profile for scheduler name {name}: only one queue sort plugin "
                f'required for profile with scheduler name "{name}", but got {sorts}'
            )
        if binds + maybe_binds == 0:
            problems.append(
                f"creating profile for scheduler name {name}: at least one bind plugin is "
                f'needed for profile with scheduler name "{name}"'
            )
    return problems


def _expanded(plugins: Plugins, point: str) -> tuple[int, int]:
    # (plugins that run at ``point`` after expandMultiPointPlugins, multiPoint plugins
    # from outside the package that may): the explicit ones, and the multiPoint ones
    # that implement the point and are not disabled there.
    plugin_set: PluginSet = getattr(plugins, point)
    enabled = {ref.name for ref in plugin_set.enabled}
    disabled = {ref.name for ref in plugin_set.disabled}
    unknown: set[str] = set()
    if "*" not in disabled:
        for ref in plugins.multi_point.enabled:
            implemented = IN_TREE_PLUGINS.get(ref.name)
            if ref.name in disabled or ref.name in enabled:
                continue
            if implemented is None:
                unknown.add(ref.name)
            elif point in implemented:
                enabled.add(ref.name)
    return len(enabled), len(unknown)


def _validate_extenders(path: str, extenders: Sequence[Extender]) -> list[FieldError]:
    """``validateExtenders``: an extender that prioritizes needs a positive weight (score
    weights of plugins are not checked there: ``getValidScoreWeights`` takes any non-zero
    weight, negative ones included); at most one extender binds."""
    errs: list[FieldError] = []
    for i, extender in enumerate(extenders):
        if extender.prioritize_verb and extender.weight <= 0:
            errs.append(
                FieldError.invalid(
                    _child(_index(path, i), "weight"),
                    extender.weight,
                    "must have a positive weight applied to it",
                )
            )
    binders = sum(1 for e in extenders if e.bind_verb)
    if binders > 1:
        errs.append(
            FieldError.invalid(
                path,
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs


def validate_configuration(
    config: SchedulerConfiguration,
    plugin_configs: Sequence[Sequence[tuple[str, object]]] | None = None,
) -> list[FieldError]:
    """``ValidateKubeSchedulerConfiguration`` for the fields topospread models.

    ``plugin_configs`` optionally gives each profile's plugin config as a list (see
    :func:`validate_profile`). Leader election and client connection are not modelled
    and not checked; extenders are checked (weights, binders), not run.
    """
    errs: list[FieldError] = []
    if config.parallelism <= 0:
        errs.append(
            FieldError.invalid(
                "parallelism", config.parallelism, "should be an integer value greater than zero"
            )
        )
    if not config.profiles:
        errs.append(FieldError.required("profiles"))
    else:
        first_index: dict[str, int] = {}
        for i, profile in enumerate(config.profiles):
            path = _index("profiles", i)
            entries = plugin_configs[i] if plugin_configs is not None else None
            errs.extend(validate_profile(path, profile, entries))
            if profile.scheduler_name in first_index:
                # Upstream passes the *path* of the earlier profile as the value; a
                # field.Path marshals to {} (no exported fields).
                errs.append(FieldError.duplicate(_child(path, "schedulerName"), {}))
            first_index[profile.scheduler_name] = i
        errs.extend(_validate_common_queue_sort(config.profiles))
    errs.extend(
        _validate_percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score)
    )
    if config.pod_initial_backoff_seconds <= 0:
        errs.append(
            FieldError.invalid(
                "podInitialBackoffSeconds",
                config.pod_initial_backoff_seconds,
                "must be greater than 0",
            )
        )
    errs.extend(_validate_extenders("extenders", config.extenders))
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        errs.append(
            FieldError.invalid(
                "podMaxBackoffSeconds",
                config.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    return errs
