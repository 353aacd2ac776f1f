"""VolumeZone: pods go where the zone and region labels of their bound volumes allow."""

from topospread.plugins.volumezone.volume_zone import (
    ERR_REASON_CONFLICT,
    NAME,
    TOPOLOGY_LABELS,
    VolumeZone,
    label_zones,
    new,
)

__all__ = ["ERR_REASON_CONFLICT", "NAME", "TOPOLOGY_LABELS", "VolumeZone", "label_zones", "new"]
