"""Fixtures of the autoscaling live tests: a control plane of their own with
kube-controller-manager and kube-scheduler, and Karpenter's KWOK provider with the kwok
controller beside it (built by ``bash autoscaler/build.sh``).

Each test gets a fresh cluster: the nodes Karpenter made for one case must not serve, or
count as topology domains for, the next. Without the binaries the tests are skipped,
saying why, unless ``TOPOSPREAD_REQUIRE_CONTROLPLANE=1`` (CI), where they fail instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from topospread.testing.autoscaler import Autoscaler
from topospread.testing.controlplane import ControlPlane


@pytest.fixture
def karpenter(control_plane_binaries: Path, autoscaler_files: Path) -> Iterator[Autoscaler]:
    """A running :class:`~topospread.testing.autoscaler.Autoscaler` on a fresh control plane
    (kube-controller-manager turns Deployments into pods, kube-scheduler binds them)."""
    with (
        ControlPlane(control_plane_binaries, scheduler=True) as plane,
        Autoscaler(plane, autoscaler_files) as started,
    ):
        yield started
