"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) of kube-scheduler v1.37.1.

:func:`decode_configuration` turns a parsed document into a defaulted, validated
:class:`SchedulerConfiguration`; :func:`default_configuration` is what kube-scheduler
runs with when given no file.
"""

from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import (
    IN_TREE_PLUGINS,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PluginRef,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
    Profile,
    SchedulerConfiguration,
    ScoringStrategy,
)

__all__ = [
    "IN_TREE_PLUGINS",
    "NodeAffinityArgs",
    "NodeResourcesFitArgs",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
    "Profile",
    "SchedulerConfiguration",
    "ScoringStrategy",
    "decode_configuration",
    "default_configuration",
]
