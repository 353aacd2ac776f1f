"""Live clusters: kubeconfig, a request seam, paginated parallel reads (an edge layer).

Talks to an API server through the official ``kubernetes`` client's configuration and
urllib3 pool, imported lazily; responses are decoded by topospread's own decoder
(:func:`topospread.io.decode_objects`). Read-only, except the Lease that leader election
(:mod:`.leaderelection`) takes and renews.

The reads (:mod:`.live`, :mod:`.source`) bring the decoder and the engine with them, so
they are imported when first named: the scheduler's write processes, which only send,
start without them (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from topospread.client.config import Connection, connect, kubeconfig_paths
from topospread.client.transport import FakeTransport, Request, Response, Transport

if TYPE_CHECKING:
    from topospread.client.live import LiveRead, parse_pod_reference, read_live, take_pod
    from topospread.client.source import (
        DEFAULT_PAGE_SIZE,
        SCHEDULER_RESOURCES,
        ClusterRead,
        Resource,
        read_resources,
    )

_LAZY = {
    "LiveRead": "live",
    "parse_pod_reference": "live",
    "read_live": "live",
    "take_pod": "live",
    "DEFAULT_PAGE_SIZE": "source",
    "SCHEDULER_RESOURCES": "source",
    "ClusterRead": "source",
    "Resource": "source",
    "read_resources": "source",
}

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "SCHEDULER_RESOURCES",
    "ClusterRead",
    "Connection",
    "FakeTransport",
    "LiveRead",
    "Request",
    "Resource",
    "Response",
    "Transport",
    "connect",
    "kubeconfig_paths",
    "parse_pod_reference",
    "read_live",
    "read_resources",
    "take_pod",
]


if not TYPE_CHECKING:  # mypy sees the names imported above, and no others

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
