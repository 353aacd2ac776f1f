"""ImageLocality: favor nodes that already have the pod's container images.

Upstream ``pkg/scheduler/framework/plugins/imagelocality`` (v1.37.1); Score only,
default weight 1, no NormalizeScore. For each init and regular container whose
image the node lists (``status.images[].names``, after normalization)::

    scaled   = int(sizeBytes * (nodes having that image name / all nodes))   (float64)
    sum      = Σ scaled
    count    = number of containers (init + regular)
    clamped  = min(max(sum, 23 MiB), count × 1000 MiB)
    score    = 100 * (clamped - 23 MiB) // (count × 1000 MiB - 23 MiB)

An image name without a tag (no ``:`` after the last ``/``) gets ``:latest``;
digests (``@sha256:...``) are left as they are. "All nodes" is every node of the
snapshot, feasible or not.

Image state follows the scheduler cache: an image name's size is the ``sizeBytes``
reported by the first node (in input order) that lists the name, and its node count is
the number of nodes listing it.

Not modelled: image volumes (``volumes[].image``), which upstream also counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import MAX_NODE_SCORE, Handle, ScoreExtensions, ScorePlugin
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.node_table import IntArray, NodeTable
from topospread.framework.status import Status
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.helper import go_div
from topospread.plugins.helper.batch import node_scores

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "ImageState",
    "calculate_priority",
    "image_states",
    "new",
    "normalized_image_name",
]

NAME: Final = names.IMAGE_LOCALITY

_MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * _MB
"""Image bytes below which a node scores 0."""
MAX_CONTAINER_THRESHOLD: Final = 1000 * _MB
"""Image bytes per container at and above which a node scores 100."""

_IMAGE_STATES_KEY: Final = "ImageStates" + NAME
"""CycleState key of the per-cycle image table (topospread's own; upstream's cache holds it)."""


@dataclass(frozen=True, slots=True)
class ImageState:
    """One image name across the cluster (``fwk.ImageStateSummary``)."""

    size: int
    """Bytes, as the first node listing the name reported them."""
    num_nodes: int
    """Nodes that list the name."""


@dataclass(frozen=True, slots=True)
class _ImageTable:
    """Per cycle: every image name of the snapshot, and the snapshot's node count."""

    states: Mapping[str, ImageState]
    total_nodes: int

    def clone(self) -> _ImageTable:
        return self


def image_states(snapshot: Snapshot) -> dict[str, ImageState]:
    """Image name -> size and node count, as the scheduler cache builds them."""
    sizes: dict[str, int] = {}
    nodes: dict[str, set[str]] = {}
    for info in snapshot.node_infos:
        for image_names, size in info.node.images:
            for image_name in image_names:
                if image_name not in sizes:
                    sizes[image_name] = size
                    nodes[image_name] = set()
                nodes[image_name].add(info.name)
    return {name: ImageState(sizes[name], len(nodes[name])) for name in sizes}


def normalized_image_name(name: str) -> str:
    """``name`` with ``:latest`` appended when it has no tag (``normalizedImageName``)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageState, total_nodes: int) -> int:
    """The image size weighted by the share of nodes that have it (``scaledImageScore``)."""
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, image_count: int) -> int:
    """Clamp the summed scaled sizes and map them onto 0..100 (``calculatePriority``)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """Scores nodes by the (spread-scaled) bytes of the pod's images they already hold."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        """``ImageLocality``."""
        return NAME

    def _table(self, state: CycleState) -> _ImageTable:
        try:
            return state.read(_IMAGE_STATES_KEY, _ImageTable)
        except (StateNotFoundError, TypeError):
            snapshot = self._handle.snapshot
            table = _ImageTable(image_states(snapshot), len(snapshot))
            state.write(_IMAGE_STATES_KEY, table)
            return table

    def sum_image_scores(
        self, node_info: NodeInfo, pod: Pod, table: _ImageTable
    ) -> tuple[int, int]:
        """``(Σ scaled sizes of the pod's images on the node, number of containers)``."""
        on_node = {name for image_names, _ in node_info.node.images for name in image_names}
        total = 0
        containers = (*pod.init_containers, *pod.containers)
        for container in containers:
            image = normalized_image_name(container.image)
            state = table.states.get(image) if image in on_node else None
            if state is not None:
                total += scaled_image_score(state, table.total_nodes)
        return total, len(containers)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """0..100 by how many bytes of the pod's images the node already holds."""
        table = self._table(state)
        total, count = self.sum_image_scores(node_info, pod, table)
        return calculate_priority(total, count), None

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Scores of many nodes: they depend only on node objects and the pod's images."""
        images = tuple(c.image for c in (*pod.init_containers, *pod.containers))
        return node_scores(table, self, images, state, pod, rows)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already in 0..100."""
        return None


def new(args: object | None, handle: Handle, features: Features) -> ImageLocality:
    """The plugin factory (``imagelocality.New``); takes no args."""
    return ImageLocality(handle)


if TYPE_CHECKING:
    _score: ScorePlugin = ImageLocality(Handle(Snapshot([])))
