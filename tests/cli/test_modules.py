"""The CLI's modules: one per command, over shared helpers; no command module imports
another, nor the group module that assembles them."""

from __future__ import annotations

import click
import grimp
import pytest

from topospread.cli.commands import cli


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("topospread", cache_dir=None, exclude_type_checking_imports=True)


def _command_modules() -> dict[str, str]:
    ctx = click.Context(cli)
    found = {}
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        assert command.callback is not None
        found[name] = command.callback.__module__
    return found


def test_each_command_lives_in_its_own_module() -> None:
    modules = _command_modules()
    # audit and lint share their rule options and report code.
    assert modules.pop("lint") == modules["audit"] == "topospread.cli.audit_command"
    assert len(set(modules.values())) == len(modules)
    for name, module in modules.items():
        assert module == f"topospread.cli.{name}_command", name


def test_no_command_module_imports_another_or_the_group(graph: grimp.ImportGraph) -> None:
    commands = set(_command_modules().values())
    for module in commands:
        reached = graph.find_upstream_modules(module)
        assert not reached & (commands | {"topospread.cli.commands", "topospread.cli.lazy"}), module
