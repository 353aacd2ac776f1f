"""Fixtures of the benchmark scripts' smoke tests: a script loaded as a module."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_module() -> Callable[[str, Path], ModuleType]:
    """Loads the file at a path (a benchmark script) as the module of a name."""
    return _load


@pytest.fixture(scope="session")
def benchmark_script(load_module: Callable[[str, Path], ModuleType]) -> Callable[[str], ModuleType]:
    """Loads ``benchmarks/NAME.py`` as the module ``NAME``."""
    return lambda name: load_module(name, REPO / "benchmarks" / f"{name}.py")
