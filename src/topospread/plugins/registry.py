"""The in-tree plugin registry: plugin name -> factory.

Nothing registers itself on import. Entry points (CLI, simulator, extender) call
:func:`in_tree_registry` and may extend the returned mapping with out-of-tree plugins.
"""

from __future__ import annotations

from topospread.errors import ConfigError
from topospread.framework.config.types import PodTopologySpreadArgs
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.framework.runtime import PluginFactory
from topospread.plugins import (
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
from topospread.plugins.tainttoleration import taint_toleration
from topospread.plugins.volumebinding import plugin as volume_binding
from topospread.plugins.volumerestrictions import volume_restrictions
from topospread.plugins.volumezone import volume_zone

__all__ = ["in_tree_registry"]


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
        names.TAINT_TOLERATION: taint_toleration.new,
        names.VOLUME_BINDING: volume_binding.new,
        names.VOLUME_RESTRICTIONS: volume_restrictions.new,
        names.VOLUME_ZONE: volume_zone.new,
    }
    return registry
