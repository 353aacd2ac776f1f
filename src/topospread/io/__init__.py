"""Reading Kubernetes objects and scheduler configurations from files (the I/O edge)."""

from topospread.io.loader import (
    load_cluster,
    load_configuration,
    load_documents,
    load_pod,
)

__all__ = ["load_cluster", "load_configuration", "load_documents", "load_pod"]
