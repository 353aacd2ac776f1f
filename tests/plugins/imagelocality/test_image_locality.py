"""ImageLocality Score.

Cases follow image_locality_test.go (v1.37.1, TestImageLocalityPriority and
TestNormalizedImageName); the ImageVolume case is not modelled (no image volumes).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Status
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.plugins.imagelocality import ImageLocality, normalized_image_name
from topospread.plugins.imagelocality.image_locality import image_states

MB = 1024 * 1024

Images = tuple[tuple[tuple[str, ...], int], ...]

N_40_300_2000: Images = (
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40 * MB),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300 * MB),
    (("gcr.io/2000:latest",), 2000 * MB),
)
N_250_10: Images = (
    (("gcr.io/250:latest",), 250 * MB),
    (("gcr.io/10:latest", "gcr.io/10:v1"), 10 * MB),
)
N_600_40_900: Images = (
    (("gcr.io/600:latest",), 600 * MB),
    (("gcr.io/40:latest",), 40 * MB),
    (("gcr.io/900:latest",), 900 * MB),
)
N_300_600_900: Images = (
    (("gcr.io/300:latest",), 300 * MB),
    (("gcr.io/600:latest",), 600 * MB),
    (("gcr.io/900:latest",), 900 * MB),
)
N_4000_30: Images = ((("gcr.io/4000:latest",), 4000 * MB), (("gcr.io/30:latest",), 30 * MB))
N_20_30_40: Images = (
    (("gcr.io/20:latest",), 20 * MB),
    (("gcr.io/30:latest",), 30 * MB),
    (("gcr.io/40:latest",), 40 * MB),
)
NO_IMAGES: Images = ()


def make_pod(*images: str, init: Sequence[str] = ()) -> Pod:
    return Pod(
        ObjectMeta("p", "default"),
        containers=tuple(Container(image=i) for i in images),
        init_containers=tuple(Container(image=i) for i in init),
    )


def nodes(*images: Images) -> list[Node]:
    return [Node(ObjectMeta(f"node{i + 1}"), images=imgs) for i, imgs in enumerate(images)]


CASES = [
    pytest.param(
        make_pod("gcr.io/40", "gcr.io/250"),
        nodes(N_40_300_2000, N_250_10),
        [0, 5],
        id="two images spread on two nodes prefer the larger image",
    ),
    pytest.param(
        make_pod("gcr.io/40", "gcr.io/300"),
        nodes(N_40_300_2000, N_250_10),
        [7, 0],
        id="two images on one node prefer that node",
    ),
    pytest.param(
        make_pod("gcr.io/10", "gcr.io/4000"),
        nodes(N_4000_30, N_250_10),
        [100, 0],
        id="sizes beyond the maximum threshold are capped",
    ),
    pytest.param(
        make_pod("gcr.io/10", "gcr.io/4000"),
        nodes(N_4000_30, N_250_10, NO_IMAGES),
        [66, 0, 0],
        id="a node without images still counts in the spread",
    ),
    pytest.param(
        make_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        nodes(N_600_40_900, N_300_600_900, NO_IMAGES),
        [32, 36, 0],
        id="several large images prefer the node holding most of them",
    ),
    pytest.param(
        make_pod("gcr.io/30", "gcr.io/40"),
        nodes(N_20_30_40, N_4000_30),
        [1, 0],
        id="several small images barely clear the minimum threshold",
    ),
    pytest.param(
        make_pod("gcr.io/30", "gcr.io/300"),
        nodes(N_300_600_900, N_4000_30),
        [6, 0],
        id="images as regular containers count like image volumes would",
    ),
    pytest.param(
        make_pod("gcr.io/30", init=["gcr.io/300"]),
        nodes(N_40_300_2000, N_20_30_40),
        [6, 0],
        id="init container images count too",
    ),
]


@pytest.mark.parametrize(("pod", "node_list", "expected"), CASES)
def test_image_locality_scores(pod, node_list, expected):
    snapshot = Snapshot(node_list)
    plugin = ImageLocality(Handle(snapshot))
    state = CycleState()
    got: list[tuple[int, Status | None]] = [
        plugin.score(state, pod, n) for n in snapshot.node_infos
    ]
    assert got == [(score, None) for score in expected]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("root", "root:latest", id="a bare name gets the latest tag"),
        pytest.param("root:tag", "root:tag", id="a tagged name stays"),
        pytest.param(
            "gcr.io:5000/root", "gcr.io:5000/root:latest", id="a registry port is not a tag"
        ),
        pytest.param(
            "root@" + "a" * 64,
            "root@" + "a" * 64 + ":latest",
            id="a digest without sha256 prefix gets the latest tag as upstream does",
        ),
        pytest.param(
            "root@sha256:" + "a" * 64,
            "root@sha256:" + "a" * 64,
            id="a sha256 digest has a colon after the last slash and stays",
        ),
    ],
)
def test_normalized_image_name(name, expected):
    assert normalized_image_name(name) == expected


def test_an_image_name_takes_the_size_the_first_node_reported_as_the_scheduler_cache_does():
    snapshot = Snapshot(
        [
            Node(ObjectMeta("a"), images=(((("x:1",), 300 * MB)),)),
            Node(ObjectMeta("b"), images=(((("x:1",), 310 * MB)),)),
            Node(ObjectMeta("c")),
        ]
    )
    states = image_states(snapshot)
    assert (states["x:1"].size, states["x:1"].num_nodes) == (300 * MB, 2)
