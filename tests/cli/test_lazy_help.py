"""`topospread --help` and `--version` come from a group that imports no command module."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.cli.lazy import MODULES, SUMMARIES, lazy_cli


def test_the_summaries_are_the_commands_help() -> None:
    ctx = click.Context(cli)
    real = {}
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        if not command.hidden:
            real[name] = (command.help or "").split("\n\n")[0]
    assert {n: " ".join(t.split()) for n, t in real.items()} == {
        n: " ".join(t.split()) for n, t in SUMMARIES.items()
    }


def test_help_lists_the_same_commands_as_the_real_group() -> None:
    lazy = CliRunner().invoke(lazy_cli, ["--help"])
    real = CliRunner().invoke(cli, ["--help"])
    assert lazy.exit_code == real.exit_code == 0
    assert lazy.output == real.output


def test_help_and_version_import_neither_numpy_nor_the_commands() -> None:
    code = (
        "import sys\n"
        "from topospread.cli import main\n"
        "for args in (['--help'], ['--version']):\n"
        "    sys.argv = ['topospread', *args]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('numpy', 'topospread.cli.commands', 'topospread.engine.sim',\n"
        "         'topospread.cli.render_html', 'yaml') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout


def test_a_command_runs_through_the_lazy_group() -> None:
    result = CliRunner().invoke(lazy_cli, ["examples"])
    assert result.exit_code == 0
    assert "one-constraint" in result.output


def test_each_command_is_looked_up_in_its_own_module() -> None:
    ctx = click.Context(lazy_cli)
    real_ctx = click.Context(cli)
    assert set(MODULES) == set(SUMMARIES)
    for name in MODULES:
        assert lazy_cli.get_command(ctx, name) is cli.get_command(real_ctx, name)


def test_the_scheduler_starts_without_the_renderers_and_the_simulator() -> None:
    code = (
        "import sys\n"
        "from topospread.cli import main\n"
        "sys.argv = ['topospread', 'scheduler', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('topospread.cli.commands', 'topospread.engine.sim',\n"
        "         'topospread.cli.render_html') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout
