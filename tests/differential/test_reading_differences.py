"""Spellings that read differently, each compared with the Go oracle (upstream v1.37.1).

Issue 10: an explicit empty ``preferredDuringSchedulingIgnoredDuringExecution`` is not
an absent one upstream (the slice is tested for nil), so NodeAffinity's PreScore runs and
every node scores 0 where an absent list makes it skip.
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


def _node(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _pod(node_affinity: Obj | None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "img"}]}
    if node_affinity is not None:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("case", "node_affinity", "node_affinity_scored"),
    [
        ("explicit-empty-preferred", {"preferredDuringSchedulingIgnoredDuringExecution": []}, True),
        ("absent-preferred", {}, False),
        ("null-preferred", {"preferredDuringSchedulingIgnoredDuringExecution": None}, False),
        ("no-affinity", None, False),
    ],
)
def test_an_explicit_empty_preferred_list_is_scored_as_upstream_scores_it(
    oracle: Any, case: str, node_affinity: Obj | None, node_affinity_scored: bool
) -> None:
    scenario = Scenario([_node("n1"), _node("n2")], _pod(node_affinity), None)
    response = oracle.run([scenario.request(case)])[case]
    assert "result" in response, response.get("error")
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    assert not differences(ours, theirs), differences(ours, theirs)
    scored = ["NodeAffinity" in n["scores"] for n in response["result"]["nodes"]]
    assert scored == [node_affinity_scored] * 2
