"""DynamicResources: ResourceClaims with structured parameters, decided as upstream does
for the subset :mod:`.support` describes and refused outside it."""

from topospread.plugins.dynamicresources.dynamic_resources import NAME, DynamicResources, new
from topospread.plugins.dynamicresources.support import unsupported_reasons

__all__ = ["NAME", "DynamicResources", "new", "unsupported_reasons"]
