"""The NodeResources plugins: NodeResourcesFit (filter and score) and BalancedAllocation."""

from topospread.plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    new_balanced_allocation,
)
from topospread.plugins.noderesources.fit import (
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    Fit,
    InsufficientResource,
    NodeResourcesFitArgs,
    fits_request,
    new_fit,
)

__all__ = [
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "NodeResourcesFitArgs",
    "fits_request",
    "new_balanced_allocation",
    "new_fit",
]
