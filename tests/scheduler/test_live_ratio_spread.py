"""``topospread scheduler`` with a plugin from outside the package, on the real control plane.

The example plugin (examples/plugins/ratio-spread, installed by scripts/setup.sh) runs in
``topospread scheduler`` started as a command with the example's own configuration; only
the profile's schedulerName is made unique, as the cluster is shared with other tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from topospread.client.config import connect
from topospread.testing.live import Kube, node
from topospread.testing.scheduling import list_pods, wait_for

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "ratio-spread"
CAPACITY = "karpenter.sh/capacity-type"

pytestmark = pytest.mark.example_plugin


def test_the_scheduler_places_a_deployment_by_the_ratio_policy(
    control_plane, scheduler_name, unique_name, tmp_path
):
    kube = Kube(connect(control_plane.admin_kubeconfig))
    run = unique_name("ratio")
    marker = {"topospread.dev/test": run}
    capacity = {f"{run}-spot-{i}": "spot" for i in range(3)}
    capacity.update({f"{run}-od-{i}": "on-demand" for i in range(2)})
    for name, kind in capacity.items():
        item = node(name, f"{run}-z")
        item["metadata"]["labels"].update({**marker, CAPACITY: kind})
        kube.create(item)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": run}})

    config = yaml.safe_load((EXAMPLE / "scheduler-config.yaml").read_text())
    config["profiles"][0]["schedulerName"] = scheduler_name
    config_file = tmp_path / "scheduler-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    log = (tmp_path / "scheduler.log").open("w")
    scheduler = subprocess.Popen(
        [
            sys.executable, "-m", "topospread.cli", "scheduler",
            "--config", str(config_file),
            "--kubeconfig", str(control_plane.admin_kubeconfig),
            "--port", "0", "--log-format", "text",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        labels = {"app": "web", "ratio-spread.topospread.io/policy": "spot-80"}
        kube.create(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": run},
                "spec": {
                    "replicas": 10,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "schedulerName": scheduler_name,
                            "nodeSelector": marker,
                            "containers": [
                                {
                                    "name": "web",
                                    "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                                }
                            ],
                        },
                    },
                },
            }
        )
        admin = connect(control_plane.admin_kubeconfig)

        def all_bound() -> bool:
            assert scheduler.poll() is None, (tmp_path / "scheduler.log").read_text()
            pods = list_pods(admin, run)
            return len(pods) == 10 and all(p["spec"].get("nodeName") for p in pods)

        wait_for(all_bound, 120, 0.5, "the 10 pods of web to be bound by the ratio scheduler")
        placed = Counter(capacity[p["spec"]["nodeName"]] for p in list_pods(admin, run))
        assert placed == {"spot": 8, "on-demand": 2}
    finally:
        scheduler.send_signal(signal.SIGTERM)
        try:
            scheduler.wait(30)
        except subprocess.TimeoutExpired:
            scheduler.kill()
            scheduler.wait()
        log.close()
