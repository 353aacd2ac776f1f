"""DynamicResources, as far as pods without resource claims meet it: PreFilter and PostFilter."""

from topospread.plugins.dynamicresources.dynamic_resources import NAME, DynamicResources, new

__all__ = ["NAME", "DynamicResources", "new"]
