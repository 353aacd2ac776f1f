"""Read scenario files (``kind: Scenario``) and the files they refer to.

The only I/O of the simulator: file references inside a scenario (``cluster.files``,
``apply.file``, ``schedulerConfig.file``) are resolved relative to the scenario's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from topospread.engine.sim.scenario import API_VERSION, KIND, Scenario, parse_scenario
from topospread.errors import DecodeError
from topospread.io.loader import load_documents

__all__ = ["load_scenario"]


def load_scenario(
    path: Path | str | None,
    *,
    starting_objects: Sequence[Mapping[str, Any]] = (),
    starting_source: str = "",
) -> Scenario:
    """Read, parse and check a scenario file; every problem names the file.

    ``starting_objects`` (raw objects, e.g. read from a live cluster named by
    ``starting_source``) join the scenario's starting cluster as if they were one more
    entry of ``cluster.files``. With ``path`` None they are the whole scenario: the
    cluster as it is, no steps.
    """
    if path is None:
        document: Any = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": "from-cluster"},
            "description": f"The cluster at {starting_source}, as it is now.",
        }
        source, folder = starting_source or "from-cluster", Path(".")
    else:
        path = Path(path)
        documents = [d for d in load_documents(path) if d is not None]
        if len(documents) != 1:
            raise DecodeError(
                str(path), message=f"expected one Scenario document, found {len(documents)}"
            )
        document, source, folder = documents[0], str(path), path.parent
    if starting_objects and isinstance(document, dict):
        cluster = document.get("cluster") or {}
        if isinstance(cluster, dict):
            files = cluster.get("files") or []
            if isinstance(files, list):
                cluster = {**cluster, "files": [*files, starting_source]}
                document = {**document, "cluster": cluster}

    def load(name: str) -> list[Any]:
        if starting_objects and name == starting_source:
            return [{"apiVersion": "v1", "kind": "List", "items": list(starting_objects)}]
        return load_documents(folder / name)

    return parse_scenario(document, source, load)
