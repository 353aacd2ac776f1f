"""The churn harness's own parts that meet real components."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from topospread.client.config import connect
from topospread.testing.churn import LOG_INFORMER_LISTS, POD_INFORMER_START, POD_LIST
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube


def replica_set(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
            },
        },
    }


def wait_for_pods(kube: Kube, app: str, count: int, seconds: float = 60.0) -> int:
    deadline = time.monotonic() + seconds
    while True:
        found = len(kube.list("Pod", label_selector=f"app={app}"))
        if found >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_a_restarted_controller_manager_lists_pods_afresh_and_runs_the_replica_sets(
    control_plane_binaries: Path,
) -> None:
    with ControlPlane(
        control_plane_binaries, extra_controller_manager_args=(LOG_INFORMER_LISTS,)
    ) as plane:
        kube = Kube(connect(plane.admin_kubeconfig))
        try:
            kube.create(replica_set("before", 2))
            assert wait_for_pods(kube, "before", 2) == 2
            first = plane.pids["kube-controller-manager"]

            plane.restart_controller_manager()

            assert plane.pids["kube-controller-manager"] != first
            kube.create(replica_set("after", 3))
            assert wait_for_pods(kube, "after", 3) == 3
            # The log lines the harness counts relists by, one start and one list per
            # process: the constants match what the pinned controller manager writes.
            log = plane.log_file("kube-controller-manager").read_text(errors="replace")
            assert log.count(POD_INFORMER_START) == 2
            assert log.count(POD_LIST) == 2
        finally:
            kube.connection.close()
