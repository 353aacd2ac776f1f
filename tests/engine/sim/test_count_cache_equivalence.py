"""Speed never changes a decision: a mid-size simulation with the snapshot's incremental
counters on and off (a full recount every cycle) gives identical JSON."""

from __future__ import annotations

import json

import pytest

from topospread.engine.sim.scenario import parse_scenario
from topospread.engine.sim.simulator import simulate
from topospread.framework.node_info import Snapshot

_SPREAD = [
    {
        "maxSkew": 2,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["pod-template-hash"],
    },
    {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    },
]

SCENARIO = {
    "apiVersion": "topospread.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "cache-equivalence"},
    "cluster": {
        "nodes": {
            "zones": ["a", "b", "c", "d"],
            "perZone": 30,
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": 110},
        }
    },
    "steps": [
        {
            "apply": {
                "objects": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "web"},
                        "spec": {
                            "replicas": 300,
                            "selector": {"matchLabels": {"app": "web"}},
                            "template": {
                                "metadata": {"labels": {"app": "web"}},
                                "spec": {
                                    "topologySpreadConstraints": _SPREAD,
                                    "containers": [
                                        {
                                            "name": "c",
                                            "image": "img:1",
                                            "resources": {
                                                "requests": {"cpu": "100m", "memory": "500Mi"}
                                            },
                                        }
                                    ],
                                },
                            },
                        },
                    }
                ]
            }
        },
        {"rollout": {"deployment": "web", "image": "img:2"}},
        {"failZone": {"zone": "b", "mode": "remove"}},
        {"scale": {"deployment": "web", "replicas": 200}},
        {"labelNode": {"zone": "c", "labels": {"topology.kubernetes.io/zone": "a"}}},
        {"scale": {"deployment": "web", "replicas": 260}},
    ],
}


def _run() -> str:
    scenario = parse_scenario(json.loads(json.dumps(SCENARIO)), "cache-equivalence")
    return json.dumps(simulate(scenario, 7, tie_break="random").to_json(), sort_keys=True)


def test_incremental_counts_change_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    cached = _run()
    monkeypatch.setattr(Snapshot, "use_count_cache", False)
    recounted = _run()
    assert cached == recounted
    assert '"scheduled"' in cached
