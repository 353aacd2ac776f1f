"""Decoding a parsed ``KubeSchedulerConfiguration`` document: decode, default, validate.

Pure: takes the parsed YAML/JSON mapping, never reads files. Unknown fields are refused
as kube-scheduler's strict decoding refuses them (:mod:`.strict`).
A field of the wrong type is reported with its path; if any are, decoding stops there
(as upstream stops before validating). Otherwise the v1 defaults are applied
(:mod:`.defaults`) and the result validated (:mod:`.validation`); every problem found is
raised together as one :class:`~topospread.errors.ConfigError`.

Args of ``PodTopologySpread``, ``NodeResourcesFit``, ``NodeAffinity`` and
``InterPodAffinity`` are decoded
into typed values; args of the other in-tree plugins with an args kind are kept as
defaulted dicts. Args of a plugin from another distribution are decoded by its own
decoder when the caller passes the registry's (``args_decoders``, see :mod:`.args`),
strictly and with the same wording; args of any other plugin are kept as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from topospread.errors import ConfigError, FieldError
from topospread.framework.config.args import ArgsDecoder, ArgsError, prefixed
from topospread.framework.config.defaults import (
    ARGS_PLUGINS,
    DEFAULT_PARALLELISM,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    default_plugins,
    default_raw_args,
    default_scoring_strategy,
    merge_plugins,
    plugins_names,
)
from topospread.framework.config.strict import strict_problems
from topospread.framework.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    Extender,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PluginRef,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    Profile,
    RequestedToCapacityRatio,
    ResourceSpec,
    SchedulerConfiguration,
    ScoringStrategy,
    UtilizationShapePoint,
)
from topospread.framework.config.validation import (
    framework_problems,
    score_weight_problems,
    validate_configuration,
)
from topospread.model.decode import _constraint
from topospread.model.decode_reader import _join, _node_selector_term, _Reader
from topospread.model.objects import NodeAffinity, NodeSelector, PreferredSchedulingTerm

__all__ = ["decode_configuration", "default_configuration"]

_PLUGIN_SET_KEYS: Final = (
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
    ("multiPoint", "multi_point"),
    ("placementGenerate", "placement_generate"),
    ("placementScore", "placement_score"),
    ("podGroupPostFilter", "pod_group_post_filter"),
)
"""v1 JSON names of the plugin sets and the matching :class:`Plugins` attributes."""


@dataclass(frozen=True, slots=True)
class _RawProfile:
    """A profile as written, before defaulting; ``None`` marks an absent field."""

    scheduler_name: str | None
    percentage_of_nodes_to_score: int | None
    plugins: Plugins | None
    plugin_config: tuple[tuple[str, object], ...]
    """(name, args) in file order; args already typed and defaulted."""


def _plugin_set(r: _Reader, data: Mapping[str, Any], path: str) -> PluginSet:
    def ref(item: Mapping[str, Any], p: str) -> PluginRef:
        return PluginRef(r.string(item, "name", p), r.integer(item, "weight", p))

    return PluginSet(
        enabled=r.objects(data, "enabled", path, ref),
        disabled=r.objects(data, "disabled", path, ref),
    )


def _plugins(r: _Reader, data: Mapping[str, Any], path: str) -> Plugins:
    sets = {}
    for key, attr in _PLUGIN_SET_KEYS:
        raw = r.obj(data, key, path)
        sets[attr] = _plugin_set(r, raw, _join(path, key)) if raw is not None else PluginSet()
    return Plugins(**sets)


def _pod_topology_spread_args(
    r: _Reader, args: Mapping[str, Any], path: str
) -> PodTopologySpreadArgs:
    constraints = r.objects(args, "defaultConstraints", path, lambda c, p: _constraint(r, c, p))
    # SetDefaults_PodTopologySpreadArgs: an empty defaultingType becomes System.
    defaulting_type = r.string(args, "defaultingType", path) or "System"
    return PodTopologySpreadArgs(default_constraints=constraints, defaulting_type=defaulting_type)


def _shape(r: _Reader, data: Mapping[str, Any], path: str) -> tuple[UtilizationShapePoint, ...]:
    return r.objects(
        data,
        "shape",
        path,
        lambda s, p: UtilizationShapePoint(
            utilization=r.integer(s, "utilization", p) or 0, score=r.integer(s, "score", p) or 0
        ),
    )


def _scoring_strategy(r: _Reader, data: Mapping[str, Any], path: str) -> ScoringStrategy:
    ratio = r.obj(data, "requestedToCapacityRatio", path)
    return ScoringStrategy(
        # No default for a missing type inside a given strategy: it stays "" and fails
        # validation, as upstream.
        type=r.string(data, "type", path),
        resources=r.objects(
            data,
            "resources",
            path,
            lambda s, p: ResourceSpec(
                name=r.string(s, "name", p), weight=r.integer(s, "weight", p, bits=64) or 0
            ),
        ),
        requested_to_capacity_ratio=(
            RequestedToCapacityRatio(_shape(r, ratio, _join(path, "requestedToCapacityRatio")))
            if ratio is not None
            else None
        ),
    )


def _node_resources_fit_args(
    r: _Reader, args: Mapping[str, Any], path: str
) -> NodeResourcesFitArgs:
    raw = r.obj(args, "scoringStrategy", path)
    strategy = (
        _scoring_strategy(r, raw, _join(path, "scoringStrategy")) if raw is not None else None
    )
    return NodeResourcesFitArgs(
        ignored_resources=r.strings(args, "ignoredResources", path),
        ignored_resource_groups=r.strings(args, "ignoredResourceGroups", path),
        scoring_strategy=default_scoring_strategy(strategy),
    )


def _node_affinity_args(r: _Reader, args: Mapping[str, Any], path: str) -> NodeAffinityArgs:
    raw = r.obj(args, "addedAffinity", path)
    if raw is None:
        return NodeAffinityArgs()
    where = _join(path, "addedAffinity")
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    required = None
    req = r.obj(raw, required_key, where)
    if req is not None:
        required = NodeSelector(
            r.objects(
                req,
                "nodeSelectorTerms",
                _join(where, required_key),
                lambda t, p: _node_selector_term(r, t, p),
            )
        )
    preferred = r.objects(
        raw,
        preferred_key,
        where,
        lambda t, p: PreferredSchedulingTerm(
            weight=r.integer(t, "weight", p) or 0,
            preference=_node_selector_term(
                r, r.obj(t, "preference", p) or {}, _join(p, "preference")
            ),
        ),
    )
    return NodeAffinityArgs(NodeAffinity(required=required, preferred=preferred))


def _inter_pod_affinity_args(
    r: _Reader, args: Mapping[str, Any], path: str
) -> InterPodAffinityArgs:
    # SetDefaults_InterPodAffinityArgs: a missing hardPodAffinityWeight becomes 1.
    weight = r.integer(args, "hardPodAffinityWeight", path)
    ignore = r.boolean(args, "ignorePreferredTermsOfExistingPods", path)
    return InterPodAffinityArgs(
        hard_pod_affinity_weight=1 if weight is None else weight,
        ignore_preferred_terms_of_existing_pods=bool(ignore),
    )


@dataclass(slots=True)
class _External:
    """The decoders of the registered out-of-tree args kinds, and what they refused."""

    decoders: Mapping[str, ArgsDecoder]
    unknown: list[str]
    """Unknown fields, in the strict codec's words (reported before anything else)."""
    errors: list[FieldError]
    """Every other problem, reported with validation's."""


_NO_EXTERNAL: Final = _External({}, [], [])


def _external_args(
    ext: _External, name: str, decode: ArgsDecoder, args: Mapping[str, Any], path: str
) -> object:
    # A registered out-of-tree args kind: decoded strictly by the plugin, its problems
    # worded as the strict codec (unknown fields) and validation (the rest) word them.
    try:
        return decode(args)
    except ArgsError as exc:
        entry = path.removesuffix(".args")
        where = f"decoding .{entry}: " if entry != path else ""
        ext.unknown.extend(
            f"{where}decoding args for plugin {name}: {message}"
            for message in exc.unknown_messages()
        )
        ext.errors.extend(prefixed(path, exc.errors))
        return dict(args)


def _plugin_args(
    r: _Reader,
    name: str,
    args: Mapping[str, Any],
    path: str,
    ext: _External = _NO_EXTERNAL,
) -> object:
    decode = ext.decoders.get(name)
    if decode is not None:
        return _external_args(ext, name, decode, args, path)
    if name == "PodTopologySpread":
        return _pod_topology_spread_args(r, args, path)
    if name == "NodeResourcesFit":
        return _node_resources_fit_args(r, args, path)
    if name == "NodeAffinity":
        return _node_affinity_args(r, args, path)
    if name == "InterPodAffinity":
        return _inter_pod_affinity_args(r, args, path)
    if name in ARGS_PLUGINS:
        return default_raw_args(name, args)
    # Out-of-tree plugins' args stay as given (runtime.Unknown upstream: not defaulted).
    return dict(args)


def _plugin_config_entry(
    r: _Reader, item: Mapping[str, Any], path: str, ext: _External
) -> tuple[str, object]:
    name = r.string(item, "name", path)
    args = r.obj(item, "args", path) or {}
    return name, _plugin_args(r, name, args, _join(path, "args"), ext)


def _extender(r: _Reader, data: Mapping[str, Any], path: str) -> Extender:
    return Extender(
        url_prefix=r.string(data, "urlPrefix", path),
        prioritize_verb=r.string(data, "prioritizeVerb", path),
        weight=r.integer(data, "weight", path, bits=64) or 0,
        bind_verb=r.string(data, "bindVerb", path),
    )


def _raw_profile(r: _Reader, data: Mapping[str, Any], path: str, ext: _External) -> _RawProfile:
    plugins_raw = r.obj(data, "plugins", path)
    return _RawProfile(
        scheduler_name=r.opt_string(data, "schedulerName", path),
        percentage_of_nodes_to_score=r.integer(data, "percentageOfNodesToScore", path),
        plugins=_plugins(r, plugins_raw, _join(path, "plugins"))
        if plugins_raw is not None
        else None,
        plugin_config=r.objects(
            data, "pluginConfig", path, lambda c, p: _plugin_config_entry(r, c, p, ext)
        ),
    )


def _default_plugins_and_config(
    raw: _RawProfile, path: str, ext: _External
) -> tuple[Plugins, tuple[tuple[str, object], ...]]:
    # setDefaults_KubeSchedulerProfile: merge plugins, then append default args, by sorted
    # name, for every enabled plugin with an args kind in the scheme (in-tree, or
    # registered by an out-of-tree plugin) that has no entry yet.
    plugins = merge_plugins(default_plugins(), raw.plugins)
    entries = list(raw.plugin_config)
    configured = {name for name, _ in entries}
    r = _Reader()
    for name in plugins_names(plugins):
        if name not in configured and (name in ARGS_PLUGINS or name in ext.decoders):
            where = _join(path, f"pluginConfig[{len(entries)}].args")
            entries.append((name, _plugin_args(r, name, {}, where, ext)))
    return plugins, tuple(entries)


def _ordered_config(entries: tuple[tuple[str, object], ...]) -> dict[str, object]:
    # First entry of each name wins the mapping; duplicates are a validation error anyway.
    result: dict[str, object] = {}
    for name, args in entries:
        result.setdefault(name, args)
    return result


def _build(
    raw_profiles: tuple[_RawProfile, ...],
    parallelism: int | None,
    percentage: int | None,
    initial_backoff: int | None,
    max_backoff: int | None,
    ext: _External = _NO_EXTERNAL,
) -> tuple[SchedulerConfiguration, list[tuple[tuple[str, object], ...]]]:
    if not raw_profiles:
        raw_profiles = (_RawProfile(None, None, None, ()),)
    profiles: list[Profile] = []
    entries: list[tuple[tuple[str, object], ...]] = []
    for index, raw in enumerate(raw_profiles):
        # Only a lone profile gets the default name; validation requires the others'.
        name = raw.scheduler_name
        if name is None:
            name = DEFAULT_SCHEDULER_NAME if len(raw_profiles) == 1 else ""
        plugins, profile_entries = _default_plugins_and_config(raw, f"profiles[{index}]", ext)
        profiles.append(
            Profile(
                scheduler_name=name,
                plugins=plugins,
                plugin_config=_ordered_config(profile_entries),
                percentage_of_nodes_to_score=raw.percentage_of_nodes_to_score,
            )
        )
        entries.append(profile_entries)
    config = SchedulerConfiguration(
        profiles=tuple(profiles),
        percentage_of_nodes_to_score=(
            DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE if percentage is None else percentage
        ),
        parallelism=DEFAULT_PARALLELISM if parallelism is None else parallelism,
        pod_initial_backoff_seconds=(
            DEFAULT_POD_INITIAL_BACKOFF_SECONDS if initial_backoff is None else initial_backoff
        ),
        pod_max_backoff_seconds=(
            DEFAULT_POD_MAX_BACKOFF_SECONDS if max_backoff is None else max_backoff
        ),
    )
    return config, entries


def decode_configuration(
    doc: Mapping[str, Any],
    source: str,
    *,
    args_decoders: Mapping[str, ArgsDecoder] | None = None,
    validated_first: Sequence[FieldError] = (),
) -> SchedulerConfiguration:
    """Decode, default and validate a ``kubescheduler.config.k8s.io/v1`` document.

    ``validated_first``: validation errors of the sections a caller decodes itself
    (kube-scheduler's clientConnection and leaderElection), reported first among the
    validation errors, as ``ValidateKubeSchedulerConfiguration`` orders them.

    Raises :class:`ConfigError` naming ``source`` with every problem found: first the
    wrong ``apiVersion``/``kind``, unknown fields and badly typed fields; if there are
    none, every validation error. ``args_decoders`` are the out-of-tree plugins' args
    kinds (``topospread.plugins.registry.args_decoders()``); without them such args stay
    as written and their plugin's factory decodes them.
    """
    ext = _External(args_decoders or {}, [], [])
    if not isinstance(doc, Mapping):
        raise ConfigError(source, [f"expected a {KIND} object"])
    r = _Reader()
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    for key, value, want in (("apiVersion", api_version, API_VERSION), ("kind", kind, KIND)):
        if value is None or value == "":
            r.errors.append(FieldError.required(key))
        elif value != want:
            r.errors.append(FieldError.not_supported(key, value, (want,)))
    if r.errors:
        raise ConfigError(source, r.errors)
    # The strict codec refuses unknown fields before anything is typed or defaulted.
    unknown = strict_problems(doc)
    if unknown:
        raise ConfigError(source, unknown)
    raw_profiles = r.objects(doc, "profiles", "", lambda p, path: _raw_profile(r, p, path, ext))
    parallelism = r.integer(doc, "parallelism", "")
    percentage = r.integer(doc, "percentageOfNodesToScore", "")
    initial_backoff = r.integer(doc, "podInitialBackoffSeconds", "", bits=64)
    max_backoff = r.integer(doc, "podMaxBackoffSeconds", "", bits=64)
    extenders = r.objects(doc, "extenders", "", lambda e, path: _extender(r, e, path))
    if ext.unknown:
        raise ConfigError(source, ext.unknown)
    if r.errors:
        raise ConfigError(source, r.errors)
    config, entries = _build(
        raw_profiles, parallelism, percentage, initial_backoff, max_backoff, ext
    )
    if ext.unknown:
        raise ConfigError(source, ext.unknown)
    config = replace(config, extenders=extenders)
    errors = [*validated_first, *validate_configuration(config, entries), *ext.errors]
    if errors:
        raise ConfigError(source, errors)
    # kube-scheduler builds its profiles after validation; what that refuses is refused
    # here, so that no command runs a configuration kube-scheduler would not start with.
    problems = [*score_weight_problems(config), *framework_problems(config)]
    if problems:
        raise ConfigError(source, problems)
    return config


def default_configuration() -> SchedulerConfiguration:
    """The configuration kube-scheduler v1.37.1 runs with when given none."""
    config, _ = _build((), None, None, None, None)
    return config
