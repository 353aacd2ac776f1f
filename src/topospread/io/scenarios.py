"""Read scenario files (``kind: Scenario``) and the files they refer to.

The only I/O of the simulator: file references inside a scenario (``cluster.files``,
``apply.file``, ``schedulerConfig.file``) are resolved relative to the scenario's folder
and must stay inside it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from topospread.engine.sim.scenario import API_VERSION, KIND, Scenario, parse_scenario
from topospread.errors import DecodeError, cut
from topospread.io.loader import load_documents

__all__ = ["load_scenario"]


_BUNDLED: Final = Path(os.path.realpath(Path(__file__).parent.parent / "examples"))
"""The bundled examples, whose scenarios share cluster files across their folders."""


def confined(folder: Path, name: str) -> Path:
    """The file ``name`` refers to, which must lie inside ``folder`` (links resolved).

    A scenario names its files relative to its own folder; an absolute path or ``..``
    that leaves it (``apply: {file: /etc/passwd}``) is refused, so that running someone
    else's scenario reads nothing else of the machine. Bundled scenarios may refer to
    any bundled example.
    """
    try:
        base = Path(os.path.realpath(folder))
        if base.is_relative_to(_BUNDLED):
            base = _BUNDLED
        target = Path(os.path.realpath(Path(os.path.realpath(folder)) / name))
    except (ValueError, OSError):  # a NUL byte, a name too long
        raise DecodeError(cut(repr(name)[1:-1]), message="not a usable file name") from None
    if not target.is_relative_to(base):
        raise DecodeError(
            cut(name), message=f"Forbidden: a file reference must stay inside {cut(str(base))}"
        )
    return target


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
        return load_documents(confined(folder, name))

    return parse_scenario(document, source, load)
