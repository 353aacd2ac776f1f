"""The scheduler profiles a live cluster runs, read from its labelled ConfigMaps.

A scheduler deployed beside kube-scheduler (``topospread scheduler``, or another
kube-scheduler with its own profiles) serves the pods whose ``spec.schedulerName`` names
one of its profiles. ``explain``, ``audit`` and ``rebalance`` need those profiles to
decide as that scheduler does, so its KubeSchedulerConfiguration is published in a
ConfigMap labelled :data:`SCHEDULER_CONFIG_LABEL` ``"true"`` (deploy/scheduler/config.yaml
does), under the data key ``config.yaml`` (or its only key).

Rules, and why:

- Reading: one list of ConfigMaps with that label selector, cluster-wide. When RBAC allows
  that only per namespace (the reader role grants ConfigMaps in the schedulers' namespaces
  alone: ConfigMaps elsewhere may hold what a reader should not see), each namespace of
  :data:`SCHEDULER_CONFIG_NAMESPACES` is listed instead; a namespace still refused is a
  note, not an error (the command goes on with what it could read).
- Combining: upstream's default profile (``default-scheduler``) is kept unless a
  discovered configuration has its own (kube-scheduler's configuration, published with the
  same label); every discovered profile is added. A schedulerName that two ConfigMaps
  both define is taken from the first in namespace/name order, with a note. A profile
  that sets no ``percentageOfNodesToScore`` of its own takes its configuration's global
  one, so merging changes no profile's behaviour.
- A ConfigMap whose configuration does not decode is a note naming it and the first
  problem; its profiles stay unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import orjson

from topospread.client.source import Resource
from topospread.client.transport import Request, Transport, raise_for_status
from topospread.errors import ClusterError, Forbidden, TopospreadError
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import Profile, SchedulerConfiguration
from topospread.io.loader import parse_documents
from topospread.plugins.registry import args_decoders

__all__ = [
    "CONFIG_MAPS",
    "SCHEDULER_CONFIG_KEY",
    "SCHEDULER_CONFIG_LABEL",
    "SCHEDULER_CONFIG_NAMESPACES",
    "DiscoveredSchedulers",
    "combine_configurations",
    "discover_schedulers",
]

SCHEDULER_CONFIG_LABEL: Final = "topospread.dev/scheduler-config"
"""The label (value ``"true"``) of ConfigMaps holding a running scheduler's configuration."""
SCHEDULER_CONFIG_KEY: Final = "config.yaml"
"""The data key read (a ConfigMap with one key: that key)."""
SCHEDULER_CONFIG_NAMESPACES: Final = ("topospread-system", "kube-system")
"""Listed one by one when a cluster-wide list is forbidden."""

CONFIG_MAPS: Final = Resource("", "v1", "configmaps", "ConfigMap")


@dataclass(frozen=True, slots=True)
class DiscoveredSchedulers:
    """The combined configuration, where its profiles came from, and notes."""

    configuration: SchedulerConfiguration
    sources: tuple[tuple[str, tuple[str, ...]], ...]
    """``("ConfigMap NS/NAME", (schedulerName, ...))`` per configuration read."""
    notes: tuple[str, ...] = ()


def _list(transport: Transport, namespace: str | None) -> list[dict[str, Any]]:
    response = transport.send(
        Request(
            "GET",
            CONFIG_MAPS.path(namespace),
            (("labelSelector", f"{SCHEDULER_CONFIG_LABEL}=true"),),
        )
    )
    raise_for_status(
        response, transport.server, verb="list", resource="configmaps", namespace=namespace
    )
    page = orjson.loads(response.data)
    items = page.get("items") if isinstance(page, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _config_maps(transport: Transport) -> tuple[list[dict[str, Any]], list[str]]:
    try:
        return _list(transport, None), []
    except Forbidden:
        pass
    found: list[dict[str, Any]] = []
    refused: list[str] = []
    for namespace in SCHEDULER_CONFIG_NAMESPACES:
        try:
            found.extend(_list(transport, namespace))
        except Forbidden:
            refused.append(namespace)
    notes = []
    if refused:
        notes.append(
            f"scheduler configurations: may not list ConfigMaps in {', '.join(refused)} "
            "(RBAC); profiles published there are unknown "
            "(deploy/rbac/scheduler-configs.yaml grants it)"
        )
    return found, notes


def _name(item: dict[str, Any]) -> str:
    meta = item.get("metadata") or {}
    return f"ConfigMap {meta.get('namespace', '')}/{meta.get('name', '')}"


def _decode(item: dict[str, Any]) -> SchedulerConfiguration:
    source = _name(item)
    data = item.get("data") or {}
    text = data.get(SCHEDULER_CONFIG_KEY)
    if text is None and len(data) == 1:
        text = next(iter(data.values()))
    if not isinstance(text, str):
        raise ClusterError(f"{source}: no data key {SCHEDULER_CONFIG_KEY!r}")
    documents = [d for d in parse_documents(text.encode(), source) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise ClusterError(f"{source}: expected one KubeSchedulerConfiguration document")
    return decode_configuration(documents[0], source, args_decoders=args_decoders())


def _own_percentage(profile: Profile, configuration: SchedulerConfiguration) -> Profile:
    if profile.percentage_of_nodes_to_score is not None:
        return profile
    if configuration.percentage_of_nodes_to_score == 0:
        return profile
    return replace(profile, percentage_of_nodes_to_score=configuration.percentage_of_nodes_to_score)


def combine_configurations(
    discovered: Sequence[tuple[str, SchedulerConfiguration]],
) -> tuple[SchedulerConfiguration, list[str]]:
    """Upstream's default configuration with every discovered profile (see the module's
    rules); also notes on scheduler names defined twice."""
    base = default_configuration()
    profiles: dict[str, Profile] = {}
    origin: dict[str, str] = {}
    notes: list[str] = []
    for source, configuration in discovered:
        for profile in configuration.profiles:
            name = profile.scheduler_name
            if name in origin:
                notes.append(
                    f'schedulerName "{name}" is defined by {origin[name]} and {source}: '
                    f"the first is used"
                )
                continue
            profiles[name] = _own_percentage(profile, configuration)
            origin[name] = source
    for profile in base.profiles:
        profiles.setdefault(profile.scheduler_name, profile)
    ordered = [
        *(p for p in base.profiles if origin.get(p.scheduler_name) is None),
        *(profiles[name] for name in origin),
    ]
    return replace(base, profiles=tuple(ordered)), notes


def discover_schedulers(transport: Transport) -> DiscoveredSchedulers:
    """Read the labelled ConfigMaps and combine their configurations with the default."""
    items, notes = _config_maps(transport)
    items.sort(key=lambda i: _name(i))
    decoded: list[tuple[str, SchedulerConfiguration]] = []
    for item in items:
        try:
            decoded.append((_name(item), _decode(item)))
        except TopospreadError as exc:
            notes.append(f"{exc}; its profiles are unknown")
    configuration, combine_notes = combine_configurations(decoded)
    sources = tuple((s, tuple(p.scheduler_name for p in c.profiles)) for s, c in decoded)
    return DiscoveredSchedulers(configuration, sources, (*notes, *combine_notes))
