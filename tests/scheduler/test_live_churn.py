"""The scheduler under churn, with KWOK's fake kubelets and the controller manager.

Deployments spread over zones (maxSkew 1, DoNotSchedule) are scaled up and down and a
zone's Nodes deleted while their pods arrive (:mod:`topospread.testing.churn`). With
faults, kube-apiserver is also killed and restarted, watches expire (etcd compacted, the
API server restarted), and the leading replica is SIGKILLed. Whatever happens, every pod
ends bound once, to a Node that exists, with no Node over its allocatable and every
DoNotSchedule constraint of a Deployment that was never scaled down holding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topospread.testing.churn import ChurnPlan, ChurnResult, run_churn

SMALL = {"nodes": 30, "deployments": 6, "replicas": 30, "timeout": 240.0}


def full_report(result: ChurnResult, logs: Path) -> str:
    """The whole report and where the logs are (pytest would cut a dict's repr short)."""
    return f"{json.dumps(result.as_dict(), default=str)}; logs in {logs}"


def assert_guarantees_held(result: ChurnResult, logs: Path) -> None:
    report = full_report(result, logs)
    assert result.pending == [], report
    assert result.bound_twice == [], report
    assert result.overcommitted == [], report
    assert result.violations == [], report
    assert "deleted node" not in result.per_zone, report
    assert set(result.per_zone) == {"zone-a", "zone-b"}, report


def test_topospread_keeps_its_guarantees_through_restarts_expiries_and_a_killed_leader(
    control_plane_binaries: Path, autoscaler_files: Path, tmp_path: Path
) -> None:
    plan = ChurnPlan(**SMALL, faults=True, replicas_of_scheduler=2)
    result = run_churn(
        "topospread",
        plan,
        keep_logs=tmp_path,
        binaries=control_plane_binaries,
        kwok_files=autoscaler_files,
    )
    report = full_report(result, tmp_path)
    # The controller manager may still be backing off after the outages (its workqueues'
    # delays grow to minutes); the scheduler's work is done either way.
    assert result.outcome in ("settled", "controllers behind"), report
    assert_guarantees_held(result, tmp_path)
    events = [what for _, what in result.timeline]
    assert any(what.startswith("kube-apiserver killed") for what in events), events
    assert any(what.startswith("etcd compacted") for what in events), events
    assert any("SIGKILLed" in what for what in events), events
    # The faults were felt: watches expired and were listed again.
    assert result.relists > 0, report


@pytest.mark.parametrize("which", ["kube-scheduler", "topospread"])
def test_scale_up_scale_down_and_a_lost_zone_settle_with_the_zones_balanced(
    which: str, control_plane_binaries: Path, autoscaler_files: Path, tmp_path: Path
) -> None:
    plan = ChurnPlan(**SMALL)
    result = run_churn(
        which,
        plan,
        keep_logs=tmp_path,
        binaries=control_plane_binaries,
        kwok_files=autoscaler_files,
    )
    assert result.outcome == "settled", full_report(result, tmp_path)
    assert_guarantees_held(result, tmp_path)
    # 180 pods left (+45 scaled up, -45 down), all on the two zones that remain.
    assert result.pods == 180
    assert sum(result.per_zone.values()) == 180
    events = [what for _, what in result.timeline]
    assert "a third of the Deployments scaled up by half, a third down by half" in events
    assert "10 Nodes of zone-c deleted" in events
    # The scheduler's own Events name the lost zone's Nodes (a third of the pods were
    # there), and it stopped binding to them within seconds of their deletion.
    assert result.scheduled_on_deleted_nodes > 0, full_report(result, tmp_path)
    assert result.last_bind_after_drain < 10.0, full_report(result, tmp_path)
