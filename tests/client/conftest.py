"""Live tests of the client: an admin :class:`~topospread.testing.live.Kube` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from topospread.client.config import connect
from topospread.testing.live import Kube


@pytest.fixture(scope="session")
def kube(admin_kubeconfig: Path) -> Iterator[Kube]:
    """An admin :class:`Kube` on the session's control plane."""
    connection = connect(admin_kubeconfig)
    yield Kube(connection)
    connection.close()
