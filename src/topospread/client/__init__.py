"""Live clusters: kubeconfig, a request seam, paginated parallel reads (an edge layer).

Talks to an API server through the official ``kubernetes`` client's configuration and
urllib3 pool, imported lazily; responses are decoded by topospread's own decoder
(:func:`topospread.io.decode_objects`). Read-only, except the Lease that leader election
(:mod:`.leaderelection`) takes and renews.
"""

from topospread.client.config import Connection, connect, kubeconfig_paths
from topospread.client.live import LiveRead, parse_pod_reference, read_live, take_pod
from topospread.client.source import (
    DEFAULT_PAGE_SIZE,
    SCHEDULER_RESOURCES,
    ClusterRead,
    Resource,
    read_resources,
)
from topospread.client.transport import FakeTransport, Request, Response, Transport

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
