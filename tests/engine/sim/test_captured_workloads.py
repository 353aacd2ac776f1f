"""A scenario whose cluster is a capture (``kubectl get -o yaml``) starts from the cluster as
it is: the controllers adopt the workloads' existing ReplicaSets and pods (ownerReferences,
selectors) and create nothing while those have their replicas; only Pending pods are placed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topospread.engine.sim.simulator import simulate
from topospread.io.scenarios import load_scenario

CAPTURE = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "captured" / "shop.yaml"
PENDING_WEB = "web-6dfb7854f4-rwdx2"


def _run(tmp_path: Path, steps: list[dict] | None = None):
    (tmp_path / "shop.yaml").write_text(CAPTURE.read_text())
    scenario = tmp_path / "from-capture.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "topospread.dev/v1alpha1",
                "kind": "Scenario",
                "metadata": {"name": "from-capture"},
                "cluster": {"files": ["shop.yaml"]},
                "steps": steps or [],
            }
        )
    )
    return simulate(load_scenario(scenario), 0)


def test_the_initial_step_creates_no_pod_and_places_only_the_pending_ones(tmp_path) -> None:
    initial = _run(tmp_path).steps[0]
    created = sorted(e.pod for e in initial.events if e.kind == "created")
    # The capture's pods, and not one more.
    captured = yaml.safe_load(CAPTURE.read_text())["items"]
    assert created == sorted(
        f"shop/{i['metadata']['name']}" for i in captured if i["kind"] == "Pod"
    )
    placed = sorted(p.pod for p in initial.placements)
    assert placed == ["shop/bare", f"shop/{PENDING_WEB}"]
    assert not initial.pending


def test_the_existing_replica_set_is_the_deployment_s_and_owns_its_pods(tmp_path) -> None:
    initial = _run(tmp_path).steps[0]
    workloads = sorted(s.workload for s in initial.spread)
    assert workloads == ["Deployment/shop/web", "StatefulSet/shop/db"]
    web = next(s for s in initial.spread if s.workload == "Deployment/shop/web")
    assert sum(web.constraints[0].domain_counts.values()) == 6


@pytest.mark.parametrize("replicas", [8, 4])
def test_scaling_the_deployment_scales_the_adopted_replica_set(tmp_path, replicas) -> None:
    step = {"scale": {"deployment": "web", "namespace": "shop", "replicas": replicas}}
    result = _run(tmp_path, [step])
    events = result.steps[1].events
    created = [e.pod for e in events if e.kind == "created"]
    deleted = [e.pod for e in events if e.kind == "deleted"]
    assert all(name.startswith("shop/web-6dfb7854f4-") for name in created + deleted)
    assert len(created) - len(deleted) == replicas - 6


def test_the_stateful_set_keeps_its_pods(tmp_path) -> None:
    result = _run(tmp_path, [{"wait": {"seconds": 60}}])
    initial, waited = result.steps
    db = [e.pod for e in initial.events if e.kind == "created" and e.pod.startswith("shop/db-")]
    assert db == ["shop/db-0", "shop/db-1"]
    assert not [e for e in waited.events if e.kind in ("created", "deleted")]
    assert next(s for s in initial.spread if s.workload == "StatefulSet/shop/db").pods == 2
