"""The plugin registry: plugin name -> factory, in-tree and from installed distributions.

Nothing registers itself on import. :func:`in_tree_registry` is the plugins of this
package; :func:`registry` adds the plugins other distributions register under the entry
point group ``topospread.plugins`` (name -> factory, the in-tree factories' signature,
usually a :class:`~topospread.framework.runtime.PluginFactoryWithArgs`), loaded on first
use and once per process. Every product command builds its frameworks from
:func:`registry` and decodes configurations with :func:`args_decoders`, so that a
``pip install``-ed plugin is enabled by name in a KubeSchedulerConfiguration like an
in-tree one. kube-scheduler needs a recompiled binary (``app.WithPlugin``) for that.

An entry point is refused, with one line naming its distribution and entry point (logged
as a warning, and kept for :func:`refused_plugins`), when its name is an in-tree plugin's
(upstream's ``Registry.Merge`` refuses a duplicate name), when it fails to import, or when
what it names is not callable.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from importlib import metadata

from topospread.errors import ConfigError
from topospread.framework.config.args import ArgsDecoder
from topospread.framework.config.types import IN_TREE_PLUGINS, PodTopologySpreadArgs
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.framework.runtime import PluginFactory, PluginFactoryWithArgs
from topospread.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    names,
    nodeports,
)
from topospread.plugins.interpodaffinity import plugin as inter_pod_affinity
from topospread.plugins.nodeaffinity import node_affinity
from topospread.plugins.nodedeclaredfeatures import node_declared_features
from topospread.plugins.nodename import node_name
from topospread.plugins.noderesources import balanced_allocation, fit
from topospread.plugins.nodeunschedulable import node_unschedulable
from topospread.plugins.nodevolumelimits import csi as node_volume_limits
from topospread.plugins.podtopologyspread import PodTopologySpread
from topospread.plugins.queuesort import priority_sort
from topospread.plugins.schedulinggates import scheduling_gates
from topospread.plugins.tainttoleration import taint_toleration
from topospread.plugins.volumebinding import plugin as volume_binding
from topospread.plugins.volumerestrictions import volume_restrictions
from topospread.plugins.volumezone import volume_zone

__all__ = [
    "ENTRY_POINT_GROUP",
    "args_decoders",
    "in_tree_registry",
    "refused_plugins",
    "registry",
]

ENTRY_POINT_GROUP = "topospread.plugins"
"""The entry point group other distributions register plugins under."""

log = logging.getLogger("topospread.plugins")


def _pod_topology_spread(args: object | None, handle: Handle, features: Features) -> Plugin:
    if args is None:
        args = PodTopologySpreadArgs()
    if not isinstance(args, PodTopologySpreadArgs):
        raise ConfigError(
            "", [f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}"]
        )
    return PodTopologySpread(args, handle, features)


def in_tree_registry() -> dict[str, PluginFactory]:
    """Factories of every plugin topospread implements, by upstream name."""
    registry: dict[str, PluginFactory] = {
        names.DEFAULT_BINDER: defaultbinder.new,
        names.DEFAULT_PREEMPTION: defaultpreemption.new,
        names.DYNAMIC_RESOURCES: dynamicresources.new,
        names.IMAGE_LOCALITY: imagelocality.new,
        names.INTER_POD_AFFINITY: inter_pod_affinity.new,
        names.NODE_AFFINITY: node_affinity.new,
        names.NODE_DECLARED_FEATURES: node_declared_features.new,
        names.NODE_NAME: node_name.new,
        names.NODE_PORTS: nodeports.new,
        names.NODE_RESOURCES_BALANCED_ALLOCATION: balanced_allocation.new_balanced_allocation,
        names.NODE_RESOURCES_FIT: fit.new_fit,
        names.NODE_UNSCHEDULABLE: node_unschedulable.new,
        names.NODE_VOLUME_LIMITS: node_volume_limits.new,
        names.POD_TOPOLOGY_SPREAD: _pod_topology_spread,
        names.PRIORITY_SORT: priority_sort.new,
        names.SCHEDULING_GATES: scheduling_gates.new,
        names.TAINT_TOLERATION: taint_toleration.new,
        names.VOLUME_BINDING: volume_binding.new,
        names.VOLUME_RESTRICTIONS: volume_restrictions.new,
        names.VOLUME_ZONE: volume_zone.new,
    }
    return registry


@functools.cache
def _installed() -> tuple[Mapping[str, PluginFactory], tuple[str, ...]]:
    # Once per process: importing a plugin may be slow, and a refusal is said once.
    in_tree = in_tree_registry()
    loaded: dict[str, PluginFactory] = {}
    refused: list[str] = []
    # Sorted, so that of two distributions registering one name the same one always wins.
    found = sorted(
        metadata.entry_points(group=ENTRY_POINT_GROUP),
        key=lambda ep: (ep.name, ep.dist.name if ep.dist else "", ep.value),
    )
    for ep in found:
        dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
        where = f"plugin entry point {ep.name} = {ep.value} of {dist}"
        if ep.name in in_tree or ep.name in IN_TREE_PLUGINS:
            refused.append(f"{where} refused: {ep.name} is an in-tree plugin")
            continue
        if ep.name in loaded:
            refused.append(f"{where} refused: another distribution registers {ep.name}")
            continue
        try:
            factory = ep.load()
        except Exception as exc:  # any import failure of foreign code refuses the plugin
            refused.append(f"{where} refused: {type(exc).__name__}: {exc}")
            continue
        if not callable(factory):
            refused.append(f"{where} refused: {type(factory).__name__} is not a plugin factory")
            continue
        loaded[ep.name] = factory
    for line in refused:
        log.warning("%s", line)
    return loaded, tuple(refused)


def registry() -> dict[str, PluginFactory]:
    """The in-tree plugins and the installed distributions' plugins, by name: what every
    command builds its frameworks from."""
    return {**in_tree_registry(), **_installed()[0]}


def args_decoders() -> dict[str, ArgsDecoder]:
    """The args decoders of the installed plugins that declare one (their ``<Name>Args``
    kind), for :func:`~topospread.framework.config.decode.decode_configuration`."""
    return {
        name: factory.decode_args
        for name, factory in _installed()[0].items()
        if isinstance(factory, PluginFactoryWithArgs)
    }


def refused_plugins() -> tuple[str, ...]:
    """One line per refused entry point (see the module docstring)."""
    return _installed()[1]
