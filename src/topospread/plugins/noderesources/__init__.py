"""The NodeResources plugins; for now NodeResourcesFit's PreFilter and Filter."""

from topospread.plugins.noderesources.fit import (
    NAME,
    PRE_FILTER_STATE_KEY,
    Fit,
    InsufficientResource,
    NodeResourcesFitArgs,
    fits_request,
    new_fit,
)

__all__ = [
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "Fit",
    "InsufficientResource",
    "NodeResourcesFitArgs",
    "fits_request",
    "new_fit",
]
