"""Click commands: each checks its options, calls one library function, renders the result."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from topospread import KUBERNETES_VERSION, __version__
from topospread.cli import examples as bundled
from topospread.cli.live import (
    explain_live_pod,
    explain_live_pod_with_pools,
    kube_options,
    kubeconfig_options,
    live_configuration,
    scenario_from_cluster,
    settle_loaded_objects,
    snapshot_command,
)
from topospread.cli.options import html_option, output_option
from topospread.cli.render_explain import render_explanation, render_scale_up
from topospread.cli.render_html import (
    html_target_problem,
    render_html,
    render_sweep_html,
    write_html,
)
from topospread.cli.render_simulate import render_simulation, render_sweep
from topospread.engine.autoscale import AUTOSCALERS, EXPANDERS, ScaleUp, plan_scale_up
from topospread.engine.explain import Explanation, explain
from topospread.engine.sim.scenario import Scenario
from topospread.engine.sim.simulator import SimProgress, simulate
from topospread.errors import InputError, TopospreadError, UnsupportedError
from topospread.io import load_cluster, load_configuration, load_pod
from topospread.io.pools import load_instance_types, load_node_pools
from topospread.io.scenarios import load_scenario

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INPUT = 2


def _reports_errors(command: F) -> F:
    """Turn our exceptions into one readable message on stderr and exit status 2."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as exc:
            for line in exc.lines():
                click.echo(line, err=True)
            sys.exit(EXIT_INPUT)
        except UnsupportedError as exc:
            where = f"{exc.source}: " if exc.source else ""
            click.echo(f"{where}unsupported: {exc.message}", err=True)
            sys.exit(EXIT_INPUT)
        except TopospreadError as exc:
            click.echo(str(exc), err=True)
            sys.exit(EXIT_INPUT)

    return wrapper  # type: ignore[return-value]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "TOPOSPREAD"}
)
@click.version_option(
    __version__, message=f"%(prog)s %(version)s (kube-scheduler {KUBERNETES_VERSION})"
)
def cli() -> None:
    """Kubernetes Pod Topology Spread: where pods land, why one is Pending, how to keep spread."""


@cli.command("explain")
@click.argument("target", required=False, metavar="[pod/NAME | NS/NAME]")
@click.option(
    "--cluster",
    "cluster_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="YAML/JSON file of Nodes, Pods, Services, ReplicaSets... (repeatable).",
)
@click.option(
    "--pod",
    "pod_file",
    type=click.Path(path_type=Path),
    help="YAML/JSON file holding the pod to schedule.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); default profile if omitted.",
)
@click.option(
    "--example",
    "example",
    metavar="NAME",
    help="Run a bundled example instead of files (see `topospread examples`).",
)
@output_option("text", "json")
@click.option(
    "--tie-break",
    type=click.Choice(["first", "random"]),
    default="first",
    show_default=True,
    help="Among equally scored nodes: kube-scheduler's score heap over the nodes in input "
    "order (first), or one drawn with --seed (random).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="RNG seed for random ties.")
@click.option(
    "--node-pools",
    "pool_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Node pools an autoscaler grows: template Nodes annotated "
    "autoscaling.topospread.dev/pool, or karpenter.sh/v1 NodePools (repeatable).",
)
@click.option(
    "--instance-types",
    "instance_types_file",
    type=click.Path(path_type=Path),
    help="Instance types for Karpenter NodePools (the KWOK provider's instance_types.json).",
)
@click.option(
    "--autoscaler",
    type=click.Choice(AUTOSCALERS),
    default=None,
    help="Whose scale-up to predict [default: karpenter for NodePools, else cluster-autoscaler].",
)
@click.option(
    "--expander",
    type=click.Choice(EXPANDERS),
    default="least-waste",
    show_default=True,
    help="Cluster Autoscaler's choice among pools that help (random uses --seed).",
)
@kube_options
@_reports_errors
def explain_command(
    target: str | None,
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    cluster_files: Sequence[Path],
    pod_file: Path | None,
    config_file: Path | None,
    example: str | None,
    output: str,
    tie_break: str,
    seed: int,
    pool_files: Sequence[Path],
    instance_types_file: Path | None,
    autoscaler: str | None,
    expander: str,
) -> None:
    """Explain one scheduling attempt: every node's verdict, the spread arithmetic, scores.

    Give a pod of the current kubeconfig context (pod/NAME, NS/NAME or NAME with -n), or
    --cluster and --pod files, or --example. With --node-pools (or template Nodes in the
    cluster files), also what an autoscaler would add for the pod and where it lands then.
    """
    if target is not None:
        if cluster_files or pod_file or example:
            raise click.UsageError(
                "a pod of a live cluster cannot be combined with --cluster, --pod or --example"
            )
        # Without --config: the profiles the cluster's schedulers publish (issue 22 item 12).
        configuration, config_notes = live_configuration(config_file, kubeconfig, context)
        if pool_files or instance_types_file or autoscaler:
            # The cluster's own autoscaler: its status ConfigMap or its NodePools.
            result, scale_up, notes = explain_live_pod_with_pools(
                target,
                namespace,
                kubeconfig,
                context,
                configuration,
                pool_files,
                instance_types_file,
                autoscaler,
                expander,
                seed,
            )
            _print_explanation(result, [*config_notes, *notes], output, scale_up)
            return
        result, notes = explain_live_pod(
            target, namespace, kubeconfig, context, configuration, tie_break, seed
        )
        _print_explanation(result, [*config_notes, *notes], output)
        return
    if kubeconfig is not None or context is not None or namespace is not None:
        raise click.UsageError(
            "--kubeconfig, --context and --namespace need a pod to explain (pod/NAME)"
        )
    if example is not None:
        if cluster_files or pod_file:
            raise click.UsageError("--example cannot be combined with --cluster or --pod")
        files = bundled.find(example)
        cluster_files, pod_file = files.cluster, files.pod
        config_file = config_file or files.config
    if not cluster_files or pod_file is None:
        raise click.UsageError(
            "give --cluster FILE (one or more) and --pod FILE, or --example NAME"
        )
    # The small inputs first: their errors are reported before a large cluster is read.
    configuration = load_configuration(config_file)
    pod = load_pod(pod_file)
    types = load_instance_types(instance_types_file) if instance_types_file else ()
    cluster, notes = load_cluster(cluster_files)
    pools = load_node_pools(pool_files, cluster.node_templates, types)
    settle_loaded_objects()
    try:
        result = explain(cluster, pod, configuration, tie_break=tie_break, seed=seed)
        planned: ScaleUp | None = None
        if pools:
            karpenter = any(p.source == "karpenter" for p in pools)
            planned = plan_scale_up(
                cluster,
                pod,
                cluster.pending_pods,
                pools,
                configuration,
                autoscaler=autoscaler or ("karpenter" if karpenter else "cluster-autoscaler"),
                expander=expander,
                seed=seed,
            )
    except InputError as exc:
        if exc.source:
            raise
        # A problem of the pod itself (its schedulerName names no profile): name its file.
        raise InputError(str(pod_file), exc.errors, message=exc.message) from None
    except UnsupportedError as exc:
        raise exc.named(str(pod_file)) from None
    _print_explanation(result, notes, output, planned)


def _print_explanation(
    result: Explanation, notes: Sequence[str], output: str, scale_up: ScaleUp | None = None
) -> None:
    for note in (*notes, *result.notes):
        click.echo(f"note: {note}", err=True)
    if output == "json":
        answer = result.to_json()
        if scale_up is not None:
            answer["autoscaling"] = scale_up.to_json()
        click.echo(json.dumps(answer, indent=2))
    else:
        console = Console(highlight=False, soft_wrap=True)
        if not console.is_terminal:
            # Piped or captured output: wide enough that score tables keep whole names.
            console = Console(highlight=False, soft_wrap=True, width=200)
        render_explanation(result, console)
        if scale_up is not None:
            render_scale_up(scale_up, console)


cli.add_command(snapshot_command)


@cli.command("examples")
def examples_command() -> None:
    """List the bundled examples (run one with `topospread explain --example NAME`)."""
    for example in bundled.all_examples():
        click.echo(f"{example.name:32} {example.summary}")


@cli.command("simulate")
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
@_reports_errors
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
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        # Piped or captured output: wide enough that the tables keep whole names.
        console = Console(highlight=False, soft_wrap=True, width=120)
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


from topospread.cli.audit_command import audit_command, lint_command  # noqa: E402

cli.add_command(audit_command)
cli.add_command(lint_command)

from topospread.cli.scheduler_command import scheduler_command  # noqa: E402

cli.add_command(scheduler_command)

from topospread.cli.rebalance_command import rebalance_command  # noqa: E402

cli.add_command(rebalance_command)

from topospread.cli.webhook_command import webhook_command  # noqa: E402

cli.add_command(webhook_command)


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


from topospread.cli.plan_command import plan_command  # noqa: E402

cli.add_command(plan_command)
