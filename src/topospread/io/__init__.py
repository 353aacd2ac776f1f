"""Reading Kubernetes objects and scheduler configurations (the I/O edge).

One reading path serves files, standard input and API responses:
:func:`decode_objects` (parsed JSON values) and :func:`decode_api_json` (bytes) decode and
validate exactly as :func:`load_cluster` and :func:`load_pod` do for files.
"""

from topospread.io.loader import (
    decode_api_json,
    decode_objects,
    load_cluster,
    load_configuration,
    load_documents,
    load_pod,
    parse_documents,
)

__all__ = [
    "decode_api_json",
    "decode_objects",
    "load_cluster",
    "load_configuration",
    "load_documents",
    "load_pod",
    "parse_documents",
]
