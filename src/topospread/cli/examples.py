"""The bundled examples shipped inside the package (``topospread/examples/<name>/``)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import click

__all__ = ["Example", "all_examples", "find"]


@dataclass(frozen=True, slots=True)
class Example:
    """A bundled example: cluster file, pod file, optional scheduler config."""

    name: str
    summary: str
    cluster: tuple[Path, ...]
    pod: Path
    config: Path | None


def _root() -> Path:
    return Path(str(resources.files("topospread") / "examples"))


def all_examples() -> list[Example]:
    """Every bundled example, by name."""
    found = []
    for folder in sorted(p for p in _root().iterdir() if p.is_dir()):
        pod = folder / "pod.yaml"
        if not pod.exists():
            continue
        readme = folder / "README"
        summary = (
            readme.read_text(encoding="utf-8").strip().splitlines()[0] if readme.exists() else ""
        )
        config = folder / "config.yaml"
        found.append(
            Example(
                folder.name,
                summary,
                (folder / "cluster.yaml",),
                pod,
                config if config.exists() else None,
            )
        )
    return found


def find(name: str) -> Example:
    """The example called ``name``; a usage error listing the names otherwise."""
    for example in all_examples():
        if example.name == name:
            return example
    names = ", ".join(e.name for e in all_examples())
    raise click.UsageError(f"no bundled example {name!r}; choose one of: {names}")
