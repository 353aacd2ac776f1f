"""Fluent builders of Kubernetes objects for tests (usable by downstream projects too)."""

from topospread.testing.wrappers import (
    NodeBuilder,
    PodBuilder,
    SelectorBuilder,
    make_node,
    make_pod,
    make_selector,
)

__all__ = ["NodeBuilder", "PodBuilder", "SelectorBuilder", "make_node", "make_pod", "make_selector"]
