"""Issue 12's list of silent differences, each compared with the Go oracle (upstream
v1.37.1) on a hand-made scenario that reaches it.

Every case runs through ``oracle batch`` and through topospread's explain; the compared
fields (filter codes, plugins, reasons, scores, totals, selected and tied nodes, message,
preemption) must be identical. Without an oracle the tests are skipped, saying why
(``TOPOSPREAD_REQUIRE_ORACLE=1`` makes them fail instead).
"""

from __future__ import annotations

from typing import Any

import pytest

from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    upstream_result,
)

pytestmark = pytest.mark.differential

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, *, zone: str = "a", cpu: str = "4", pods: str = "110", **extra: Any) -> Obj:
    status: Obj = {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}}
    status.update(extra.pop("status", {}))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: zone}},
        "spec": extra.pop("spec", {}),
        "status": status,
    }


def pod(name: str, node_name: str = "", *, labels: Obj | None = None, **spec: Any) -> Obj:
    status = spec.pop("status", None)
    meta: Obj = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    if "uid" in spec:
        meta["uid"] = spec.pop("uid")
    body: Obj = {"containers": spec.pop("containers", [{"name": "c", "image": "img"}])}
    if node_name:
        body["nodeName"] = node_name
    body.update(spec)
    result: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}
    if status is not None:
        result["status"] = status
    return result


def agree(oracle: Any, scenario: Scenario, name: str) -> Obj:
    """Both engines' answers must be identical; returns upstream's (compared fields)."""
    response = oracle.run([scenario.request(name)])[name]
    assert "result" in response, f"upstream rejected {name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    problems = differences(ours, theirs)
    assert not problems, "\n".join([f"{name}: topospread disagrees with upstream:", *problems])
    return theirs


# -- 5: a Score plugin's error text --------------------------------------------------------------


def test_score_plugin_error_has_upstreams_prefix(oracle: Any) -> None:
    # TaintToleration's Score reads what its PreScore wrote; with PreScore disabled it
    # fails, and RunScorePlugins wraps that as `plugin "X" failed with: ...`.
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"preScore": {"disabled": [{"name": "TaintToleration"}]}},
            }
        ],
    }
    scenario = Scenario([node("n1"), node("n2")], pod("p"), config)
    theirs = agree(oracle, scenario, "score-error")
    assert theirs["message"].startswith('running Score plugins: plugin "TaintToleration" failed')
