"""VolumeBinding's PreFilter, Filter, PreScore and Score on objects built in Python.

Cases follow pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go and
binder_test.go (v1.37.1); tests/differential/test_volume_binding.py compares fixtures with
upstream itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import pytest

from topospread.errors import ConfigError
from topospread.framework.config.types import UtilizationShapePoint, VolumeBindingArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, NodeInfo, Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import (
    ClaimTemplate,
    InTreeSource,
    LabelSelector,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaimSpec,
    Pod,
    PodVolume,
)
from topospread.model.quantity import Quantity
from topospread.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    BETA_STORAGE_CLASS_ANNOTATION,
    ClaimReference,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from topospread.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    new,
    volume_decision,
)
from topospread.plugins.volumebinding.binder import find_matching_volume
from topospread.plugins.volumebinding.scorer import StorageResource, build_scorer

GI = 1 << 30
ZONE = "topology.kubernetes.io/zone"
WFFC = "wait"
IMMEDIATE = "immediate"
NO_PROVISIONER = "static"
CSI_DRIVER = "csi.example.com"


def q(n: int) -> Quantity:
    return Quantity(Fraction(n))


def node(name: str, **labels: str) -> Node:
    return Node(ObjectMeta(name=name, labels={"kubernetes.io/hostname": name, **labels}))


def zone_affinity(*zones: str, key: str = ZONE) -> NodeSelector:
    return NodeSelector((NodeSelectorTerm((NodeSelectorRequirement(key, "In", tuple(zones)),)),))


def claim(
    name: str,
    *,
    cls: str | None = WFFC,
    volume: str = "",
    bound: bool = False,
    size: int = 1 * GI,
    annotations: dict[str, str] | None = None,
    phase: str = "Pending",
    deleting: bool = False,
    owner_uid: str | None = None,
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    selector: LabelSelector | None = None,
) -> PersistentVolumeClaim:
    ann = dict(annotations or {})
    if bound:
        ann[ANN_BIND_COMPLETED] = "yes"
    owners = (
        (OwnerReference("v1", "Pod", "p", uid=owner_uid, controller=True),)
        if owner_uid is not None
        else ()
    )
    return PersistentVolumeClaim(
        ObjectMeta(
            name=name,
            namespace="default",
            uid=f"uid-{name}",
            annotations=ann,
            deletion_timestamp="2026-01-01T00:00:00Z" if deleting else None,
            owner_references=owners,
        ),
        PersistentVolumeClaimSpec(
            access_modes=access_modes,
            storage_request=q(size),
            storage_class_name=cls,
            volume_name=volume,
            selector=selector,
        ),
        phase=phase,
    )


def pv(
    name: str,
    *,
    cls: str = WFFC,
    size: int = 1 * GI,
    zones: Sequence[str] = (),
    phase: str = "Available",
    claim_ref: str | None = None,
    labels: dict[str, str] | None = None,
    mode: str = "Filesystem",
    in_tree: InTreeSource | None = None,
    affinity: NodeSelector | None = None,
) -> PersistentVolume:
    return PersistentVolume(
        ObjectMeta(name=name, labels=labels or {}),
        capacity=q(size),
        access_modes=("ReadWriteOnce",),
        claim_ref=ClaimReference(claim_ref, "default") if claim_ref else None,
        storage_class_name=cls,
        volume_mode=mode,
        node_affinity=affinity
        if affinity is not None
        else (zone_affinity(*zones) if zones else None),
        phase=phase,
        in_tree=in_tree,
    )


CLASSES = (
    StorageClass(
        ObjectMeta(name=WFFC), provisioner=CSI_DRIVER, volume_binding_mode="WaitForFirstConsumer"
    ),
    StorageClass(ObjectMeta(name=IMMEDIATE), provisioner=CSI_DRIVER),
    StorageClass(
        ObjectMeta(name=NO_PROVISIONER),
        provisioner="kubernetes.io/no-provisioner",
        volume_binding_mode="WaitForFirstConsumer",
    ),
    StorageClass(
        ObjectMeta(name="zonal"),
        provisioner=CSI_DRIVER,
        volume_binding_mode="WaitForFirstConsumer",
        allowed_topologies=(TopologySelectorTerm(((ZONE, ("a",)),)),),
    ),
)


def pod_with(*claims: str, ephemeral: str | None = None, uid: str = "pod-uid") -> Pod:
    volumes = [PodVolume(name=f"v{i}", claim_name=c) for i, c in enumerate(claims)]
    if ephemeral is not None:
        volumes.append(PodVolume(name=ephemeral, ephemeral=ClaimTemplate(ObjectMeta(name=""))))
    return Pod(ObjectMeta(name="p", namespace="default", uid=uid), volumes=tuple(volumes))


NODES = (node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "b"}))


def run(
    pod: Pod,
    *,
    claims: Sequence[PersistentVolumeClaim] = (),
    volumes: Sequence[PersistentVolume] = (),
    nodes: Sequence[Node] = NODES,
    capacities: Sequence[CSIStorageCapacity] = (),
    drivers: Sequence[CSIDriver] = (),
    csi_nodes: Sequence[CSINode] = (),
    features: Features = Features(),
    args: VolumeBindingArgs | None = None,
) -> tuple[Status | None, dict[str, Status | None], dict[str, int] | None]:
    """PreFilter's status, each node's Filter status and, if PreScore ran, the scores."""
    objects = ClusterObjects(
        persistent_volumes=tuple(volumes),
        persistent_volume_claims=tuple(claims),
        storage_classes=CLASSES,
        csi_nodes=tuple(csi_nodes),
        csi_drivers=tuple(drivers),
        csi_storage_capacities=tuple(capacities),
    )
    snapshot = Snapshot(nodes)
    plugin = new(args, Handle(snapshot, objects), features)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, snapshot.node_infos)
    if pre is not None and pre.code is not Code.SKIP:
        return pre, {}, None
    filters: dict[str, Status | None] = {}
    feasible: list[NodeInfo] = []
    for info in snapshot.node_infos:
        status = None if pre is not None else plugin.filter(state, pod, info)
        filters[info.name] = status
        if status is None:
            feasible.append(info)
    if plugin.pre_score(state, pod, feasible) is not None:
        return pre, filters, None
    scores = {}
    for info in feasible:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores[info.name] = score
    return pre, filters, scores


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def test_pod_without_claims_skips_and_scores_zero() -> None:
    pre, filters, scores = run(Pod(ObjectMeta(name="p", namespace="default")))
    assert pre == Status(Code.SKIP)
    assert filters == {"n1": None, "n2": None}
    assert scores == {"n1": 0, "n2": 0}


def test_pod_without_claims_without_capacity_scoring_is_not_scored() -> None:
    features = Features(enable_storage_capacity_scoring=False)
    _, _, scores = run(Pod(ObjectMeta(name="p", namespace="default")), features=features)
    assert scores is None


@pytest.mark.parametrize(
    ("pod", "claims", "message"),
    [
        (pod_with("c"), (), 'persistentvolumeclaim "c" not found'),
        (
            pod_with(ephemeral="e"),
            (),
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-e"',
        ),
        (
            pod_with(ephemeral="e"),
            (claim("p-e", owner_uid="other"),),
            "PVC default/p-e was not created for pod default/p (pod is not owner)",
        ),
        (
            pod_with("c"),
            (claim("c", phase="Lost", volume="gone"),),
            'persistentvolumeclaim "c" bound to non-existent persistentvolume "gone"',
        ),
        (pod_with("c"), (claim("c", deleting=True),), 'persistentvolumeclaim "c" is being deleted'),
        (pod_with("c"), (claim("c", cls=IMMEDIATE),), ERR_UNBOUND_IMMEDIATE),
        # A claim of an unlisted class, or of none, waits for the PV controller too.
        (pod_with("c"), (claim("c", cls="missing"),), ERR_UNBOUND_IMMEDIATE),
        (pod_with("c"), (claim("c", cls=None),), ERR_UNBOUND_IMMEDIATE),
        # Pre-bound (volumeName set, binding not completed) counts as immediate.
        (pod_with("c"), (claim("c", volume="v"),), ERR_UNBOUND_IMMEDIATE),
    ],
)
def test_pre_filter_rejections(
    pod: Pod, claims: tuple[PersistentVolumeClaim, ...], message: str
) -> None:
    pre, _, _ = run(pod, claims=claims)
    assert pre == unresolvable(message)


def test_owned_ephemeral_claim_is_accepted() -> None:
    pre, filters, _ = run(pod_with(ephemeral="e"), claims=(claim("p-e", owner_uid="pod-uid"),))
    assert pre is None
    assert filters == {"n1": None, "n2": None}


def test_bound_claim_follows_volume_node_affinity() -> None:
    pre, filters, scores = run(
        pod_with("c"),
        claims=(claim("c", volume="v", bound=True),),
        volumes=(pv("v", zones=("a",), phase="Bound", claim_ref="c"),),
    )
    assert pre is None
    assert filters == {"n1": None, "n2": unresolvable(ERR_REASON_NODE_CONFLICT)}
    assert scores == {"n1": 0}  # nothing to bind: no volumes for the score


def test_bound_claim_volume_missing() -> None:
    _, filters, _ = run(pod_with("c"), claims=(claim("c", volume="v", bound=True),))
    assert filters == {
        "n1": unresolvable(ERR_REASON_PV_NOT_EXIST),
        "n2": unresolvable(ERR_REASON_PV_NOT_EXIST),
    }


def test_bound_volume_name_field_terms_are_ignored() -> None:
    # CheckNodeAffinity matches a node built from labels only; without a name the field
    # terms are not evaluated (nodeSelectorTerm.match), so a name pin admits every node.
    by_name = NodeSelector(
        (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("n1",)),)),)
    )
    _, filters, _ = run(
        pod_with("c"),
        claims=(claim("c", volume="v", bound=True),),
        volumes=(pv("v", affinity=by_name, phase="Bound", claim_ref="c"),),
    )
    assert filters == {"n1": None, "n2": None}


def test_static_binding_picks_smallest_fitting_volume() -> None:
    c = claim("c", size=2 * GI)
    volumes = (
        pv("big", size=10 * GI),
        pv("small-b", size=3 * GI, zones=("b",)),
        pv("small-a", size=3 * GI, zones=("a",)),
        pv("too-small", size=1 * GI),
    )
    for name, expected in (("n1", "small-a"), ("n2", "small-b")):
        target = next(n for n in NODES if n.name == name)
        found = find_matching_volume(c, volumes, target, {})
        assert found is not None
        assert found.name == expected


FAST = {"tier": "fast"}


@pytest.mark.parametrize(
    "volume",
    [
        pv("v", cls=NO_PROVISIONER, labels=FAST, phase="Released"),
        pv("v", cls="other", labels=FAST),
        pv("v", cls=NO_PROVISIONER, labels=FAST, mode="Block"),
        pv("v", cls=NO_PROVISIONER, labels=FAST, size=GI // 2),
        pv("v", cls=NO_PROVISIONER, labels=FAST, claim_ref="someone-else"),
        pv("v", cls=NO_PROVISIONER, labels={"tier": "slow"}),
        pv("v", cls=NO_PROVISIONER, labels=FAST, zones=("b",)),
    ],
)
def test_static_binding_rejects(volume: PersistentVolume) -> None:
    c = claim("c", cls=NO_PROVISIONER, selector=LabelSelector(FAST))
    _, filters, _ = run(pod_with("c"), claims=(c,), volumes=(volume,))
    assert filters["n1"] == unresolvable(ERR_REASON_BIND_CONFLICT)
    fitting = pv("v", cls=NO_PROVISIONER, labels=FAST)
    _, filters, _ = run(pod_with("c"), claims=(c,), volumes=(fitting,))
    assert filters["n1"] is None


def test_pre_bound_volume_is_the_only_candidate() -> None:
    c = claim("c", cls=NO_PROVISIONER)
    volumes = (
        pv("other", cls=NO_PROVISIONER),
        pv("mine", cls=NO_PROVISIONER, zones=("b",), phase="Bound", claim_ref="c"),
    )
    _, filters, _ = run(pod_with("c"), claims=(c,), volumes=volumes)
    assert filters == {"n1": unresolvable(ERR_REASON_BIND_CONFLICT), "n2": None}


def test_no_provisioner_and_allowed_topologies() -> None:
    _, filters, _ = run(pod_with("c"), claims=(claim("c", cls=NO_PROVISIONER),))
    assert filters == {
        "n1": unresolvable(ERR_REASON_BIND_CONFLICT),
        "n2": unresolvable(ERR_REASON_BIND_CONFLICT),
    }
    _, filters, _ = run(pod_with("c"), claims=(claim("c", cls="zonal"),))
    assert filters == {"n1": None, "n2": unresolvable(ERR_REASON_BIND_CONFLICT)}


def test_selected_node_fast_path() -> None:
    c = claim("c", annotations={ANN_SELECTED_NODE: "n2"})
    _, filters, _ = run(pod_with("c"), claims=(c,))
    assert filters == {"n1": unresolvable(ERR_REASON_BIND_CONFLICT), "n2": None}


def capacity(
    name: str, size: int, *, zone: str | None = "a", max_size: int | None = None
) -> CSIStorageCapacity:
    return CSIStorageCapacity(
        ObjectMeta(name=name, namespace="kube-system"),
        storage_class_name=WFFC,
        node_topology=LabelSelector({ZONE: zone}) if zone is not None else None,
        capacity=q(size),
        maximum_volume_size=q(max_size) if max_size is not None else None,
    )


TRACKED = (CSIDriver(ObjectMeta(name=CSI_DRIVER), storage_capacity=True),)


def test_storage_capacity() -> None:
    c = claim("c", size=4 * GI)
    _, filters, scores = run(
        pod_with("c"), claims=(c,), drivers=TRACKED, capacities=(capacity("a", 10 * GI),)
    )
    assert filters == {"n1": None, "n2": unresolvable(ERR_REASON_NOT_ENOUGH_SPACE)}
    # 4 of 10 GiB: utilization 40, default shape (0 -> 100, 100 -> 0) scores 60.
    assert scores == {"n1": 60}
    # maximumVolumeSize is the limit when given; a nil nodeTopology is seen by no node.
    _, filters, _ = run(
        pod_with("c"),
        claims=(c,),
        drivers=TRACKED,
        capacities=(capacity("a", 10 * GI, max_size=2 * GI), capacity("x", 10 * GI, zone=None)),
    )
    assert filters["n1"] == unresolvable(ERR_REASON_NOT_ENOUGH_SPACE)
    # Untracked drivers are not checked.
    _, filters, scores = run(pod_with("c"), claims=(c,))
    assert filters == {"n1": None, "n2": None}
    assert scores == {"n1": 0, "n2": 0}


def test_reasons_in_order_for_bound_and_unbound_claims() -> None:
    claims = (claim("b", volume="v", bound=True), claim("c", cls=NO_PROVISIONER))
    volumes = (pv("v", zones=("a",), phase="Bound", claim_ref="b"),)
    _, filters, _ = run(pod_with("b", "c"), claims=claims, volumes=volumes)
    assert filters["n2"] == unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)


def test_static_binding_score() -> None:
    # A 1 GiB claim on a 4 GiB volume: utilization 25, score 75.
    _, filters, scores = run(
        pod_with("c"),
        claims=(claim("c", cls=NO_PROVISIONER),),
        volumes=(pv("v", cls=NO_PROVISIONER, size=4 * GI),),
    )
    assert filters == {"n1": None, "n2": None}
    assert scores == {"n1": 75, "n2": 75}


def test_scorer_rounds_mean_half_away_from_zero() -> None:
    scorer = build_scorer((UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)))
    # 1/3 -> 33, full -> 100: mean 66.5 rounds to 67.
    assert scorer({"a": StorageResource(1, 3), "b": StorageResource(5, 5)}) == 67
    assert scorer({"a": StorageResource(1, 0)}) == 100  # no capacity: utilization 100
    assert scorer({"a": StorageResource(6, 5)}) == 100
    assert scorer({}) == 0


def test_csi_migration_renames_zone_key() -> None:
    gce = InTreeSource("gcePersistentDisk", {"pdName": "d"})
    volume = pv("v", zones=("a",), phase="Bound", claim_ref="c", in_tree=gce)
    claims = (claim("c", volume="v", bound=True),)
    gke_node = node("n1", **{ZONE: "a"})
    migrated = CSINode(
        ObjectMeta(name="n1", annotations={ANN_MIGRATED_PLUGINS: "kubernetes.io/gce-pd"})
    )
    _, filters, _ = run(pod_with("c"), claims=claims, volumes=(volume,), nodes=(gke_node,))
    assert filters == {"n1": None}
    _, filters, _ = run(
        pod_with("c"), claims=claims, volumes=(volume,), nodes=(gke_node,), csi_nodes=(migrated,)
    )
    assert filters == {"n1": unresolvable(ERR_REASON_NODE_CONFLICT)}


def test_beta_class_annotation_wins() -> None:
    c = claim("c", cls=IMMEDIATE, annotations={BETA_STORAGE_CLASS_ANNOTATION: NO_PROVISIONER})
    pre, filters, _ = run(pod_with("c"), claims=(c,))
    assert pre is None
    assert filters["n1"] == unresolvable(ERR_REASON_BIND_CONFLICT)


def test_volume_decision() -> None:
    objects = ClusterObjects(
        persistent_volumes=(pv("v", cls=NO_PROVISIONER, size=4 * GI),),
        persistent_volume_claims=(claim("s", cls=NO_PROVISIONER), claim("d")),
        storage_classes=CLASSES,
    )
    decision = volume_decision(objects, pod_with("s", "d"), NODES[0])
    assert [(b.pvc.name, b.pv.name) for b in decision.static_bindings] == [("s", "v")]
    assert [p.pvc.name for p in decision.dynamic_provisions] == ["d"]
    assert decision.reasons == ()
    assert not decision.all_bound


def test_bad_shape_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        run(
            Pod(ObjectMeta(name="p")),
            args=VolumeBindingArgs(
                shape=(UtilizationShapePoint(50, 1), UtilizationShapePoint(10, 2))
            ),
        )


@pytest.mark.parametrize(
    ("source", "labels", "error"),
    [
        (
            InTreeSource("awsElasticBlockStore", {"volumeID": "aws://zone-a/bad"}),
            {},
            "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
            "Invalid format for AWS volume (aws://zone-a/bad)",
        ),
        (InTreeSource("awsElasticBlockStore", {"volumeID": "aws://zone-a/vol-1"}), {}, None),
        (
            InTreeSource("gcePersistentDisk", {"pdName": "d"}),
            {ZONE: "us-east1-b__us-west1-a"},
            "could not translate pv: failed to get region from zones: multiple or no regions "
            "gotten from zones, got: map[us-east1:{} us-west1:{}]",
        ),
        # One region: translated, and the zones become topology.gke.io/zone, which n1 lacks.
        (
            InTreeSource("gcePersistentDisk", {"pdName": "d"}),
            {ZONE: "us-east1-b__us-east1-c"},
            ERR_REASON_NODE_CONFLICT,
        ),
        (
            InTreeSource("azureDisk", {"diskName": "d", "kind": "Shared"}),
            {},
            "could not translate pv: kind(Shared) is not supported in csi migration",
        ),
    ],
)
def test_csi_translation_errors(
    source: InTreeSource, labels: dict[str, str], error: str | None
) -> None:
    plugin_of = {
        "awsElasticBlockStore": "kubernetes.io/aws-ebs",
        "gcePersistentDisk": "kubernetes.io/gce-pd",
        "azureDisk": "kubernetes.io/azure-disk",
    }
    volume = pv("v", phase="Bound", claim_ref="c", in_tree=source, labels=labels)
    migrated = CSINode(
        ObjectMeta(name="n1", annotations={ANN_MIGRATED_PLUGINS: plugin_of[source.kind]})
    )
    _, filters, _ = run(
        pod_with("c"),
        claims=(claim("c", volume="v", bound=True),),
        volumes=(volume,),
        nodes=(NODES[0],),
        csi_nodes=(migrated,),
    )
    if error is None:
        assert filters == {"n1": None}
    elif error == ERR_REASON_NODE_CONFLICT:
        assert filters == {"n1": unresolvable(error)}
    else:
        assert filters == {"n1": Status(Code.ERROR, (error,))}
