"""NodeVolumeLimits: CSI attach limits per node, counting migrated in-tree volumes too."""

from topospread.plugins.nodevolumelimits.csi import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    MIGRATION_ON_PLUGINS,
    NAME,
    CSILimits,
    driver_not_installed,
    new,
)

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "MIGRATION_ON_PLUGINS",
    "NAME",
    "CSILimits",
    "driver_not_installed",
    "new",
]
