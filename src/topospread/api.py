"""topospread for people who script: load a cluster, explain a pod, run a simulation.

Every function here is also reachable as ``topospread.NAME``. Inputs are what the command
line takes (file paths, Kubernetes objects as dicts, a kubeconfig); results are the typed
objects the command line renders, each with ``to_json()`` giving the documented JSON::

    import topospread

    cluster = topospread.load_cluster("cluster.yaml")
    result = topospread.explain("pod.yaml", cluster)
    print(result.selected_node, result.to_json()["nodes"][0]["filter"])

    live = topospread.read_cluster(context="prod")          # kubeconfig rules as kubectl
    print(topospread.explain_pod("shop/web-7d9c-x2k4q", context="prod").message)

    story = topospread.simulate("story", seed=1)              # a bundled scenario or a file
    print(story.to_json()["steps"][-1]["spread"])

Errors are the exceptions of :mod:`topospread.errors`: ``InputError`` (and subclasses)
for bad input, ``ClusterError`` for a cluster that cannot be read, ``UnsupportedError``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from topospread.client.live import read_live
from topospread.client.objects import cluster_from_items, read_pod_and_cluster
from topospread.engine.cluster import Cluster
from topospread.engine.explain import Explanation
from topospread.engine.explain import explain as _explain
from topospread.engine.sim.result import SimulationResult
from topospread.errors import InputError
from topospread.framework.config.types import SchedulerConfiguration
from topospread.io.loader import decode_objects, load_configuration
from topospread.io.loader import load_cluster as _load_cluster_files
from topospread.io.loader import load_pod as _load_pod_file
from topospread.model.objects import Pod

__all__ = [
    "Cluster",
    "Explanation",
    "Pod",
    "SchedulerConfiguration",
    "SimulationResult",
    "cluster_from_objects",
    "explain",
    "explain_pod",
    "load_cluster",
    "load_configuration",
    "load_pod",
    "read_cluster",
    "simulate",
]

PathLike = str | os.PathLike[str]


TIE_BREAKS = ("first", "random")


def load_cluster(*paths: PathLike | Sequence[PathLike]) -> Cluster:
    """A cluster from ``kubectl get -o yaml|json`` files (as ``explain --cluster`` reads):
    ``load_cluster("a.yaml", "b.yaml")`` or ``load_cluster(["a.yaml", "b.yaml"])``."""
    files: list[Path] = []
    for given in paths:
        many = isinstance(given, list | tuple)
        for path in given if many else [given]:  # type: ignore[union-attr]
            if not isinstance(path, str | os.PathLike):
                raise InputError(
                    "load_cluster", message=f"expected file paths, got {type(path).__name__}"
                )
            files.append(Path(path))
    if not files:
        raise InputError("load_cluster", message="give at least one file")
    cluster, _ = _load_cluster_files(files)
    return cluster


def cluster_from_objects(objects: Iterable[Mapping[str, Any]], source: str = "objects") -> Cluster:
    """A cluster from Kubernetes objects as dicts (the JSON the API server serves)."""
    if isinstance(objects, str | os.PathLike | Mapping):
        raise InputError(
            source,
            message="expected Kubernetes objects as dicts (for files: topospread.load_cluster)",
        )
    items = list(objects)
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InputError(
                source, message=f"[{index}]: expected an object (dict), got {type(item).__name__}"
            )
    cluster, _ = cluster_from_items([dict(o) for o in items], source, admitted=False)
    return cluster


def _cluster(cluster: Cluster | PathLike | Sequence[PathLike]) -> Cluster:
    if isinstance(cluster, Cluster):
        return cluster
    if isinstance(cluster, str | os.PathLike | list | tuple):
        return load_cluster(cluster)
    raise InputError(
        "cluster",
        message=f"expected a Cluster (topospread.load_cluster, read_cluster, "
        f"cluster_from_objects) or cluster files, got {type(cluster).__name__}",
    )


def _tie_break(tie_break: str) -> str:
    if tie_break not in TIE_BREAKS:
        raise InputError("tie_break", message=f"{tie_break!r}: one of first, random")
    return tie_break


def read_cluster(kubeconfig: PathLike | None = None, context: str | None = None) -> Cluster:
    """A cluster read from a live API server, with kubectl's kubeconfig rules. Read-only."""
    read = read_live(kubeconfig, context)
    cluster, _ = cluster_from_items(read.items, read.source)
    return cluster


def load_pod(source: PathLike | Mapping[str, Any]) -> Pod:
    """The pod to schedule, from a file holding one Pod or from a Pod as a dict."""
    if isinstance(source, Mapping):
        objects, _ = decode_objects([dict(source)], "pod")
        pods = [o for o in objects if isinstance(o, Pod)]
        if len(pods) != 1:
            raise InputError("pod", message="expected a Pod object")
        return pods[0]
    return _load_pod_file(Path(source))


def _configuration(config: SchedulerConfiguration | PathLike | None) -> SchedulerConfiguration:
    if isinstance(config, SchedulerConfiguration):
        return config
    return load_configuration(None if config is None else Path(config))


def explain(
    pod: Pod | PathLike | Mapping[str, Any],
    cluster: Cluster | PathLike | Sequence[PathLike],
    config: SchedulerConfiguration | PathLike | None = None,
    *,
    tie_break: str = "first",
    seed: int = 0,
) -> Explanation:
    """One scheduling attempt of ``pod`` on ``cluster`` (a Cluster, or its files), as
    ``topospread explain`` shows it.

    ``config`` is a KubeSchedulerConfiguration (a file or a loaded one); the upstream
    default profile when None.
    """
    the_pod = pod if isinstance(pod, Pod) else load_pod(pod)
    return _explain(
        _cluster(cluster),
        the_pod,
        _configuration(config),
        tie_break=_tie_break(tie_break),
        seed=seed,
    )


def explain_pod(
    reference: str,
    *,
    namespace: str | None = None,
    kubeconfig: PathLike | None = None,
    context: str | None = None,
    config: SchedulerConfiguration | PathLike | None = None,
    tie_break: str = "first",
    seed: int = 0,
) -> Explanation:
    """Explain a pod of a live cluster (``pod/NAME``, ``NS/NAME`` or ``NAME``). Read-only."""
    _tie_break(tie_break)
    question = read_pod_and_cluster(reference, namespace, kubeconfig, context)
    return _explain(
        question.cluster, question.pod, _configuration(config), tie_break=tie_break, seed=seed
    )


def simulate(
    scenario: PathLike, *, seed: int | None = None, tie_break: str = "first"
) -> SimulationResult:
    """Run a scenario file, or a bundled scenario by name (``story``, ...)."""
    from importlib import resources

    from topospread.engine.sim.simulator import simulate as _simulate
    from topospread.io.scenarios import load_scenario

    _tie_break(tie_break)
    path = Path(scenario)
    if not path.is_file() and path.suffix not in (".yaml", ".yml", ".json"):
        bundled = Path(str(resources.files("topospread") / "examples" / "scenarios"))
        if (bundled / f"{path.name}.yaml").is_file():
            path = bundled / f"{path.name}.yaml"
    return _simulate(load_scenario(path), seed, tie_break=tie_break)
