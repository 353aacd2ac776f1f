"""Small builders for resource-scoring tests, shaped like upstream's ``st.MakePod().Req()``.

A pod gets one container per requests mapping (none without), so a pod built with no
mapping adds no non-zero defaults; a node gets exactly the allocatable given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from topospread.framework.config.types import NodeResourcesFitArgs, ScoringStrategy
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.plugins.noderesources import Fit

__all__ = ["assigned_pods", "fit_scores", "requests_node", "requests_pod"]


def requests_pod(*requests: Mapping[str, str], node: str = "", name: str = "p") -> Pod:
    """A pod in ``default`` with one container per requests mapping."""
    containers = tuple(
        Container(requests={k: parse_quantity(v) for k, v in r.items()}) for r in requests
    )
    return Pod(ObjectMeta(name, "default"), node_name=node, containers=containers)


def requests_node(name: str, **allocatable: str) -> Node:
    """A node with exactly this allocatable (``cpu="4000"`` means 4000 cores)."""
    return Node(
        ObjectMeta(name), allocatable={k: parse_quantity(v) for k, v in allocatable.items()}
    )


def assigned_pods(*specs: tuple[str, Mapping[str, str] | None]) -> list[Pod]:
    """Pods on nodes: ``(node, requests)``, one container with the requests or none."""
    return [
        requests_pod(*([] if req is None else [req]), node=node, name=f"e{i}")
        for i, (node, req) in enumerate(specs)
    ]


def fit_scores(
    strategy: ScoringStrategy, pod: Pod, nodes: Sequence[Node], existing: Sequence[Pod]
) -> list[int]:
    """NodeResourcesFit's score of ``pod`` on each node with this scoring strategy."""
    fit = Fit(NodeResourcesFitArgs(scoring_strategy=strategy), Features())
    snapshot = Snapshot(nodes, list(existing))
    state = CycleState()
    if fit.pre_score(state, pod, snapshot.node_infos) is not None:
        raise AssertionError("PreScore failed")
    out = []
    for info in snapshot.node_infos:
        value, status = fit.score(state, pod, info)
        if status is not None:
            raise AssertionError(f"Score failed on {info.name}: {status.message}")
        out.append(value)
    return out
