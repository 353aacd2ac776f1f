"""topospread: Kubernetes Pod Topology Spread scheduling, exact to upstream kube-scheduler.

The package is layered; each layer imports only the layers below it:
``model`` (Kubernetes objects, selectors) → ``framework`` (status, cycle state,
runtime, configuration) → ``plugins`` → ``engine`` (explain, simulate) → edges
(``io`` file reading, ``cli``). Everything below the edges is pure: no I/O.
"""

from topospread.errors import (
    ConfigError,
    DecodeError,
    InputError,
    TopospreadError,
    UnsupportedError,
    ValidationError,
)

KUBERNETES_VERSION = "v1.37.1"
"""The upstream kube-scheduler release topospread is faithful to (the oracle's go.mod pins it)."""

__version__ = "0.1.0"

__all__ = [
    "KUBERNETES_VERSION",
    "ConfigError",
    "DecodeError",
    "InputError",
    "TopospreadError",
    "UnsupportedError",
    "ValidationError",
    "__version__",
]
