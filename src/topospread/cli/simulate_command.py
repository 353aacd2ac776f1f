"""``topospread simulate``: a what-if scenario step by step, or ``--runs N`` of it over
random tie-breaks (local processes or Ray), as text, JSON and an HTML report.

Exit status: 0 simulated, 2 bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from topospread.cli import examples as bundled
from topospread.cli.console import text_console
from topospread.cli.live import scenario_from_cluster
from topospread.cli.options import html_option, kubeconfig_options, output_option
from topospread.cli.render_html import (
    html_target_problem,
    render_html,
    render_sweep_html,
    write_html,
)
from topospread.cli.render_simulate import render_simulation, render_sweep
from topospread.cli.shared import reports_errors
from topospread.engine.sim.scenario import Scenario
from topospread.engine.sim.simulator import SimProgress, simulate
from topospread.errors import InputError, UnsupportedError
from topospread.io.scenarios import load_scenario

__all__ = ["simulate_command"]


@click.command("simulate")
@click.argument("scenario", required=False, metavar="[SCENARIO]")
@click.option("--seed", type=int, default=None, help="RNG seed (pod names, random ties).")
@click.option(
    "--tie-break",
    type=click.Choice(["first", "random"]),
    default="first",
    show_default=True,
    help="Among equally scored nodes: the first in node order, or a seeded random one.",
)
@output_option("text", "json")
@html_option("report (pictures, skew chart)")
@click.option("--list", "list_only", is_flag=True, help="List the bundled scenarios.")
@click.option(
    "--from-cluster",
    "from_cluster",
    is_flag=True,
    help="Start from the live cluster of the kubeconfig context (read-only), with the "
    "SCENARIO's steps if one is given.",
)
@click.option(
    "--runs",
    type=int,
    default=1,
    show_default=True,
    help="Run the scenario N times over random tie-breaks (seeds --seed..): distributions.",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Local worker processes for --runs [default: every core].",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    help="Run the --runs on a Ray cluster (host:port, ray://..., or local); "
    "pip install 'topospread[ray]'.",
)
@kubeconfig_options
@reports_errors
def simulate_command(
    scenario: str | None,
    seed: int | None,
    tie_break: str,
    output: str,
    html_path: Path | None,
    list_only: bool,
    from_cluster: bool,
    runs: int,
    workers: int | None,
    ray_address: str | None,
    kubeconfig: Path | None,
    context: str | None,
) -> None:
    """Run a what-if SCENARIO (a file, or a bundled name; default: the story)."""
    if runs < 1:
        raise InputError("", message=f"--runs {runs}: must be at least 1")
    if workers is not None and workers < 1:
        raise InputError("", message=f"--workers {workers}: must be at least 1")
    if (workers is not None or ray_address is not None) and runs == 1:
        raise click.UsageError("--workers and --ray go with --runs N (N > 1)")
    tie_break_given = (
        click.get_current_context().get_parameter_source("tie_break")
        is click.core.ParameterSource.COMMANDLINE
    )
    if runs > 1 and tie_break_given and tie_break == "first":
        raise click.UsageError(
            "--tie-break first with --runs N: the runs differ only in their random "
            "tie-breaks (seeds --seed..), so --runs always breaks ties at random"
        )
    if (kubeconfig is not None or context is not None) and not from_cluster:
        raise click.UsageError("--kubeconfig and --context go with --from-cluster")
    if list_only:
        if scenario is not None or html_path is not None:
            raise click.UsageError("--list takes no SCENARIO and no --html")
        for found in bundled.all_scenarios():
            click.echo(f"{found.name:32} {found.summary}")
        return
    if html_path is not None:
        # Checked before the simulation runs, which may be long.
        problem = html_target_problem(html_path)
        if problem is not None:
            raise InputError(str(html_path), message=problem)
    if from_cluster:
        parsed = scenario_from_cluster(
            bundled.scenario_path(scenario) if scenario else None, kubeconfig, context
        )
    else:
        parsed = load_scenario(bundled.scenario_path(scenario or "story"))
    # Piped or captured output: wide enough that the tables keep whole names.
    console = text_console(120)
    if runs > 1:
        _simulate_runs(parsed, runs, seed, workers, ray_address, output, html_path, console)
        return
    progress_console = Console(stderr=True)
    if progress_console.is_terminal:
        from rich.progress import Progress

        with Progress(console=progress_console, transient=True) as bar:
            task = bar.add_task(f"simulating {parsed.name}", total=len(parsed.steps) + 1)

            def show(at: SimProgress) -> None:
                bar.update(
                    task,
                    completed=at.steps_done,
                    description=f"simulating {parsed.name}: step {at.steps_done}/"
                    f"{at.steps_total}, {at.pods_bound:,} pods bound",
                )

            try:
                result = simulate(parsed, seed, tie_break=tie_break, progress=show)
            except UnsupportedError as exc:
                raise exc.named(parsed.source) from None
    else:
        try:
            result = simulate(parsed, seed, tie_break=tie_break)
        except UnsupportedError as exc:
            raise exc.named(parsed.source) from None
    if html_path is not None:
        try:
            write_html(render_html(result, parsed), html_path)
        except OSError as exc:
            raise InputError(str(html_path), message=exc.strerror or "cannot write") from None
        click.echo(f"wrote {html_path}", err=True)
    if output == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        render_simulation(result, console)


def _simulate_runs(
    parsed: Scenario,
    runs: int,
    seed: int | None,
    workers: int | None,
    ray_address: str | None,
    output: str,
    html_path: Path | None,
    console: Console,
) -> None:
    from topospread.execution import run_sweep

    base = seed if seed is not None else (parsed.seed or 0)
    progress_console = Console(stderr=True)
    if progress_console.is_terminal:
        from rich.progress import Progress

        with Progress(console=progress_console, transient=True) as bar:
            task = bar.add_task(f"{runs} runs of {parsed.name}", total=runs)
            report = run_sweep(
                parsed,
                runs,
                base,
                workers=workers,
                ray_address=ray_address,
                progress=lambda done, _total: bar.update(task, completed=done),
            )
    else:
        report = run_sweep(parsed, runs, base, workers=workers, ray_address=ray_address)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    if html_path is not None:
        try:
            write_html(render_sweep_html(report, parsed), html_path)
        except OSError as exc:
            raise InputError(str(html_path), message=exc.strerror or "cannot write") from None
        click.echo(f"wrote {html_path}", err=True)
    if output == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        render_sweep(report, console)
