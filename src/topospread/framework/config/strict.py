"""Strict decoding of a ``KubeSchedulerConfiguration``: unknown fields are refused.

kube-scheduler decodes its configuration with a strict codec
(``serializer.EnableStrict``): a field the v1 types do not have, a misspelt one
(``defaultConstraint``) or one in another case (``SchedulerName``: sigs.k8s.io/json
matches field names case-sensitively) is an error, and plugin args are decoded strictly
too (``PluginConfig.decodeNestedObjects``). The field names below are the JSON names of
``k8s.io/kube-scheduler/config/v1`` v0.37.1 and of the core/v1 and component-base types
they embed. Args of plugins without a registered ``<Name>Args`` kind are not checked
(upstream keeps them as ``runtime.Unknown``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from topospread.errors import go_quote

__all__ = ["strict_problems"]

_Spec = Any
"""A field schema: a dict of field name to schema, ``_LIST(schema)``, ``_MAP`` or ``_ANY``."""

_ANY: Final = "any"
_MAP: Final = "map"


class _LIST:
    __slots__ = ("item",)

    def __init__(self, item: _Spec) -> None:
        self.item = item


_TYPE_META: Final = {"apiVersion": _ANY, "kind": _ANY}
_LABEL_SELECTOR: Final = {
    "matchLabels": _MAP,
    "matchExpressions": _LIST({"key": _ANY, "operator": _ANY, "values": _ANY}),
}
_NODE_SELECTOR_TERM: Final = {
    "matchExpressions": _LIST({"key": _ANY, "operator": _ANY, "values": _ANY}),
    "matchFields": _LIST({"key": _ANY, "operator": _ANY, "values": _ANY}),
}
_SHAPE: Final = _LIST({"utilization": _ANY, "score": _ANY})
_RESOURCES: Final = _LIST({"name": _ANY, "weight": _ANY})

ARGS: Final[Mapping[str, _Spec]] = {
    "DefaultPreemption": {
        **_TYPE_META,
        "minCandidateNodesPercentage": _ANY,
        "minCandidateNodesAbsolute": _ANY,
    },
    "InterPodAffinity": {
        **_TYPE_META,
        "hardPodAffinityWeight": _ANY,
        "ignorePreferredTermsOfExistingPods": _ANY,
    },
    "NodeResourcesFit": {
        **_TYPE_META,
        "ignoredResources": _ANY,
        "ignoredResourceGroups": _ANY,
        "scoringStrategy": {
            "type": _ANY,
            "resources": _RESOURCES,
            "requestedToCapacityRatio": {"shape": _SHAPE},
        },
    },
    "PodTopologySpread": {
        **_TYPE_META,
        "defaultConstraints": _LIST(
            {
                "maxSkew": _ANY,
                "topologyKey": _ANY,
                "whenUnsatisfiable": _ANY,
                "labelSelector": _LABEL_SELECTOR,
                "minDomains": _ANY,
                "nodeAffinityPolicy": _ANY,
                "nodeTaintsPolicy": _ANY,
                "matchLabelKeys": _ANY,
            }
        ),
        "defaultingType": _ANY,
    },
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": _RESOURCES},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": _ANY, "shape": _SHAPE},
    "NodeAffinity": {
        **_TYPE_META,
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": _LIST(_NODE_SELECTOR_TERM)
            },
            "preferredDuringSchedulingIgnoredDuringExecution": _LIST(
                {"weight": _ANY, "preference": _NODE_SELECTOR_TERM}
            ),
        },
    },
    "DynamicResources": {**_TYPE_META, "filterTimeout": _ANY, "bindingTimeout": _ANY},
}
"""The fields of each registered ``<Name>Args`` kind."""

_PLUGIN_SET: Final = {
    "enabled": _LIST({"name": _ANY, "weight": _ANY}),
    "disabled": _LIST({"name": _ANY, "weight": _ANY}),
}
_PLUGIN_SETS: Final = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind", "multiPoint", "placementGenerate",
    "placementScore", "podGroupPostFilter",
)  # fmt: skip
_CONFIGURATION: Final = {
    **_TYPE_META,
    "parallelism": _ANY,
    "leaderElection": {
        "leaderElect": _ANY,
        "leaseDuration": _ANY,
        "renewDeadline": _ANY,
        "retryPeriod": _ANY,
        "resourceLock": _ANY,
        "resourceName": _ANY,
        "resourceNamespace": _ANY,
    },
    "clientConnection": {
        "kubeconfig": _ANY,
        "acceptContentTypes": _ANY,
        "contentType": _ANY,
        "qps": _ANY,
        "burst": _ANY,
    },
    "enableProfiling": _ANY,
    "enableContentionProfiling": _ANY,
    "percentageOfNodesToScore": _ANY,
    "podInitialBackoffSeconds": _ANY,
    "podMaxBackoffSeconds": _ANY,
    "profiles": _LIST(
        {
            "schedulerName": _ANY,
            "percentageOfNodesToScore": _ANY,
            "plugins": dict.fromkeys(_PLUGIN_SETS, _PLUGIN_SET),
            "pluginConfig": _LIST({"name": _ANY, "args": _ANY}),
        }
    ),
    "extenders": _LIST(
        {
            "urlPrefix": _ANY,
            "filterVerb": _ANY,
            "preemptVerb": _ANY,
            "prioritizeVerb": _ANY,
            "weight": _ANY,
            "bindVerb": _ANY,
            "enableHTTPS": _ANY,
            "tlsConfig": {
                "insecure": _ANY,
                "serverName": _ANY,
                "certFile": _ANY,
                "keyFile": _ANY,
                "caFile": _ANY,
                "certData": _ANY,
                "keyData": _ANY,
                "caData": _ANY,
            },
            "httpTimeout": _ANY,
            "nodeCacheCapable": _ANY,
            "managedResources": _LIST({"name": _ANY, "ignoredByScheduler": _ANY}),
            "ignorable": _ANY,
        }
    ),
    "delayCacheUntilActive": _ANY,
}


def _unknown(value: Any, spec: _Spec, path: str, found: list[str]) -> None:
    # Iterative: the input is at most MAX_DEPTH deep, but no recursion is needed anyway.
    stack = [(value, spec, path)]
    while stack:
        value, spec, path = stack.pop()
        if isinstance(spec, _LIST):
            if isinstance(value, list):
                stack.extend(
                    (item, spec.item, f"{path}[{index}]") for index, item in enumerate(value)
                )
            continue
        if not isinstance(spec, dict) or not isinstance(value, dict):
            continue
        for key in value:
            where = f"{path}.{key}" if path else str(key)
            if key not in spec:
                found.append(where)
            else:
                stack.append((value[key], spec[key], where))
    found.sort(key=lambda p: p)


def strict_problems(doc: Mapping[str, Any]) -> list[str]:
    """Every unknown field of a configuration document, in kube-scheduler's words."""
    problems: list[str] = []
    top: list[str] = []
    _unknown(dict(doc), _CONFIGURATION, "", top)
    problems.extend(f"strict decoding error: unknown field {go_quote(p)}" for p in top)
    profiles = doc.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else ()):
        configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
        for j, entry in enumerate(configs if isinstance(configs, list) else ()):
            if not isinstance(entry, dict):
                continue
            name, args = entry.get("name"), entry.get("args")
            spec = ARGS.get(name) if isinstance(name, str) else None
            if spec is None or not isinstance(args, dict):
                continue
            found: list[str] = []
            _unknown(args, spec, "", found)
            problems.extend(
                f"decoding .profiles[{i}].pluginConfig[{j}]: decoding args for plugin {name}: "
                f"strict decoding error: unknown field {go_quote(p)}"
                for p in found
            )
    return problems
