"""DynamicResources: ResourceClaims with structured parameters, decided as upstream does
for the subset :mod:`.support` describes and refused outside it."""

from topospread.plugins.dynamicresources.allocation import ClaimAllocation, plan_allocations
from topospread.plugins.dynamicresources.dynamic_resources import (
    NAME,
    DynamicResources,
    new,
    resolve_claims,
)
from topospread.plugins.dynamicresources.support import unsupported_reasons

__all__ = [
    "NAME",
    "ClaimAllocation",
    "DynamicResources",
    "new",
    "plan_allocations",
    "resolve_claims",
    "unsupported_reasons",
]
