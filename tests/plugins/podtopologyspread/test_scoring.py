"""PreScore, Score and NormalizeScore, with the worked examples of upstream's scoring_test.go."""

from __future__ import annotations

import pytest

from topospread.framework.interfaces import NodeScore
from topospread.framework.node_info import ClusterObjects
from topospread.framework.status import Code
from topospread.model.objects import Node, Pod, Service
from topospread.plugins.podtopologyspread.scoring import go_round
from topospread.testing import make_node, make_pod, make_selector
from topospread.testing.harness import build_spread_plugin as build_plugin
from topospread.testing.harness import fresh_state

SA = "ScheduleAnyway"
FOO = make_selector().exists("foo").obj()
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str | None = None, *, hostname: bool = True) -> Node:
    builder = make_node().name(name)
    if hostname:
        builder = builder.label(HOST, name)
    if zone is not None:
        builder = builder.label("zone", zone)
    return builder.obj()


def pods_on(counts: dict[str, int], label: str = "foo") -> list[Pod]:
    return [
        make_pod().name(f"p-{n}-{i}").label(label, "").node(n).obj()
        for n, c in counts.items()
        for i in range(c)
    ]


def scores(
    nodes: list[Node], existing: list[Pod], pod: Pod, feasible: list[str], **plugin_options: object
) -> dict[str, int]:
    plugin, snapshot = build_plugin(nodes, existing, **plugin_options)  # type: ignore[arg-type]
    state = fresh_state()
    infos = [snapshot.get(name) for name in feasible]
    status = plugin.pre_score(state, pod, infos)  # type: ignore[arg-type]
    assert status is None
    node_scores = [
        NodeScore(info.name, plugin.score(state, pod, info)[0])  # type: ignore[union-attr]
        for info in infos
    ]
    plugin.normalize_score(state, pod, node_scores)
    return {s.name: s.score for s in node_scores}


FOUR = [
    node("node-a", "zone1"),
    node("node-b", "zone1"),
    node("node-x", "zone2"),
    node("node-y", "zone2"),
]
ALL = ["node-a", "node-b", "node-x", "node-y"]


@pytest.mark.parametrize(
    ("nodes", "counts", "pod", "feasible", "expected"),
    [
        pytest.param(
            FOUR,
            {"node-a": 2, "node-b": 1, "node-y": 3},
            make_pod().name("p").label("foo", "").spread_constraint(1, HOST, SA, FOO).obj(),
            ALL,
            {"node-a": 20, "node-b": 60, "node-x": 100, "node-y": 0},
            id="hostname maxSkew 1 with pods 2/1/0/3 scores 20/60/100/0",
        ),
        pytest.param(
            FOUR,
            {"node-a": 2, "node-b": 1, "node-y": 3},
            make_pod().name("p").label("foo", "").spread_constraint(2, HOST, SA, FOO).obj(),
            ALL,
            {"node-a": 33, "node-b": 66, "node-x": 100, "node-y": 16},
            id="hostname maxSkew 2 with pods 2/1/0/3 waters the differences down",
        ),
        pytest.param(
            [node("node-a"), node("node-b", hostname=False), node("node-x")],
            {"node-a": 4, "node-x": 1},
            make_pod().name("p").label("foo", "").spread_constraint(1, HOST, SA, FOO).obj(),
            ["node-a", "node-b", "node-x"],
            {"node-a": 16, "node-b": 0, "node-x": 100},
            id="a candidate without the hostname label is ignored and scores 0",
        ),
        pytest.param(
            FOUR,
            {"node-a": 3, "node-b": 3, "node-x": 1, "node-y": 3},
            make_pod().name("p").label("foo", "").spread_constraint(1, "zone", SA, FOO).obj(),
            ["node-a", "node-b", "node-x"],
            {"node-a": 75, "node-b": 75, "node-x": 100},
            id="pods on a node that failed filtering still count towards its zone",
        ),
        pytest.param(
            FOUR,
            {"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4},
            make_pod()
            .name("p")
            .label("foo", "")
            .spread_constraint(1, "zone", SA, FOO)
            .spread_constraint(1, HOST, SA, FOO)
            .obj(),
            ["node-a", "node-x"],
            {"node-a": 100, "node-x": 63},
            id="zone and hostname constraints add up before normalizing",
        ),
        pytest.param(
            FOUR,
            {"node-a": 2, "node-b": 1, "node-y": 3},
            make_pod().name("p").label("foo", "").spread_constraint(1, HOST, SA, None).obj(),
            ALL,
            {"node-a": 100, "node-b": 100, "node-x": 100, "node-y": 100},
            id="a nil selector counts nothing, so every node scores 100",
        ),
    ],
)
def test_pod_topology_spread_score(
    nodes: list[Node],
    counts: dict[str, int],
    pod: Pod,
    feasible: list[str],
    expected: dict[str, int],
) -> None:
    assert scores(nodes, pods_on(counts), pod, feasible) == expected


def test_pre_score_skips_a_pod_without_soft_constraints() -> None:
    plugin, snapshot = build_plugin(FOUR)
    pod = make_pod().name("p").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj()
    status = plugin.pre_score(fresh_state(), pod, snapshot.node_infos)
    assert status is not None
    assert status.code is Code.SKIP


def test_min_domains_has_no_effect_on_scoring() -> None:
    base = make_pod().name("p").label("foo", "")
    counts = pods_on({"node-a": 2, "node-b": 1, "node-y": 3})
    without = scores(FOUR, counts, base.spread_constraint(1, HOST, SA, FOO).obj(), ALL)
    with_min = scores(
        FOUR,
        counts,
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOST, SA, FOO, min_domains=10)
        .obj(),
        ALL,
    )
    assert with_min == without


def test_system_defaults_spread_zone_less_nodes_by_hostname_like_a_lone_hostname_constraint() -> (
    None
):
    nodes = [node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
    existing = [
        make_pod().name(f"s-{n}-{i}").label("app", "web").node(n).obj()
        for n, c in {"node-a": 4, "node-b": 2, "node-c": 1}.items()
        for i in range(c)
    ]
    service = Service(make_pod().name("web").obj().metadata, {"app": "web"})
    pod = make_pod().name("p").label("app", "web").obj()
    from topospread.framework.config.types import PodTopologySpreadArgs

    system = scores(
        nodes,
        existing,
        pod,
        ["node-a", "node-b", "node-c", "node-d"],
        args=PodTopologySpreadArgs(default_constraints=(), defaulting_type="System"),
        objects=ClusterObjects(services=(service,)),
    )
    hostname_only = scores(
        nodes,
        existing,
        make_pod()
        .name("p")
        .label("app", "web")
        .spread_constraint(3, HOST, SA, make_selector().label("app", "web").obj())
        .obj(),
        ["node-a", "node-b", "node-c", "node-d"],
    )
    assert system == hostname_only
    assert system["node-d"] == 100
    assert system["node-a"] < system["node-b"] < system["node-c"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(0.5, 1, id="one half rounds up"),
        pytest.param(2.5, 3, id="two and a half rounds away from zero, not to even"),
        pytest.param(2.4999, 2, id="just under a half rounds down"),
        pytest.param(-2.5, -3, id="negative halves round away from zero"),
    ],
)
def test_go_round_rounds_half_away_from_zero(value: float, expected: int) -> None:
    assert go_round(value) == expected
