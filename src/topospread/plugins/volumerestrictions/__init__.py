"""VolumeRestrictions: in-tree disks that cannot be shared with pods already on a node."""

from topospread.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    NAME,
    VolumeRestrictions,
    is_volume_conflict,
    new,
)

__all__ = ["ERR_REASON_DISK_CONFLICT", "NAME", "VolumeRestrictions", "is_volume_conflict", "new"]
