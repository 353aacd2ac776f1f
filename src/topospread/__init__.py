"""topospread: Kubernetes Pod Topology Spread scheduling, exact to upstream kube-scheduler.

The package is layered; each layer imports only the layers below it:
``model`` (Kubernetes objects, selectors) → ``framework`` (status, cycle state,
runtime, configuration) → ``plugins`` → ``engine`` (explain, simulate) → edges
(``io`` file reading, ``cli``). Everything below the edges is pure: no I/O.
"""

import importlib as _importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

from topospread.errors import (
    ClusterError,
    ConfigError,
    DecodeError,
    InputError,
    TopospreadError,
    UnsupportedError,
    ValidationError,
)

if TYPE_CHECKING:
    from topospread.api import (
        Cluster,
        Explanation,
        Pod,
        SchedulerConfiguration,
        SimulationResult,
        cluster_from_objects,
        explain,
        explain_pod,
        load_cluster,
        load_configuration,
        load_pod,
        read_cluster,
        simulate,
    )

del TYPE_CHECKING  # not a public name of the package

KUBERNETES_VERSION = "v1.37.1"
"""The upstream kube-scheduler release topospread is faithful to (the oracle's go.mod pins it)."""

__version__ = "0.1.0"

# The scripting API (topospread.api), loaded on first use so that importing the package,
# and with it the command line's --help, stays fast.
_API = (
    "Cluster",
    "Explanation",
    "Pod",
    "SchedulerConfiguration",
    "SimulationResult",
    "cluster_from_objects",
    "explain",
    "explain_pod",
    "load_cluster",
    "load_configuration",
    "load_pod",
    "read_cluster",
    "simulate",
)

__all__ = [
    "KUBERNETES_VERSION",
    "Cluster",
    "ClusterError",
    "ConfigError",
    "DecodeError",
    "Explanation",
    "InputError",
    "Pod",
    "SchedulerConfiguration",
    "SimulationResult",
    "TopospreadError",
    "UnsupportedError",
    "ValidationError",
    "__version__",
    "cluster_from_objects",
    "explain",
    "explain_pod",
    "load_cluster",
    "load_configuration",
    "load_pod",
    "read_cluster",
    "simulate",
]


def __getattr__(name: str) -> _Any:
    if name in _API:
        # A dynamic import: the layers below import this package for KUBERNETES_VERSION and
        # must not depend on the API layer at the top.
        api = _importlib.import_module("topospread.api")
        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'topospread' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
