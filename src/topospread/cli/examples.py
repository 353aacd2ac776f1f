"""The bundled examples shipped inside the package (``topospread/examples/<name>/``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import click

from topospread.errors import cut, go_quote

__all__ = ["Example", "Scenario", "all_examples", "all_scenarios", "find", "scenario_path"]


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
    raise click.UsageError(f"no bundled example {go_quote(cut(name))}; choose one of: {names}")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A bundled simulation scenario (``examples/scenarios/<name>.yaml``)."""

    name: str
    summary: str
    path: Path


def all_scenarios() -> list[Scenario]:
    """Every bundled scenario, by name; the summary is its ``description``'s first sentence."""
    import yaml

    found = []
    for path in sorted((_root() / "scenarios").glob("*.yaml")):
        document = yaml.load(
            path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
        description = " ".join(str(document.get("description") or "").split())
        sentence = re.match(r"(.+?[.!?])(?:\s|$)", description)
        found.append(Scenario(path.stem, sentence.group(1) if sentence else description, path))
    return found


def scenario_path(name_or_path: str) -> Path:
    """A scenario file: an existing path as given, else the bundled scenario of that name."""
    path = Path(name_or_path)
    try:
        exists = path.exists()
    except OSError:  # a name too long for a path, for one
        exists = False
    if path.suffix in (".yaml", ".yml", ".json") or name_or_path == "-" or exists:
        return path
    for scenario in all_scenarios():
        if scenario.name == name_or_path:
            return scenario.path
    names = ", ".join(s.name for s in all_scenarios())
    raise click.UsageError(
        f"no scenario file or bundled scenario {go_quote(cut(name_or_path))}; bundled: {names}"
    )
