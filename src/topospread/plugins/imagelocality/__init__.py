"""The ImageLocality plugin: prefer nodes that already hold the pod's container images."""

from topospread.plugins.imagelocality.image_locality import (
    MAX_CONTAINER_THRESHOLD,
    MIN_THRESHOLD,
    NAME,
    ImageLocality,
    ImageState,
    new,
    normalized_image_name,
)

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "ImageState",
    "new",
    "normalized_image_name",
]
