"""`topospread --help` and `--version` come from a group that imports no command module."""

from __future__ import annotations

import ast
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


def imported_after(runs: list[list[str]], modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running the console
    script with each argument list of ``runs``."""
    code = (
        "import sys\n"
        "from topospread.cli import main\n"
        f"for args in {runs!r}:\n"
        "    sys.argv = ['topospread', *args]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print([m for m in {modules!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_help_and_version_import_neither_numpy_nor_the_commands() -> None:
    heavy = ("numpy", "topospread.cli.commands", "topospread.engine.sim")
    heavy += ("topospread.cli.render_html", "yaml")
    assert imported_after([["--help"], ["--version"]], heavy) == []


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
    heavy = ("topospread.cli.commands", "topospread.engine.sim", "topospread.cli.render_html")
    assert imported_after([["scheduler", "--help"]], heavy) == []


def test_the_scheduler_process_imports_neither_rich_tables_nor_libcurl(tmp_path) -> None:
    # It runs as far as its kubeconfig (missing here): every import of its start is done.
    # Its output is logs, not tables, and only its write process sends through libcurl.
    run = ["scheduler", "--kubeconfig", str(tmp_path / "missing.kubeconfig"), "--port", "0"]
    heavy = ("topospread.scheduler.app", "rich.console", "rich.table", "pycurl")
    assert imported_after([run], heavy) == ["topospread.scheduler.app"]
