"""The import graph of src/: no cycles among modules (ALLOWED_CYCLES lists none), and the
import-linter contracts about topospread.testing cover every product package.

The graph is grimp's (import-linter's own library), built as ``lint-imports`` builds it:
imports inside functions count (they run, later), imports under ``TYPE_CHECKING`` do not
(they never run).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]

ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()
"""The import cycles allowed, each as the set of modules that import each other: none
since the CLI's command modules stopped importing each other (issue 20 item 5). Never add
one: break the cycle instead (move what both sides need into a module below
them, as model.decode_reader is below model.decode, decode_storage and decode_resource)."""


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "topospread", "hypothesis", cache_dir=None, exclude_type_checking_imports=True
    )


def _cycles(graph: grimp.ImportGraph) -> set[frozenset[str]]:
    # A module is on a cycle when something it imports (directly or not) imports it back;
    # the modules that import each other so form one strongly connected component.
    found: set[frozenset[str]] = set()
    for module in graph.modules:
        if not module.startswith("topospread"):
            continue
        both_ways = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if both_ways:
            found.add(frozenset({module, *both_ways}))
    return found


def test_modules_of_src_import_each_other_in_no_cycle_but_the_listed_ones(
    graph: grimp.ImportGraph,
) -> None:
    cycles = _cycles(graph)
    new = cycles - ALLOWED_CYCLES
    assert not new, f"new import cycles: {[sorted(c) for c in new]}"
    gone = ALLOWED_CYCLES - cycles
    assert not gone, f"cycles broken (remove them from ALLOWED_CYCLES): {[sorted(c) for c in gone]}"


@pytest.mark.parametrize(
    "module",
    [
        "topospread.model.decode",
        "topospread.model.decode_storage",
        "topospread.model.decode_resource",
    ],
)
def test_the_decoders_are_on_no_cycle(graph: grimp.ImportGraph, module: str) -> None:
    # They were, through the reader they shared; model.decode_reader is below all three now.
    assert not graph.find_upstream_modules(module) & graph.find_downstream_modules(module)


def test_the_contracts_on_test_only_code_name_every_product_package_as_a_source(
    graph: grimp.ImportGraph,
) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}
    product = graph.find_children("topospread") - {"topospread.testing"}
    for name in (
        "Product code never imports topospread.testing",
        "Product code never imports hypothesis",
    ):
        assert set(contracts[name]["source_modules"]) == product, name


def test_the_package_root_imports_neither_testing_nor_hypothesis(graph: grimp.ImportGraph) -> None:
    # The contracts' sources are the root's children; the root itself is checked here.
    imported = graph.find_upstream_modules("topospread", as_package=False)
    assert not {m for m in imported if m.startswith(("topospread.testing", "hypothesis"))}
