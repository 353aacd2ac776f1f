"""Each in-tree plugin declares upstream's EventsToRegister (v1.37.1, default gates).

The table is read from ``pkg/scheduler/framework/plugins/*/`` of k8s.io/kubernetes v1.37.1:
resource, action types, and whether topospread evaluates upstream's queueing hint (the
others queue on every such event, as documented on each plugin's ``events_to_register``).
"""

from __future__ import annotations

import pytest

from topospread.framework.config.decode import default_configuration
from topospread.framework.events import ActionType as A
from topospread.framework.events import EventResource as R
from topospread.framework.interfaces import EnqueueExtensions, Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.plugins.registry import registry

UPSTREAM: dict[str, list[tuple[R, A, bool]]] = {
    "NodeName": [(R.NODE, A.ADD, False)],
    "NodeUnschedulable": [
        (R.NODE, A.ADD | A.UPDATE_NODE_TAINT, True),
        (R.TARGET_POD, A.UPDATE_POD_TOLERATION, False),
    ],
    "NodeAffinity": [(R.NODE, A.ADD | A.UPDATE_NODE_LABEL, True)],
    "TaintToleration": [
        (R.NODE, A.ADD | A.UPDATE_NODE_TAINT, True),
        (R.TARGET_POD, A.UPDATE_POD_TOLERATION, False),
    ],
    "NodePorts": [(R.ASSIGNED_POD, A.DELETE, True), (R.NODE, A.ADD, False)],
    "NodeResourcesFit": [
        (R.ASSIGNED_POD, A.DELETE, True),
        (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE, False),
        (R.DEVICE_CLASS, A.ADD | A.UPDATE, False),
        (R.ASSIGNED_POD, A.UPDATE_POD_SCALE_DOWN, False),
        (R.TARGET_POD, A.UPDATE_POD_SCALE_DOWN, False),
    ],
    "VolumeRestrictions": [
        (R.ASSIGNED_POD, A.DELETE, False),
        (R.NODE, A.ADD, False),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD, True),
    ],
    "NodeVolumeLimits": [
        (R.CSI_NODE, A.ADD, False),
        (R.CSI_NODE, A.UPDATE, False),
        (R.ASSIGNED_POD, A.DELETE, False),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD, True),
        (R.VOLUME_ATTACHMENT, A.DELETE, False),
    ],
    "VolumeBinding": [
        (R.STORAGE_CLASS, A.ADD | A.UPDATE, False),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD | A.UPDATE, False),
        (R.PERSISTENT_VOLUME, A.ADD | A.UPDATE, False),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, False),
        (R.CSI_NODE, A.ADD | A.UPDATE, False),
        (R.CSI_DRIVER, A.UPDATE, False),
        (R.CSI_STORAGE_CAPACITY, A.ADD | A.UPDATE, False),
    ],
    "VolumeZone": [
        (R.STORAGE_CLASS, A.ADD, False),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, False),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD | A.UPDATE, False),
        (R.PERSISTENT_VOLUME, A.ADD | A.UPDATE, False),
    ],
    "PodTopologySpread": [
        (R.ASSIGNED_POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE, False),
        (R.TARGET_POD, A.UPDATE_POD_TOLERATION | A.UPDATE_POD_LABEL, False),
        (R.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT, False),
    ],
    "InterPodAffinity": [
        (R.ASSIGNED_POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE, False),
        (R.TARGET_POD, A.UPDATE_POD_LABEL, False),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, False),
    ],
    "DynamicResources": [
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_ALLOCATABLE, False),
        (R.RESOURCE_CLAIM, A.ADD | A.UPDATE | A.DELETE, False),
        (R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM, False),
        (R.DEVICE_CLASS, A.ADD | A.UPDATE, False),
        (R.RESOURCE_SLICE, A.ADD | A.UPDATE, False),
    ],
    "NodeDeclaredFeatures": [
        (R.NODE, A.ADD | A.UPDATE_NODE_DECLARED_FEATURE, False),
        (R.TARGET_POD, A.UPDATE, False),
    ],
    "DefaultPreemption": [(R.ASSIGNED_POD, A.DELETE, False)],
    "SchedulingGates": [(R.POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, True)],
}


@pytest.fixture(scope="module")
def framework() -> Framework:
    return Framework(default_configuration().profiles[0], registry(), Handle(Snapshot([])))


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_events_to_register_are_upstreams(framework, name):
    plugin = framework.plugin(name)
    assert isinstance(plugin, EnqueueExtensions)
    declared = [
        (e.event.resource, e.event.action_type, e.queueing_hint_fn is not None)
        for e in plugin.events_to_register()
    ]
    assert declared == UPSTREAM[name]


def test_the_default_profile_requeues_by_its_rejecting_plugins_only(framework):
    # Score-only plugins (ImageLocality, BalancedAllocation) never reject: not registered.
    names = [name for name, _ in framework.enqueue_extensions()]
    assert sorted(names) == sorted(UPSTREAM)
