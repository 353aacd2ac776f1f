"""Helpers for the scheduler's live tests and benchmark: bulk writes and checks.

Creating hundreds of Nodes and pods one request at a time is slow; these send them from a
thread pool through :class:`~topospread.testing.live.Kube`. :func:`spread_violations`
checks every DoNotSchedule constraint of a set of bound pods the way the plugin counts
(eligible nodes are those matching the pods' node selector and carrying the key).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from topospread.client.config import Connection, connect
from topospread.client.transport import Request
from topospread.testing.live import Kube

__all__ = [
    "create_all",
    "list_pods",
    "list_raw",
    "spread_violations",
    "wait_for",
]


def create_all(kube: Kube, objects: Sequence[Mapping[str, Any]], workers: int = 16) -> None:
    """Create ``objects`` concurrently (Nodes get their status too)."""
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(kube.create, objects):
            pass


def list_raw(connection: Connection, path: str, **params: str) -> list[dict[str, Any]]:
    """The items of one (unpaginated) list."""
    response = connection.transport.send(Request("GET", path, tuple(params.items())))
    if response.status != 200:
        raise RuntimeError(f"GET {path}: {response.status} {response.data[:200]!r}")
    items: list[dict[str, Any]] = json.loads(response.data)["items"]
    return items


def list_pods(connection: Connection, namespace: str) -> list[dict[str, Any]]:
    """The pods of one namespace."""
    return list_raw(connection, f"/api/v1/namespaces/{namespace}/pods")


def wait_for(
    condition: Callable[[], bool], timeout: float, interval: float = 0.2, what: str = "condition"
) -> None:
    """Poll until ``condition()``; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or ():
        present = expression["key"] in labels
        values = expression.get("values") or []
        operator = expression["operator"]
        if (
            (operator == "In" and (not present or labels[expression["key"]] not in values))
            or (operator == "NotIn" and present and labels[expression["key"]] in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def spread_violations(
    pods: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]]
) -> list[str]:
    """Every DoNotSchedule constraint of every bound pod that the final placement breaks:
    skew above maxSkew, with the global minimum taken over the eligible domains (0 when
    fewer than minDomains). Assumes the pods of one constraint share its node selector."""
    node_list = list(nodes)
    pod_list = [p for p in pods if p["spec"].get("nodeName")]
    labels_of = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in node_list}
    problems: list[str] = []
    seen: set[str] = set()
    for pod in pod_list:
        namespace = pod["metadata"]["namespace"]
        selector_of_nodes = pod["spec"].get("nodeSelector") or {}
        for constraint in pod["spec"].get("topologySpreadConstraints") or ():
            if constraint.get("whenUnsatisfiable") != "DoNotSchedule":
                continue
            fingerprint = json.dumps([namespace, constraint, selector_of_nodes], sort_keys=True)
            if fingerprint in seen:
                continue
            seen.add(fingerprint)
            key = constraint["topologyKey"]
            eligible = {
                name: labels[key]
                for name, labels in labels_of.items()
                if key in labels and all(labels.get(k) == v for k, v in selector_of_nodes.items())
            }
            counts: Counter[str] = Counter(dict.fromkeys(set(eligible.values()), 0))
            for other in pod_list:
                if other["metadata"]["namespace"] != namespace:
                    continue
                node = other["spec"]["nodeName"]
                if node in eligible and _selector_matches(
                    constraint.get("labelSelector") or {}, other["metadata"].get("labels") or {}
                ):
                    counts[eligible[node]] += 1
            if not counts:
                continue
            minimum = min(counts.values())
            if len(counts) < constraint.get("minDomains", 1):
                minimum = 0
            skew = max(counts.values()) - minimum
            if skew > constraint["maxSkew"]:
                problems.append(
                    f"{namespace} {key} selector={constraint.get('labelSelector')}: "
                    f"skew {skew} > maxSkew {constraint['maxSkew']} ({dict(counts)})"
                )
    return problems


def admin(kubeconfig: str) -> Kube:
    """An admin :class:`Kube` from a kubeconfig path."""
    return Kube(connect(kubeconfig))
