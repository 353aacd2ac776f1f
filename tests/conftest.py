"""Fixtures shared by every test directory: the live control plane.

``control_plane`` starts one real etcd + kube-apiserver + kube-controller-manager (the
pinned release, built by ``bash controlplane/build.sh``) per test session and stops it at
the end. Tests that use it are live tests, marked ``cluster`` (added automatically to any
test that requests the fixture). Without the binaries they are skipped, saying why, unless
``TOPOSPREAD_REQUIRE_CONTROLPLANE=1`` (CI), where they fail instead.

The cluster is shared by the whole session: create objects under unique names
(``unique_name``) and do not rely on a namespace being empty or deleted.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import NoReturn

import pytest

from topospread.client.config import connect
from topospread.testing.autoscaler import AutoscalerUnavailable, find_autoscaler
from topospread.testing.controlplane import ControlPlane, ControlPlaneUnavailable, find_binaries
from topospread.testing.live import Kube

# CPython gh-113280, fixed in 3.11.8 and 3.12.2: when the peer resets a connection between
# the TCP connect and the TLS handshake, ssl.SSLSocket._create re-raises without closing the
# socket it made, and the garbage collector later finds it "unclosed", its repr without a
# raddr (the peer is gone). The live fault tests kill the API server mid-request, so on those
# releases that warning comes from the standard library, wherever the collector happens to
# run. On them, any unclosed TLS socket whose peer is gone is let pass; one whose peer is
# still there (a raddr) fails the run on every release.
UNCONNECTED_TLS_SOCKET_LEAK = r"unclosed <ssl\.SSLSocket fd=\d+, [^>]*laddr=\([^)]*\)>$"
SSL_CREATE_LEAKS = sys.version_info[:3] < (3, 11, 8) or (3, 12) <= sys.version_info[:3] < (3, 12, 2)


def pytest_configure(config: pytest.Config) -> None:
    if SSL_CREATE_LEAKS:
        config.addinivalue_line(
            "filterwarnings", f"ignore:{UNCONNECTED_TLS_SOCKET_LEAK}:ResourceWarning"
        )


def control_plane_required() -> bool:
    return os.environ.get("TOPOSPREAD_REQUIRE_CONTROLPLANE") == "1"


def _unavailable(reason: str) -> NoReturn:
    if control_plane_required():
        pytest.fail(f"TOPOSPREAD_REQUIRE_CONTROLPLANE=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _example_plugin_installed() -> bool:
    plugins = metadata.entry_points(group="topospread.plugins")
    return any(entry.name == "RatioSpread" for entry in plugins)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Where CI requires the example plugin, its tests run (and fail) without it.
    skip_example = not _example_plugin_installed() and (
        os.environ.get("TOPOSPREAD_REQUIRE_PLUGINS") != "1"
    )
    for item in items:
        if {"control_plane", "control_plane_binaries"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
        if skip_example and item.get_closest_marker("example_plugin"):
            item.add_marker(
                pytest.mark.skip(
                    reason="the example plugin is not installed: "
                    "pip install -e examples/plugins/ratio-spread (scripts/setup.sh does)"
                )
            )


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """The directory of the control plane's binaries (for tests that start their own)."""
    try:
        return find_binaries()
    except ControlPlaneUnavailable as error:
        _unavailable(f"the control plane is unavailable: {error}")


@pytest.fixture(scope="session")
def autoscaler_files() -> Path:
    """The directory of kwok, karpenter-kwok, the CRDs, instance types and Stages (built
    by ``bash autoscaler/build.sh``)."""
    try:
        return find_autoscaler()
    except AutoscalerUnavailable as error:
        _unavailable(f"the autoscaler is unavailable: {error}")


@pytest.fixture(scope="session")
def control_plane(control_plane_binaries: Path) -> Iterator[ControlPlane]:
    """A running control plane (see :class:`topospread.testing.controlplane.ControlPlane`)."""
    with ControlPlane(control_plane_binaries) as plane:
        yield plane


@pytest.fixture(scope="session")
def admin_kubeconfig(control_plane: ControlPlane) -> Path:
    """A kubeconfig for the admin (``system:masters``) by client certificate."""
    return control_plane.admin_kubeconfig


@pytest.fixture(scope="session")
def admin_token_kubeconfig(control_plane: ControlPlane) -> Path:
    """A kubeconfig for the admin (``system:masters``) by bearer token."""
    return control_plane.admin_token_kubeconfig


@pytest.fixture(scope="session")
def reader_kubeconfig(control_plane: ControlPlane) -> Path:
    """A kubeconfig for ``topospread-reader``: a token with no RBAC rights but discovery."""
    return control_plane.reader_kubeconfig


@pytest.fixture(scope="session")
def kube(admin_kubeconfig: Path) -> Iterator[Kube]:
    """An admin :class:`~topospread.testing.live.Kube` for creating the objects a test needs.

    Writes go through topospread's own transport (no second client library). The Binding
    subresource answers with a Status, not the object: check the status code.
    """
    connection = connect(admin_kubeconfig)
    yield Kube(connection)
    connection.close()


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """``unique_name("web")`` → ``"web-3f9a1c"``: names that no other test in the session
    (or an earlier object awaiting deletion) holds."""
    return lambda prefix: f"{prefix}-{secrets.token_hex(3)}"
