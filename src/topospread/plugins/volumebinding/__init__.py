"""VolumeBinding: a pod's PersistentVolumeClaims, bound, to bind or to provision, per node."""

from topospread.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BindingInfo,
    DynamicProvision,
    VolumeDecision,
    volume_decision,
)
from topospread.plugins.volumebinding.plugin import (
    ERR_UNBOUND_IMMEDIATE,
    NAME,
    VolumeBinding,
    new,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "BindingInfo",
    "DynamicProvision",
    "VolumeBinding",
    "VolumeDecision",
    "new",
    "volume_decision",
]
