"""Read scenario files (``kind: Scenario``) and the files they refer to.

The only I/O of the simulator: file references inside a scenario (``cluster.files``,
``apply.file``, ``schedulerConfig.file``) are resolved relative to the scenario's folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from topospread.engine.sim.scenario import Scenario, parse_scenario
from topospread.errors import DecodeError
from topospread.io.loader import load_documents

__all__ = ["load_scenario"]


def load_scenario(path: Path | str) -> Scenario:
    """Read, parse and check a scenario file; every problem names the file."""
    path = Path(path)
    documents = [d for d in load_documents(path) if d is not None]
    if len(documents) != 1:
        raise DecodeError(
            str(path), message=f"expected one Scenario document, found {len(documents)}"
        )

    def load(name: str) -> list[Any]:
        return load_documents(path.parent / name)

    return parse_scenario(documents[0], str(path), load)
