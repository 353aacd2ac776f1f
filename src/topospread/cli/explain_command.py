"""``topospread explain``: one scheduling attempt, every node's verdict, the spread
arithmetic and the scores; with node pools, what an autoscaler would add.

Exit status: 0 explained (a pod that fits nowhere included), 2 bad input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from topospread.cli import examples as bundled
from topospread.cli.console import text_console
from topospread.cli.live import explain_live_pod, explain_live_pod_with_pools, live_configuration
from topospread.cli.options import kube_options, output_option
from topospread.cli.render_explain import render_explanation, render_scale_up
from topospread.cli.shared import (
    refuse_stdin_twice,
    reports_errors,
    settle_loaded_objects,
)
from topospread.engine.autoscale import AUTOSCALERS, EXPANDERS, ScaleUp, plan_scale_up
from topospread.engine.explain import Explanation, explain
from topospread.errors import InputError, UnsupportedError
from topospread.io import load_cluster, load_configuration, load_pod
from topospread.io.pools import load_instance_types, load_node_pools

__all__ = ["explain_command"]


@click.command("explain")
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
@reports_errors
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
        from topospread.client.live import parse_pod_reference

        try:
            parse_pod_reference(target, namespace)  # before anything is read
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
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
            "give a pod of the current kubeconfig context (pod/NAME), --cluster FILE (one "
            "or more) and --pod FILE, or --example NAME"
        )
    refuse_stdin_twice(
        {
            "--cluster": cluster_files,
            "--pod": pod_file,
            "--config": config_file,
            "--node-pools": pool_files,
            "--instance-types": instance_types_file,
        }
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
        # Piped or captured output: wide enough that score tables keep whole names.
        console = text_console(200)
        render_explanation(result, console)
        if scale_up is not None:
            render_scale_up(scale_up, console)
