"""The DefaultBinder plugin: binds the pod to its node through the binding port."""

from topospread.plugins.defaultbinder.default_binder import NAME, DefaultBinder, new

__all__ = ["NAME", "DefaultBinder", "new"]
