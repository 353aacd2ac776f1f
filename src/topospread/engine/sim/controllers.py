"""Workload controllers, faithful to kube-controller-manager v1.37.1 where spread depends on it.

* **ReplicaSet** (``pkg/controller/replicaset/replica_set.go``): pods are named
  ``<rs>-<5 chars>`` by the API server's ``SimpleNameGenerator`` (alphabet
  :data:`ALPHANUMS`, here from a seeded RNG); a scale-down deletes the pods that
  ``getPodsToDelete`` picks, ranked by ``ActivePodsWithRanks`` (:func:`pod_deletion_less`)
  with the "related pods" rank: pods on nodes holding more active pods of the same
  Deployment's ReplicaSets go first. Nothing in that ranking looks at topology, which
  is why a scale-down can leave the spread unbalanced.
* **Deployment** (``pkg/controller/deployment``): the new ReplicaSet is named
  ``<deployment>-<hash>`` and labelled ``pod-template-hash=<hash>``; rolling updates
  follow ``rolloutRolling`` (``NewRSNewReplicas``, ``reconcileOldReplicaSets``,
  ``cleanupUnhealthyReplicas``, ``scaleDownOldReplicaSetsForRollingUpdate``) with
  maxSurge rounded up and maxUnavailable rounded down (``ResolveFenceposts``); scaling
  during a rollout is proportional (``scale``); Recreate scales old to 0 first.
* **StatefulSet** (``pkg/controller/statefulset``): pods ``<name>-<ordinal>``;
  OrderedReady creates one pod at a time in ordinal order and deletes from the highest
  ordinal down, waiting for every pod to be Running and Ready; Parallel does it all at
  once; RollingUpdate replaces pods from the highest ordinal down, one at a time. A pod's
  claims from ``volumeClaimTemplates`` are created before it and kept per the retention
  policy (:mod:`.volumes`).
* **Ownership** (``pkg/controller/controller_ref_manager.go``): objects written as a
  cluster stores them (a ``kubectl get -o yaml`` capture, ``--from-cluster``) keep their
  UIDs, and their controllers take them over (:meth:`Controllers.take_over`): a Deployment
  its ReplicaSets, a ReplicaSet or StatefulSet its active pods, by controllerRef where the
  selector matches (``ClaimReplicaSets``, ``ClaimPods``); each sync also adopts orphans
  its selector matches. A Deployment then finds its existing ReplicaSet by template
  (``EqualIgnoreHash``), so none is made again and no pod is created for replicas that
  exist.
* **Evictions** (``pkg/registry/core/pod/storage/eviction.go`` with the disruption
  controller's arithmetic): a pod may be evicted while every budget selecting it
  allows a disruption.

Deviations, on purpose: the template hash is FNV-32a over a canonical rendering of
the template rather than over Go's ``spew`` dump of the struct (so names differ from
a real cluster's but are just as deterministic); UIDs are sequential, so where
upstream falls back to comparing random UIDs the older pod is picked; the sort is
stable over creation order where Go's ``sort.Sort`` leaves ties in an unspecified order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum
from functools import cmp_to_key
from typing import TYPE_CHECKING, Final

from topospread.model.objects import (
    IntOrString,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
)
from topospread.model.quantity import Quantity

from .state import (
    ClusterState,
    DeploymentState,
    OwnerKey,
    PodRecord,
    ReplicaSetState,
    StatefulSetState,
)

if TYPE_CHECKING:
    from .volumes import VolumeControllers

__all__ = [
    "ALPHANUMS",
    "ANNOTATION_DESIRED_REPLICAS",
    "ANNOTATION_MAX_REPLICAS",
    "ANNOTATION_POD_DELETION_COST",
    "ANNOTATION_REVISION",
    "BURST_REPLICAS",
    "LABEL_POD_TEMPLATE_HASH",
    "Controllers",
    "RankView",
    "compute_hash",
    "disruptions_allowed",
    "generate_name",
    "pod_deletion_less",
    "pods_to_delete",
    "resolve_fenceposts",
    "safe_encode_string",
    "scaled_value",
    "selector_matches",
    "stateful_set_revision",
]

ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``k8s.io/apimachinery/pkg/util/rand``: no vowels (no words), no 0/1/3 (look-alikes)."""
_MAX_GENERATED_NAME_LENGTH: Final = 63 - 5
LABEL_POD_TEMPLATE_HASH: Final = "pod-template-hash"
ANNOTATION_REVISION: Final = "deployment.kubernetes.io/revision"
ANNOTATION_DESIRED_REPLICAS: Final = "deployment.kubernetes.io/desired-replicas"
ANNOTATION_MAX_REPLICAS: Final = "deployment.kubernetes.io/max-replicas"
ANNOTATION_POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
LABEL_SS_POD_NAME: Final = "statefulset.kubernetes.io/pod-name"
LABEL_SS_POD_INDEX: Final = "apps.kubernetes.io/pod-index"
LABEL_CONTROLLER_REVISION_HASH: Final = "controller-revision-hash"
BURST_REPLICAS: Final = 500
"""``--replicaset-controller burstReplicas``: most pods created or deleted per sync."""

Requeue = Callable[[OwnerKey], None]


# -- names and hashes ----------------------------------------------------------------------------


def generate_name(base: str, rng: random.Random) -> str:
    """``SimpleNameGenerator.GenerateName``: base (cut to 58) + 5 random alphanumerics."""
    if len(base) > _MAX_GENERATED_NAME_LENGTH:
        base = base[:_MAX_GENERATED_NAME_LENGTH]
    return base + "".join(rng.choice(ALPHANUMS) for _ in range(5))


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped onto :data:`ALPHANUMS`."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in text.encode())


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def _canonical(value: object) -> str:
    # A stable rendering: dataclass fields in declaration order, maps sorted by key.
    if is_dataclass(value) and not isinstance(value, type):
        inner = ",".join(
            f"{f.name}={_canonical(getattr(value, f.name))}"
            for f in fields(value)
            # Fields outside an object's value (compare=False) and unset optional ones are
            # left out, so that adding either to the model keeps every hash.
            if f.compare
            and not (f.metadata.get("omitempty") and getattr(value, f.name) == f.default)
        )
        return f"{type(value).__name__}({inner})"
    if isinstance(value, Mapping):
        items = sorted((str(k), _canonical(v)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, tuple | list):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, Quantity):
        return str(value)
    return repr(value)


def compute_hash(template: Pod, collision_count: int | None = None) -> str:
    """``controller.ComputeHash``: FNV-32a of the template (+ collision count), encoded.

    The hashed bytes are a canonical rendering of the template, not Go's spew dump, so
    the value differs from a real cluster's; the shape (``SafeEncodeString`` of the
    decimal uint32) is upstream's.
    """
    data = _canonical(template).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    return safe_encode_string(str(_fnv32a(data)))


# -- arithmetic ----------------------------------------------------------------------------------


def scaled_value(value: IntOrString, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def resolve_fenceposts(
    max_surge: IntOrString, max_unavailable: IntOrString, desired: int
) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable down; both 0 ⇒ unavailable 1."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _go_round(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


# -- ReplicaSet scale-down ranking ---------------------------------------------------------------

_PHASE_ORDINAL: Final = {"Pending": 0, "Unknown": 1, "Running": 2}


@dataclass(frozen=True, slots=True)
class RankView:
    """The fields of a pod that ``ActivePodsWithRanks.Less`` reads (times in seconds)."""

    name: str
    node_name: str
    phase: str
    ready: bool
    ready_since: float | None = None
    """LastTransitionTime of the Ready condition; None is the zero time."""
    created: float | None = None
    """creationTimestamp; None is the zero time."""
    restarts: int = 0
    sidecar_restarts: int = 0
    annotations: Mapping[str, str] | None = None
    uid: str = ""

    @classmethod
    def of(cls, record: PodRecord) -> RankView:
        """From a simulated pod."""
        pod = record.pod
        return cls(
            pod.name,
            pod.node_name,
            pod.phase or "Pending",
            record.ready,
            record.ready_since,
            record.created,
            record.restarts,
            0,
            pod.metadata.annotations,
            record.uid,
        )


def _deletion_cost(annotations: Mapping[str, str] | None) -> int:
    # helper.GetDeletionCostFromPodAnnotations: int32, no '+', no leading zeros; else 0.
    value = (annotations or {}).get(ANNOTATION_POD_DELETION_COST)
    if not value:
        return 0
    first_ok = value[0] == "-" or (value[0] == "0" and value == "0") or "1" <= value[0] <= "9"
    if not first_ok:
        return 0
    try:
        cost = int(value, 10)
    except ValueError:
        return 0
    return cost if -(2**31) <= cost < 2**31 else 0


def _log_rank_diff(t1: float, t2: float, now: float) -> int:
    # logarithmicRankDiff, on nanosecond durations as Go's time.Duration.
    d1, d2 = (now - t1) * 1e9, (now - t2) * 1e9
    r1 = int(math.log2(d1)) if d1 > 0 else -1
    r2 = int(math.log2(d2)) if d2 > 0 else -1
    return r1 - r2


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def pod_deletion_less(
    a: RankView,
    rank_a: int,
    b: RankView,
    rank_b: int,
    now: float | None,
    *,
    pod_deletion_cost: bool = True,
) -> bool:
    """``ActivePodsWithRanks.Less``: whether ``a`` should be deleted before ``b``.

    1. unassigned < assigned; 2. Pending < Unknown < Running; 3. not ready < ready;
    4. lower pod-deletion-cost first; 5. higher rank (more related pods on its node)
    first; 6. both ready: more recently ready first (log2 buckets of age, then UID);
    7. more container restarts first (regular, then sidecar); 8. newer first (log2
    buckets, then UID); zero times count as newest.
    """
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return not a.node_name
    pa, pb = _PHASE_ORDINAL.get(a.phase, 0), _PHASE_ORDINAL.get(b.phase, 0)
    if pa != pb:
        return pa < pb
    if a.ready != b.ready:
        return not a.ready
    if pod_deletion_cost:
        ca, cb = _deletion_cost(a.annotations), _deletion_cost(b.annotations)
        if ca != cb:
            return ca < cb
    if rank_a != rank_b:
        return rank_a > rank_b
    if a.ready and b.ready:
        ta, tb = a.ready_since, b.ready_since
        if ta != tb:
            if now is None or ta is None or tb is None:
                return _after_or_zero(ta, tb)
            diff = _log_rank_diff(ta, tb, now)
            if diff == 0:
                return a.uid < b.uid
            return diff < 0
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    if a.sidecar_restarts != b.sidecar_restarts:
        return a.sidecar_restarts > b.sidecar_restarts
    if a.created != b.created:
        if now is None or a.created is None or b.created is None:
            return _after_or_zero(a.created, b.created)
        diff = _log_rank_diff(a.created, b.created, now)
        if diff == 0:
            return a.uid < b.uid
        return diff < 0
    return False


def pods_to_delete(
    pods: Sequence[PodRecord], related: Sequence[PodRecord], diff: int, now: float
) -> list[PodRecord]:
    """``getPodsToDelete``: rank by related pods on the same node, sort, take ``diff``."""
    if diff >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for record in related:
        # IsPodActive: every simulated pod is active (no terminal phases, instant deletes).
        on_node[record.node_name] = on_node.get(record.node_name, 0) + 1
    ranked = [(RankView.of(r), on_node.get(r.node_name, 0), r) for r in pods]

    def compare(x: tuple[RankView, int, PodRecord], y: tuple[RankView, int, PodRecord]) -> int:
        if pod_deletion_less(x[0], x[1], y[0], y[1], now):
            return -1
        if pod_deletion_less(y[0], y[1], x[0], x[1], now):
            return 1
        return 0

    ranked.sort(key=cmp_to_key(compare))
    return [r for _, _, r in ranked[:diff]]


# -- disruption budgets --------------------------------------------------------------------------


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """``LabelSelectorAsSelector(selector).Matches(labels)`` for a valid selector; nil: no."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    return all(_requirement_matches(e, labels) for e in selector.match_expressions)


def _requirement_matches(e: LabelSelectorRequirement, labels: Mapping[str, str]) -> bool:
    present = e.key in labels
    if e.operator == "In":
        return present and labels[e.key] in e.values
    if e.operator == "NotIn":
        return not present or labels[e.key] not in e.values
    if e.operator == "Exists":
        return present
    return not present


def disruptions_allowed(state: ClusterState, namespace: str, name: str) -> int:
    """A budget's ``disruptionsAllowed``, as the disruption controller computes it.

    ``currentHealthy`` counts the selected Ready pods. An integer ``minAvailable`` is
    the desired count directly; a percentage, or ``maxUnavailable``, is taken of the
    expected count — the scale of the selected pods' controllers (a Deployment through
    its ReplicaSet, a StatefulSet, a bare ReplicaSet) — rounding up. Pods without a
    controller make that count unknowable: then no disruption is allowed.
    """
    pdb = state.budgets[(namespace, name)]
    pods = [
        r
        for r in state.pods.values()
        if r.pod.namespace == namespace and selector_matches(pdb.selector, r.pod.labels)
    ]
    healthy = sum(1 for r in pods if r.ready)
    if isinstance(pdb.min_available, int):
        return max(0, healthy - pdb.min_available)
    scales: dict[OwnerKey, int] = {}
    for record in pods:
        scale = _controller_scale(state, record.owner)
        if scale is None:
            return 0
        scales[scale[0]] = scale[1]
    expected = sum(scales.values())
    if pdb.max_unavailable is not None:
        desired = expected - scaled_value(pdb.max_unavailable, expected, round_up=True)
    elif pdb.min_available is not None:
        desired = scaled_value(pdb.min_available, expected, round_up=True)
    else:
        desired = expected
    return max(0, healthy - desired)


def _controller_scale(state: ClusterState, owner: OwnerKey | None) -> tuple[OwnerKey, int] | None:
    if owner is None:
        return None
    kind, namespace, name = owner
    if kind == "ReplicaSet":
        rs = state.replica_sets.get((namespace, name))
        if rs is None:
            return None
        if rs.owner is not None:
            deployment = state.deployments.get(rs.owner[1:])
            if deployment is not None:
                return rs.owner, deployment.replicas
        return owner, rs.replicas
    if kind == "StatefulSet":
        ss = state.stateful_sets.get((namespace, name))
        return (owner, ss.replicas) if ss is not None else None
    return None


def budgets_blocking(state: ClusterState, record: PodRecord) -> list[str]:
    """Names of the budgets that forbid evicting ``record`` now (empty: evict)."""
    if not record.ready:
        return []
    return [
        name
        for (namespace, name), pdb in state.budgets.items()
        if namespace == record.pod.namespace
        and selector_matches(pdb.selector, record.pod.labels)
        and disruptions_allowed(state, namespace, name) <= 0
    ]


# -- the controllers -----------------------------------------------------------------------------


def _owner_reference(kind: str, api_version: str, name: str, uid: str) -> OwnerReference:
    return OwnerReference(api_version, kind, name, uid, controller=True)


def _with_label(selector: LabelSelector | None, key: str, value: str) -> LabelSelector:
    base = selector or LabelSelector()
    return LabelSelector({**base.match_labels, key: value}, base.match_expressions)


def _is_active(pod: Pod) -> bool:
    # controller.IsPodActive: not Succeeded or Failed, not being deleted.
    return pod.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def _controlled_by(meta: ObjectMeta, kind: str, controller: ObjectMeta, uid: str) -> bool | None:
    """Whether ``meta``'s controllerRef names the controller (``ClaimObject`` compares UIDs;
    a scenario written by hand may leave them out, then kind and name decide); None: it
    has no controllerRef (an orphan)."""
    ref = meta.controller()
    if ref is None:
        return None
    if ref.kind != kind or ref.name != controller.name or ref.api_version != "apps/v1":
        return False
    return not ref.uid or not controller.uid or ref.uid == uid


def _is_member_of(name: str, pod: Pod) -> bool:
    # isMemberOf: the pod's name is <set>-<ordinal>.
    parent, _, ordinal = pod.name.rpartition("-")
    return parent == name and ordinal.isdigit()


def _without_label(template: Pod, key: str) -> Pod:
    labels = template.metadata.labels
    if key not in labels:
        return template
    kept = {k: v for k, v in labels.items() if k != key}
    return replace(template, metadata=replace(template.metadata, labels=kept))


class Controllers:
    """The ReplicaSet, Deployment and StatefulSet controllers over one cluster state."""

    def __init__(
        self,
        state: ClusterState,
        rng: random.Random,
        requeue: Requeue,
        volumes: VolumeControllers,
    ) -> None:
        self.state = state
        self.rng = rng
        self.requeue = requeue
        """Ask for another sync of a controller (the work queue)."""
        self.volumes = volumes
        """Claims of StatefulSet pods are created and re-owned through it."""

    def take_over(self) -> None:
        """What a running cluster's controllers hold, for objects a scenario wrote as they
        are stored (a capture, a live cluster): ReplicaSets whose controllerRef names a
        Deployment, pods whose controllerRef names a ReplicaSet or StatefulSet, where the
        controller exists and its selector matches (``ClaimReplicaSets``, ``ClaimPods``).
        Orphans (no controllerRef) are adopted by the controllers' own syncs.

        A StatefulSet's existing pods count as at its current revision: a rollout that
        was in progress when the cluster was captured is not resumed."""
        state = self.state
        for rs in state.replica_sets.values():
            ref = rs.obj.metadata.controller()
            if rs.owner is not None or ref is None or ref.kind != "Deployment":
                continue
            d = state.deployments.get((rs.namespace, ref.name))
            if (
                d is not None
                and _controlled_by(rs.obj.metadata, "Deployment", d.obj.metadata, d.uid)
                and selector_matches(d.obj.selector, rs.obj.metadata.labels)
            ):
                rs.owner = ("Deployment", rs.namespace, ref.name)
        for record in list(state.unowned.values()):
            pod = record.pod
            ref = pod.metadata.controller()
            if ref is None or not _is_active(pod):
                continue
            key = (pod.namespace, ref.name)
            if ref.kind == "ReplicaSet" and key in state.replica_sets:
                rs = state.replica_sets[key]
                if _controlled_by(
                    pod.metadata, "ReplicaSet", rs.obj.metadata, rs.uid
                ) and selector_matches(rs.obj.selector, pod.labels):
                    state.claim(record, ("ReplicaSet", *key))
            elif ref.kind == "StatefulSet" and key in state.stateful_sets:
                ss = state.stateful_sets[key]
                if (
                    _controlled_by(pod.metadata, "StatefulSet", ss.obj.metadata, ss.uid)
                    and selector_matches(ss.obj.selector, pod.labels)
                    and _is_member_of(ref.name, pod)
                ):
                    state.claim(record, ("StatefulSet", *key), ss.revision)

    def _adopt_pods(
        self, owner: OwnerKey, selector: LabelSelector | None, revision: str = ""
    ) -> None:
        # ClaimPods for orphans: active pods of the namespace without a controllerRef
        # that the selector matches (and, for a StatefulSet, named as its members).
        kind, namespace, name = owner
        for record in list(self.state.unowned.values()):
            pod = record.pod
            if (
                pod.namespace == namespace
                and pod.metadata.controller() is None
                and _is_active(pod)
                and selector_matches(selector, pod.labels)
                and (kind != "StatefulSet" or _is_member_of(name, pod))
            ):
                self.state.claim(record, owner, revision)

    def sync(self, owner: OwnerKey) -> None:
        """Run one sync of the controller ``owner`` (missing controllers are ignored)."""
        kind, namespace, name = owner
        if kind == "ReplicaSet" and (namespace, name) in self.state.replica_sets:
            self.sync_replica_set(self.state.replica_sets[(namespace, name)])
        elif kind == "Deployment" and (namespace, name) in self.state.deployments:
            self.sync_deployment(self.state.deployments[(namespace, name)])
        elif kind == "StatefulSet" and (namespace, name) in self.state.stateful_sets:
            self.sync_stateful_set(self.state.stateful_sets[(namespace, name)])

    # -- ReplicaSet -----------------------------------------------------------------------

    def sync_replica_set(self, rs: ReplicaSetState) -> None:
        """``manageReplicas``: create or delete pods toward ``replicas`` (burst 500)."""
        owner: OwnerKey = ("ReplicaSet", rs.namespace, rs.name)
        if self.state.unowned:
            self._adopt_pods(owner, rs.obj.selector)
        pods = list(self.state.pods_of(owner))
        diff = len(pods) - rs.replicas
        if diff < 0:
            template = rs.obj.template
            assert template is not None
            for _ in range(min(-diff, BURST_REPLICAS)):
                self._create_rs_pod(rs, template, owner)
            if -diff > BURST_REPLICAS:
                self.requeue(owner)
        elif diff > 0:
            diff = min(diff, BURST_REPLICAS)
            related = self._related_pods(rs)
            for record in pods_to_delete(pods, related, diff, self.state.now):
                self.state.delete_pod(record.key, f"scale-down of ReplicaSet {rs.name}")
            if len(pods) - diff > rs.replicas:
                self.requeue(owner)

    def _create_rs_pod(self, rs: ReplicaSetState, template: Pod, owner: OwnerKey) -> None:
        name = generate_name(rs.name + "-", self.rng)
        while f"{rs.namespace}/{name}" in self.state.pods:
            name = generate_name(rs.name + "-", self.rng)
        meta = template.metadata
        pod = replace(
            template,
            metadata=ObjectMeta(
                name=name,
                namespace=rs.namespace,
                labels=dict(meta.labels),
                annotations=dict(meta.annotations),
                owner_references=(_owner_reference("ReplicaSet", "apps/v1", rs.name, rs.uid),),
            ),
            node_name="",
            phase="Pending",
        )
        self.state.create_pod(pod, owner)

    def _related_pods(self, rs: ReplicaSetState) -> list[PodRecord]:
        # getIndirectlyRelatedPods: pods of every ReplicaSet with the same controller.
        if rs.owner is None:
            return list(self.state.pods_of(("ReplicaSet", rs.namespace, rs.name)))
        related: list[PodRecord] = []
        for sibling in self.state.replica_sets_of(rs.owner[1:]):
            related.extend(self.state.pods_of(("ReplicaSet", sibling.namespace, sibling.name)))
        return related

    def _available(self, rs: ReplicaSetState) -> int:
        return sum(1 for r in self.state.pods_of(("ReplicaSet", rs.namespace, rs.name)) if r.ready)

    def _actual(self, rs: ReplicaSetState) -> int:
        return self.state.count_of(("ReplicaSet", rs.namespace, rs.name))

    # -- Deployment -----------------------------------------------------------------------

    def _max_surge(self, d: DeploymentState) -> int:
        if d.obj.strategy.type != "RollingUpdate":
            return 0
        strategy = d.obj.strategy
        return resolve_fenceposts(strategy.max_surge, strategy.max_unavailable, d.replicas)[0]

    def _max_unavailable(self, d: DeploymentState) -> int:
        if d.obj.strategy.type != "RollingUpdate" or d.replicas == 0:
            return 0
        strategy = d.obj.strategy
        unavailable = resolve_fenceposts(strategy.max_surge, strategy.max_unavailable, d.replicas)[
            1
        ]
        return min(unavailable, d.replicas)

    def _scale_rs(self, rs: ReplicaSetState, replicas: int, d: DeploymentState) -> bool:
        # scaleReplicaSet: set replicas and the desired/max annotations.
        annotations = {
            ANNOTATION_DESIRED_REPLICAS: str(d.replicas),
            ANNOTATION_MAX_REPLICAS: str(d.replicas + self._max_surge(d)),
        }
        changed = rs.replicas != replicas
        rs.annotations.update(annotations)
        if changed:
            rs.replicas = replicas
            self.requeue(("ReplicaSet", rs.namespace, rs.name))
        return changed

    def _find_new(
        self, d: DeploymentState, rs_list: list[ReplicaSetState]
    ) -> ReplicaSetState | None:
        # FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's,
        # ignoring the pod-template-hash label.
        for rs in rs_list:
            template = rs.obj.template
            if (
                template is not None
                and _without_label(template, LABEL_POD_TEMPLATE_HASH) == d.template
            ):
                return rs
        return None

    def _create_new_rs(self, d: DeploymentState, old: list[ReplicaSetState]) -> ReplicaSetState:
        namespace, name = d.obj.metadata.namespace, d.obj.metadata.name
        while True:
            pod_hash = compute_hash(d.template, d.collision_count or None)
            rs_name = _replica_set_name(name, pod_hash)
            if (namespace, rs_name) not in self.state.replica_sets:
                break
            d.collision_count += 1  # a hash collision: upstream bumps collisionCount
        labels = {**d.template.metadata.labels, LABEL_POD_TEMPLATE_HASH: pod_hash}
        template = replace(d.template, metadata=replace(d.template.metadata, labels=labels))
        obj = ReplicaSet(
            ObjectMeta(
                name=rs_name,
                namespace=namespace,
                labels=labels,
                owner_references=(_owner_reference("Deployment", "apps/v1", name, d.uid),),
            ),
            _with_label(d.obj.selector, LABEL_POD_TEMPLATE_HASH, pod_hash),
            0,
            template,
        )
        revision = 1 + max(
            (int(rs.annotations.get(ANNOTATION_REVISION, "0")) for rs in old), default=0
        )
        rs = ReplicaSetState(
            obj,
            self.state.new_uid(),
            self.state.now,
            0,
            ("Deployment", namespace, name),
            {ANNOTATION_REVISION: str(revision)},
        )
        rs.replicas = self._new_rs_new_replicas(d, [*old, rs], rs)
        rs.annotations[ANNOTATION_DESIRED_REPLICAS] = str(d.replicas)
        rs.annotations[ANNOTATION_MAX_REPLICAS] = str(d.replicas + self._max_surge(d))
        self.state.replica_sets[(namespace, rs_name)] = rs
        self.requeue(("ReplicaSet", namespace, rs_name))
        return rs

    def _new_rs_new_replicas(
        self, d: DeploymentState, all_rss: list[ReplicaSetState], new: ReplicaSetState
    ) -> int:
        # NewRSNewReplicas.
        if d.obj.strategy.type != "RollingUpdate":
            return d.replicas
        max_total = d.replicas + scaled_value(d.obj.strategy.max_surge, d.replicas, round_up=True)
        current = sum(rs.replicas for rs in all_rss)
        if current >= max_total:
            return new.replicas
        scale_up = min(max_total - current, d.replicas - new.replicas)
        return new.replicas + scale_up

    def sync_deployment(self, d: DeploymentState) -> None:
        """``syncDeployment``: a scaling event, else a rollout step (rolling or recreate)."""
        key = (d.obj.metadata.namespace, d.obj.metadata.name)
        self._adopt_replica_sets(d)
        rs_list = self.state.replica_sets_of(key)
        new = self._find_new(d, rs_list)
        old = [rs for rs in rs_list if rs is not new]
        if new is not None:
            # getNewReplicaSet refreshes the new ReplicaSet's annotations on every sync.
            new.annotations[ANNOTATION_DESIRED_REPLICAS] = str(d.replicas)
            new.annotations[ANNOTATION_MAX_REPLICAS] = str(d.replicas + self._max_surge(d))
        if self._is_scaling_event(d, old):
            self._scale(d, new, old)
            return
        if d.obj.strategy.type == "Recreate":
            self._rollout_recreate(d, new, old)
        else:
            self._rollout_rolling(d, new, old)

    def _adopt_replica_sets(self, d: DeploymentState) -> None:
        # ClaimReplicaSets for orphans: ReplicaSets of the namespace without a
        # controllerRef whose labels the Deployment's selector matches get one.
        namespace, name = d.obj.metadata.namespace, d.obj.metadata.name
        for rs in self.state.replica_sets.values():
            meta = rs.obj.metadata
            if (
                rs.owner is None
                and rs.namespace == namespace
                and meta.controller() is None
                and selector_matches(d.obj.selector, meta.labels)
            ):
                rs.owner = ("Deployment", namespace, name)
                ref = _owner_reference("Deployment", "apps/v1", name, d.uid)
                rs.obj = replace(
                    rs.obj, metadata=replace(meta, owner_references=(*meta.owner_references, ref))
                )

    def _is_scaling_event(self, d: DeploymentState, old: list[ReplicaSetState]) -> bool:
        for rs in old:
            if rs.replicas > 0:
                desired = rs.annotations.get(ANNOTATION_DESIRED_REPLICAS)
                if desired is not None and int(desired) != d.replicas:
                    return True
        return False

    def _scale(
        self, d: DeploymentState, new: ReplicaSetState | None, old: list[ReplicaSetState]
    ) -> None:
        # DeploymentController.scale.
        active = [rs for rs in ([*old, new] if new is not None else old) if rs.replicas > 0]
        if len(active) <= 1:
            target = active[0] if active else (new or (old[-1] if old else None))
            if target is not None and target.replicas != d.replicas:
                self._scale_rs(target, d.replicas, d)
            return
        if new is not None and self._is_saturated(d, new):
            for rs in old:
                if rs.replicas > 0:
                    self._scale_rs(rs, 0, d)
            return
        if d.obj.strategy.type != "RollingUpdate":
            return
        all_replicas = sum(rs.replicas for rs in active)
        allowed = d.replicas + self._max_surge(d) if d.replicas > 0 else 0
        to_add = allowed - all_replicas
        if to_add > 0:
            # ReplicaSetsBySizeNewer: larger first, then newer first.
            active.sort(key=lambda rs: (-rs.replicas, -rs.created, _Desc(rs.name)))
        elif to_add < 0:
            # ReplicaSetsBySizeOlder: larger first, then older first.
            active.sort(key=lambda rs: (-rs.replicas, rs.created, rs.name))
        added = 0
        sizes: dict[str, int] = {}
        for rs in active:
            if to_add != 0:
                proportion = self._proportion(rs, d, to_add, added)
                sizes[rs.name] = rs.replicas + proportion
                added += proportion
            else:
                sizes[rs.name] = rs.replicas
        for i, rs in enumerate(active):
            if i == 0 and to_add != 0:
                sizes[rs.name] = max(0, sizes[rs.name] + to_add - added)
            self._scale_rs(rs, sizes[rs.name], d)

    def _is_saturated(self, d: DeploymentState, rs: ReplicaSetState) -> bool:
        desired = rs.annotations.get(ANNOTATION_DESIRED_REPLICAS)
        return (
            rs.replicas == d.replicas
            and desired is not None
            and int(desired) == d.replicas
            and self._available(rs) == d.replicas
        )

    def _proportion(self, rs: ReplicaSetState, d: DeploymentState, to_add: int, added: int) -> int:
        # GetReplicaSetProportion / getReplicaSetFraction.
        if rs.replicas == 0 or to_add == 0 or to_add == added:
            return 0
        if d.replicas == 0:
            fraction = -rs.replicas
        else:
            max_replicas = d.replicas + self._max_surge(d)
            before = int(rs.annotations.get(ANNOTATION_MAX_REPLICAS, "0") or 0)
            if before == 0:
                before = sum(
                    self._actual(x)
                    for x in self.state.replica_sets_of(
                        (d.obj.metadata.namespace, d.obj.metadata.name)
                    )
                )
            if before == 0:
                fraction = 0
            else:
                fraction = _go_round(rs.replicas * max_replicas / before) - rs.replicas
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def _rollout_rolling(
        self, d: DeploymentState, new: ReplicaSetState | None, old: list[ReplicaSetState]
    ) -> None:
        if new is None:
            new = self._create_new_rs(d, old)
        all_rss = [*old, new]
        # reconcileNewReplicaSet
        if new.replicas != d.replicas:
            target = (
                d.replicas
                if new.replicas > d.replicas
                else self._new_rs_new_replicas(d, all_rss, new)
            )
            if self._scale_rs(new, target, d):
                return
        # reconcileOldReplicaSets
        old_active = [rs for rs in old if rs.replicas > 0]
        if not old_active:
            return
        all_count = sum(rs.replicas for rs in all_rss)
        min_available = d.replicas - self._max_unavailable(d)
        new_unavailable = new.replicas - self._available(new)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        old_active.sort(key=lambda rs: (rs.created, rs.name))
        cleaned = 0
        for rs in old_active:  # cleanupUnhealthyReplicas
            if cleaned >= max_scaled_down:
                break
            if rs.replicas == 0:
                continue
            unhealthy = rs.replicas - self._available(rs)
            if unhealthy <= 0:
                continue
            count = min(max_scaled_down - cleaned, unhealthy)
            self._scale_rs(rs, rs.replicas - count, d)
            cleaned += count
        # scaleDownOldReplicaSetsForRollingUpdate
        available = sum(self._available(rs) for rs in all_rss)
        if available <= min_available:
            return
        total = available - min_available
        scaled = 0
        for rs in old_active:
            if scaled >= total:
                break
            if rs.replicas == 0:
                continue
            count = min(rs.replicas, total - scaled)
            self._scale_rs(rs, rs.replicas - count, d)
            scaled += count

    def _rollout_recreate(
        self, d: DeploymentState, new: ReplicaSetState | None, old: list[ReplicaSetState]
    ) -> None:
        # rolloutRecreate: scale down every old ReplicaSet, wait until their pods are gone,
        # then create (or scale up) the new one.
        scaled = False
        for rs in old:
            if rs.replicas > 0:
                self._scale_rs(rs, 0, d)
                scaled = True
        if scaled or any(self._actual(rs) > 0 for rs in old):
            return
        if new is None:
            new = self._create_new_rs(d, old)
        if new.replicas != d.replicas:
            self._scale_rs(new, d.replicas, d)

    # -- StatefulSet ----------------------------------------------------------------------

    def sync_stateful_set(self, ss: StatefulSetState) -> None:
        """``updateStatefulSet``: create missing ordinals, delete condemned, roll the template."""
        namespace, name = ss.obj.metadata.namespace, ss.obj.metadata.name
        owner: OwnerKey = ("StatefulSet", namespace, name)
        if self.state.unowned:
            self._adopt_pods(owner, ss.obj.selector, ss.revision)
        by_ordinal: dict[int, PodRecord] = {}
        for record in self.state.pods_of(owner):
            ordinal = int(record.pod.name.rsplit("-", 1)[1])
            by_ordinal[ordinal] = record
        ordered = ss.obj.pod_management_policy != "Parallel"
        for ordinal in range(ss.replicas):
            existing = by_ordinal.get(ordinal)
            if existing is None:
                self._create_ss_pod(ss, ordinal, owner)
                if ordered:
                    return  # OrderedReady: one pod at a time; its readiness requeues us
                continue
            if ordered and not existing.ready:
                return
        condemned = sorted((o for o in by_ordinal if o >= ss.replicas), reverse=True)
        for ordinal in condemned:
            if ordered and not all(r.ready for r in by_ordinal.values()):
                return
            # Under whenScaled: Delete the claims pass to the pod first, so that they go
            # with it; otherwise they stay for a later scale-up to reuse.
            self.volumes.set_claim_owners(ss, by_ordinal[ordinal].pod, scaled_down=True)
            self.state.delete_pod(by_ordinal[ordinal].key, f"scale-down of StatefulSet {name}")
            del by_ordinal[ordinal]
            if ordered:
                return
        if ss.obj.update_strategy != "RollingUpdate":
            return
        if not all(r.ready for r in by_ordinal.values()):
            return
        # RollingUpdate (maxUnavailable 1): the highest ordinal not at the update revision.
        for ordinal in sorted(by_ordinal, reverse=True):
            record = by_ordinal[ordinal]
            if record.revision != ss.revision:
                self.state.delete_pod(record.key, f"rolling update of StatefulSet {name}")
                return

    def _create_ss_pod(self, ss: StatefulSetState, ordinal: int, owner: OwnerKey) -> None:
        namespace, name = ss.obj.metadata.namespace, ss.obj.metadata.name
        pod_name = f"{name}-{ordinal}"
        meta = ss.template.metadata
        labels = {
            **meta.labels,
            LABEL_SS_POD_NAME: pod_name,
            LABEL_SS_POD_INDEX: str(ordinal),
            LABEL_CONTROLLER_REVISION_HASH: ss.revision,
        }
        pod = replace(
            ss.template,
            metadata=ObjectMeta(
                name=pod_name,
                namespace=namespace,
                labels=labels,
                annotations=dict(meta.annotations),
                owner_references=(_owner_reference("StatefulSet", "apps/v1", name, ss.uid),),
            ),
            node_name="",
            phase="Pending",
        )
        # The claims exist before the pod (CreateStatefulPod), then get their owners.
        pod = self.volumes.stateful_set_pod(ss, pod, ordinal)
        record = self.state.create_pod(pod, owner, revision=ss.revision)
        self.volumes.set_claim_owners(ss, record.pod, scaled_down=False)


class _Desc:
    """Reverses string order inside a sort key."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    __hash__ = None  # type: ignore[assignment]


def _replica_set_name(deployment: str, pod_hash: str) -> str:
    # generateReplicaSetName: cut the Deployment name so that the result fits 253.
    limit = 253 - 1 - len(pod_hash)
    if len(deployment) > limit > 0:
        deployment = deployment[:limit]
    return f"{deployment}-{pod_hash}"


def stateful_set_revision(name: str, template: Pod) -> str:
    """The ``controller-revision-hash`` label value: ``<name>-<hash of the template>``."""
    return f"{name}-{compute_hash(template)}"
