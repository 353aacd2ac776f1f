"""``topospread rebalance --apply``: the plan carried out on a live cluster, batch by batch.

The edge around the pure planner (:mod:`topospread.engine.rebalance`): each round reads
the cluster, plans, evicts the first batch through the Eviction API (policy/v1, so the
API server enforces PodDisruptionBudgets: 429 means a budget refused), waits until the
owning controllers' replacements are scheduled (and Ready, where the evicted pod was, so
budgets recover), checks that each landed on one of the nodes the plan said it may
(the tied nodes), and plans again from what the cluster now is. It stops on surprises: a
refused eviction, a pod already gone, a replacement elsewhere, a replacement that is not
scheduled in time.

Only the holder of a coordination.k8s.io/v1 Lease evicts (:class:`Leadership`, client-go's
leader election from :mod:`topospread.client.leaderelection`, renewed on its own thread
for the whole run): the Lease is confirmed (renewed) just before each eviction and
checked while replacements are awaited, and a run whose Lease was lost or could not be
renewed stops at once with the reason.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from topospread.client.config import Connection
from topospread.client.transport import Request, raise_for_status
from topospread.engine.audit import Scope
from topospread.engine.rebalance import Eviction, RebalanceOptions, RebalancePlan, plan_rebalance
from topospread.framework.config.types import SchedulerConfiguration
from topospread.model.workloads import ManifestObject

__all__ = [
    "ApplyResult",
    "Leadership",
    "RoundResult",
    "apply_rebalance",
    "evict",
    "local_storage_pods",
]

Reader = Callable[[], tuple[list[ManifestObject], frozenset[str]]]
"""Reads the cluster: its objects and the pods with local storage."""


class Leadership(Protocol):
    """The Lease a run holds (:class:`~topospread.client.leaderelection.LeaderElector`)."""

    def leading(self) -> bool:
        """Whether we still hold it, without a request."""
        ...

    def confirm(self) -> bool:
        """Renew it now and say whether we still hold it (before an eviction)."""
        ...

    def why_not_leading(self) -> str:
        """One line on how it was lost."""
        ...


@dataclass
class RoundResult:
    """One batch: what the plan said and what happened."""

    plan: RebalancePlan
    evicted: list[Eviction] = field(default_factory=list)
    landed: dict[str, str] = field(default_factory=dict)
    """Evicted pod -> the node its replacement was scheduled to."""
    surprise: str | None = None

    def to_json(self) -> dict[str, object]:
        """``{"plan", "evicted", "landed", "surprise"}``."""
        return {
            "plan": self.plan.to_json(),
            "evicted": [e.pod for e in self.evicted],
            "landed": dict(self.landed),
            "surprise": self.surprise,
        }


@dataclass
class ApplyResult:
    """Every round of one ``--apply`` run."""

    rounds: list[RoundResult] = field(default_factory=list)
    converged: bool = False
    reason: str | None = None

    @property
    def evictions(self) -> int:
        """Pods evicted over all rounds."""
        return sum(len(r.evicted) for r in self.rounds)

    def to_json(self) -> dict[str, object]:
        """``{"converged", "reason", "evictions", "rounds"}``."""
        return {
            "converged": self.converged,
            "reason": self.reason,
            "evictions": self.evictions,
            "rounds": [r.to_json() for r in self.rounds],
        }


def local_storage_pods(items: Sequence[dict[str, Any]]) -> frozenset[str]:
    """``namespace/name`` of raw Pods with emptyDir or hostPath volumes (the descheduler's
    ``IsPodWithLocalStorage``)."""
    result = set()
    for item in items:
        if not isinstance(item, dict) or item.get("kind") != "Pod":
            continue
        spec = item.get("spec") or {}
        volumes = spec.get("volumes") or [] if isinstance(spec, dict) else []
        if any(isinstance(v, dict) and ("emptyDir" in v or "hostPath" in v) for v in volumes):
            meta = item.get("metadata") or {}
            result.add(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")
    return frozenset(result)


def evict(connection: Connection, pod: str) -> tuple[bool, str]:
    """POST a policy/v1 Eviction for ``namespace/name``: (done, why not)."""
    namespace, name = pod.split("/", 1)
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
    response = connection.transport.send(Request("POST", path, body=json.dumps(body).encode()))
    if response.status in (200, 201):
        return True, ""
    if response.status == 429:
        return False, f"eviction of {pod} refused: {_message(response.data)}"
    if response.status == 404:
        return False, f"pod {pod} is gone: the cluster changed since it was read"
    raise_for_status(
        response,
        connection.server,
        verb="create",
        resource="pods/eviction",
        namespace=namespace,
        name=name,
    )
    return False, f"eviction of {pod}: HTTP {response.status}"


def _message(data: bytes) -> str:
    try:
        return str(json.loads(data).get("message", ""))
    except ValueError:
        return data[:200].decode(errors="replace")


def _get_json(connection: Connection, path: str, query: tuple[tuple[str, str], ...] = ()) -> Any:
    response = connection.transport.send(Request("GET", path, query))
    raise_for_status(response, connection.server, verb="get", resource=path)
    return json.loads(response.data)


def _owner(pod: dict[str, Any]) -> tuple[str, str] | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _wait_for_replacements(
    connection: Connection,
    batch: Sequence[Eviction],
    before: dict[str, dict[str, Any]],
    existing: set[str],
    timeout: float,
    poll: float,
    lease: Leadership,
) -> tuple[dict[str, str], str | None]:
    """Wait until each evicted pod's controller has a new pod (one not in ``existing``,
    the namespaces' pods before the batch) scheduled; (landed, surprise). Stops waiting
    when the Lease is lost."""
    namespaces = sorted({e.pod.split("/", 1)[0] for e in batch})
    deadline = time.monotonic() + timeout
    landed: dict[str, str] = {}
    while True:
        if not lease.leading():
            return landed, lease.why_not_leading()
        pods: dict[str, dict[str, Any]] = {}
        for ns in namespaces:
            for item in _get_json(connection, f"/api/v1/namespaces/{ns}/pods")["items"]:
                meta = item["metadata"]
                pods[f"{meta['namespace']}/{meta['name']}"] = item
        landed = {}
        waiting: list[str] = []
        used: set[str] = set()
        for e in batch:
            old = before[e.pod]
            owner = _owner(old)
            old_uid = old["metadata"].get("uid")
            namespace = e.pod.split("/", 1)[0]
            new = [
                (key, p)
                for key, p in pods.items()
                if key.startswith(namespace + "/")
                and _owner(p) == owner
                and p["metadata"].get("uid") != old_uid
                and key not in existing
                and key not in used
                and not p["metadata"].get("deletionTimestamp")
            ]
            if owner is not None and owner[0] == "StatefulSet":
                new = [
                    (key, p)
                    for key, p in pods.items()
                    if key == e.pod and p["metadata"].get("uid") != old_uid
                ]
            bound = [(key, p) for key, p in new if (p.get("spec") or {}).get("nodeName")]
            if not bound:
                waiting.append(e.pod)
                continue
            # Prefer a replacement on a predicted node when several were created at once.
            bound.sort(key=lambda kp: kp[1]["spec"]["nodeName"] not in e.tied_nodes)
            key, replacement = bound[0]
            used.add(key)
            landed[e.pod] = replacement["spec"]["nodeName"]
            if _ready(old) and not _ready(replacement):
                waiting.append(e.pod)
        if not waiting:
            for e in batch:
                if landed[e.pod] not in e.tied_nodes:
                    return landed, (
                        f"the replacement of {e.pod} landed on {landed[e.pod]}, not on a "
                        f"predicted node ({', '.join(e.tied_nodes)})"
                    )
            return landed, None
        if time.monotonic() > deadline:
            return landed, (
                f"replacements of {', '.join(waiting)} not scheduled (and Ready where the "
                f"evicted pod was) within {timeout:g} s"
            )
        time.sleep(poll)


def apply_rebalance(
    connection: Connection,
    read: Reader,
    configuration: SchedulerConfiguration,
    scope: Scope,
    options: RebalanceOptions,
    *,
    lease: Leadership,
    timeout: float = 120.0,
    poll: float = 0.5,
    max_rounds: int = 100,
    echo: Callable[[str], None] = lambda _: None,
) -> ApplyResult:
    """Plan, evict one batch, wait, and plan again until balanced or stopped.

    Nothing is evicted unless ``lease`` confirms, just before that eviction, that we hold
    it; a lost Lease stops the run with ``reason`` saying so."""
    result = ApplyResult()
    budget = options.max_evictions
    for _ in range(max_rounds):
        objects, local = read()
        left = None if budget is None else budget - result.evictions
        round_options = RebalanceOptions(
            options.include_soft,
            options.allow_local_storage,
            local,
            left,
            options.max_per_node,
            options.max_per_namespace,
            options.batch_size,
        )
        plan = plan_rebalance(objects, configuration, scope, round_options)
        current = RoundResult(plan)
        if plan.converged and not plan.evictions:
            result.converged = True
            if not result.rounds:
                result.rounds.append(current)
            return result
        result.rounds.append(current)
        if not plan.converged:
            result.reason = plan.reason
            return result
        batch = [e for e in plan.evictions if e.batch == 1]
        before: dict[str, dict[str, Any]] = {}
        for e in batch:
            namespace, name = e.pod.split("/", 1)
            before[e.pod] = _get_json(connection, f"/api/v1/namespaces/{namespace}/pods/{name}")
        existing = {
            f"{namespace}/{item['metadata']['name']}"
            for namespace in sorted({e.pod.split("/", 1)[0] for e in batch})
            for item in _get_json(connection, f"/api/v1/namespaces/{namespace}/pods")["items"]
        }
        for e in batch:
            if not lease.confirm():
                current.surprise = lease.why_not_leading()
                break
            done, why = evict(connection, e.pod)
            if not done:
                current.surprise = why
                break
            current.evicted.append(e)
            echo(
                f"evicted {e.pod} from {e.node}; expecting {e.expected_node}"
                + (f" (tied: {', '.join(e.tied_nodes)})" if len(e.tied_nodes) > 1 else "")
            )
        if current.evicted:
            landed, surprise = _wait_for_replacements(
                connection, current.evicted, before, existing, timeout, poll, lease
            )
            current.landed = landed
            for pod, node in landed.items():
                echo(f"replacement of {pod} scheduled to {node}")
            current.surprise = current.surprise or surprise
        if current.surprise is not None:
            result.reason = f"stopped: {current.surprise}"
            return result
    result.reason = f"not balanced after {max_rounds} rounds"
    return result
