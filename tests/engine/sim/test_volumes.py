"""Volumes in the simulator: claims of StatefulSets and ephemeral volumes, binding and
provisioning, and pods that follow their volumes. Scenarios are in ``volumes/``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from topospread.engine.sim.result import StepResult
from topospread.engine.sim.simulator import SimProgress, Simulator
from topospread.engine.sim.volumes import find_volume_for_claim
from topospread.io.scenarios import load_scenario
from topospread.model.objects import LABEL_TOPOLOGY_ZONE, ObjectMeta, PersistentVolumeClaimSpec
from topospread.model.quantity import parse_quantity
from topospread.model.storage import (
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.plugins.volumebinding import ERR_REASON_NODE_CONFLICT

HERE = Path(__file__).resolve().parent / "volumes"
BUNDLED = Path(__file__).resolve().parents[3] / "src" / "topospread" / "examples" / "scenarios"
GIB = 1024**3


@dataclass
class After:
    """The cluster after one step: its report, claims, volumes and where each pod runs."""

    step: StepResult
    claims: dict[str, PersistentVolumeClaim]
    volumes: dict[str, PersistentVolume]
    pods: dict[str, str]
    """Pod name -> node ("" while pending)."""
    pod_uids: dict[str, str]
    pod_volumes: dict[str, dict[str, str | None]]
    """Pod name -> volume name -> claim name."""

    def zone_of_volume(self, claim: str) -> str:
        """The zone a claim's volume is pinned to by its node affinity."""
        volume = self.volumes[self.claims[claim].spec.volume_name]
        assert volume.node_affinity is not None
        (term,) = volume.node_affinity.node_selector_terms
        (requirement,) = term.match_expressions
        assert requirement.key == LABEL_TOPOLOGY_ZONE
        assert requirement.operator == "In"
        (zone,) = requirement.values
        return zone

    def pending_message(self, pod: str) -> str:
        return next(p.message for p in self.step.pending if p.name == pod)


def run(path: Path) -> list[After]:
    """Run a scenario; the cluster after the initial objects and after each step."""
    simulator = Simulator(load_scenario(path))
    state = simulator.state
    views: dict[int, Callable[[StepResult], After]] = {}

    def look(progress: SimProgress) -> None:
        # Called after the initial cluster and after each step (and within long steps).
        views[progress.steps_done] = partial(
            After,
            claims={c.name: c for c in state.claims.values()},
            volumes=dict(state.volumes),
            pods={r.pod.name: r.node_name for r in state.pods.values()},
            pod_uids={r.pod.name: r.pod.metadata.uid for r in state.pods.values()},
            pod_volumes={
                r.pod.name: {v.name: v.claim_for(r.pod.name) for v in r.pod.volumes}
                for r in state.pods.values()
            },
        )

    result = simulator.run_scenario(look)
    return [views[i + 1](step) for i, step in enumerate(result.steps)]


def zone(node: str) -> str:
    return node.removeprefix("node-").rsplit("-", 1)[0]


def test_each_ordinal_gets_one_claim_per_template_named_template_set_ordinal():
    after = run(HERE / "statefulset-claims.yaml")[1]
    assert sorted(after.claims) == [
        "data-db-0",
        "data-db-1",
        "data-db-2",
        "logs-db-0",
        "logs-db-1",
        "logs-db-2",
    ]
    assert after.pod_volumes["db-1"] == {"data": "data-db-1", "logs": "logs-db-1"}


def test_claim_labels_are_the_templates_with_the_selectors_labels_written_over_them():
    after = run(HERE / "statefulset-claims.yaml")[1]
    assert dict(after.claims["data-db-0"].metadata.labels) == {"tier": "storage", "app": "db"}
    assert dict(after.claims["logs-db-0"].metadata.labels) == {"app": "db"}


def test_under_the_default_retain_policy_claims_have_no_owner():
    after = run(HERE / "statefulset-claims.yaml")[1]
    assert all(not c.metadata.owner_references for c in after.claims.values())


def test_a_claim_is_provisioned_in_the_zone_where_its_first_pod_lands():
    after = run(HERE / "statefulset-claims.yaml")[1]
    for ordinal in range(3):
        pod, claim = f"db-{ordinal}", after.claims[f"data-db-{ordinal}"]
        assert after.zone_of_volume(claim.name) == zone(after.pods[pod])
        assert claim.metadata.annotations[ANN_SELECTED_NODE] == after.pods[pod]
        assert claim.phase == "Bound"
    assert {zone(after.pods[f"db-{i}"]) for i in range(3)} == {"zone-a", "zone-b", "zone-c"}


def test_a_provisioned_volume_is_named_after_the_claim_uid_and_sized_as_its_request():
    after = run(HERE / "statefulset-claims.yaml")[1]
    claim = after.claims["data-db-0"]
    volume = after.volumes[claim.spec.volume_name]
    assert volume.name == f"pvc-{claim.metadata.uid}"
    assert volume.capacity is not None
    assert volume.capacity.amount == 10 * GIB
    assert volume.storage_class_name == "zonal"
    assert volume.access_modes == ("ReadWriteOnce",)
    assert volume.claim_ref is not None
    assert volume.claim_ref.uid == claim.metadata.uid
    assert volume.phase == "Bound"
    assert volume.csi is not None
    assert volume.csi.driver == "pd.csi.storage.gke.io"


def test_claims_are_kept_on_scale_down_and_reused_on_scale_up():
    created, scaled_down, scaled_up = run(HERE / "statefulset-claims.yaml")[1:]
    assert set(scaled_down.pods) == {"db-0"}
    assert set(scaled_down.claims) == set(created.claims)
    for name, claim in scaled_up.claims.items():
        assert claim.spec.volume_name == created.claims[name].spec.volume_name
    assert scaled_up.pods == created.pods  # each pod back in its volume's zone


def test_when_scaled_delete_deletes_the_claims_and_volumes_of_removed_ordinals():
    created, scaled_down, scaled_up = run(HERE / "statefulset-delete-on-scale.yaml")[1:]
    assert sorted(scaled_down.claims) == ["data-db-0", "logs-db-0"]
    gone = {created.claims[n].spec.volume_name for n in created.claims} - {
        c.spec.volume_name for c in scaled_down.claims.values()
    }
    assert len(gone) == 4
    assert not gone & set(scaled_down.volumes)
    assert scaled_up.claims["data-db-1"].metadata.uid != created.claims["data-db-1"].metadata.uid


def test_when_deleted_delete_makes_the_statefulset_the_owner_of_claims_in_range():
    after = run(HERE / "statefulset-delete-on-scale.yaml")[1]
    for claim in after.claims.values():
        (owner,) = claim.metadata.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("StatefulSet", "db", True)


def test_a_rescheduled_pod_waits_for_its_volumes_zone_although_the_spread_allows_another():
    placed, removed, added = run(HERE / "follow-the-volume.yaml")[1:]
    assert placed.pods["db-0"] == "node-zone-a-1"
    assert removed.pods["db-0"] == ""
    assert removed.pending_message("db-0") == (
        f"0/3 nodes are available: 3 {ERR_REASON_NODE_CONFLICT}. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    spread = removed.step.spread[0].constraints[0]
    assert dict(spread.domain_counts) == {"zone-b": 1, "zone-c": 1, "zone-d": 0}
    assert added.pods["db-0"] == "node-zone-a-new"
    assert added.claims["data-db-0"].spec.volume_name == placed.claims["data-db-0"].spec.volume_name


def test_in_the_bundled_story_db_0_stays_pending_through_the_outage_and_returns_to_zone_a():
    deployed, failed, recovered = run(BUNDLED / "statefulset-zone-failure.yaml")[1:]
    assert deployed.pods["db-0"] == "node-zone-a-1"
    assert failed.pods["db-0"] == ""
    assert (
        f"2 node(s) had untolerated taint(s), 4 {ERR_REASON_NODE_CONFLICT}"
        in failed.pending_message("db-0")
    )
    web = [n for name, n in failed.pods.items() if name.startswith("web-")]
    assert len(web) == 3
    assert all(n and zone(n) != "zone-a" for n in web)
    assert recovered.pods["db-0"] == "node-zone-a-1"


def test_immediate_claims_are_provisioned_when_created_and_their_pods_follow():
    after = run(HERE / "immediate.yaml")[1]
    # The first value of the class's allowedTopologies, else the first node's zone.
    assert after.zone_of_volume("pinned-data") == "zone-c"
    assert after.zone_of_volume("default-data") == "zone-a"
    assert zone(after.pods["uses-pinned"]) == "zone-c"
    assert zone(after.pods["uses-default"]) == "zone-a"
    assert ANN_SELECTED_NODE not in after.claims["pinned-data"].metadata.annotations


def test_a_claim_without_a_class_gets_the_default_class():
    after = run(HERE / "immediate.yaml")[1]
    assert after.claims["default-data"].spec.storage_class_name == "standard"


def test_an_ephemeral_volume_gets_a_claim_named_pod_volume_owned_by_the_pod():
    after = run(HERE / "ephemeral.yaml")[1]
    for pod, node in after.pods.items():
        claim = after.claims[f"{pod}-scratch"]
        (owner,) = claim.metadata.owner_references
        assert (owner.kind, owner.name, owner.uid) == ("Pod", pod, after.pod_uids[pod])
        assert dict(claim.metadata.labels) == {"use": "scratch"}
        assert after.zone_of_volume(claim.name) == zone(node)
    assert len(after.claims) == 2


def test_ephemeral_claims_and_their_volumes_are_deleted_with_their_pods():
    created, scaled_to_zero = run(HERE / "ephemeral.yaml")[1:]
    assert not scaled_to_zero.pods
    assert not scaled_to_zero.claims
    assert not scaled_to_zero.volumes
    deleted = [e.detail for e in scaled_to_zero.step.events if e.kind == "volume"]
    assert sum("PersistentVolumeClaim" in d and "deleted" in d for d in deleted) == 2
    assert len(created.volumes) == 2


def test_a_claim_binds_the_smallest_free_static_volume_its_pod_can_reach():
    after = run(HERE / "static.yaml")[1]
    assert after.claims["cache"].spec.volume_name == "local-b-small"
    assert after.pods["cache"] == "node-zone-b-1"
    volume = after.volumes["local-b-small"]
    assert volume.claim_ref is not None
    assert volume.claim_ref.name == "cache"
    assert volume.phase == "Bound"
    assert after.volumes["local-b-large"].phase == "Available"


def test_a_provisioned_volume_is_pinned_by_the_topology_keys_csinode_lists_for_its_driver():
    after = run(HERE / "csi-topology.yaml")[1]
    assert after.pods["app"] == "node-zone-a-1"
    volume = after.volumes[after.claims["data"].spec.volume_name]
    assert volume.node_affinity is not None
    (term,) = volume.node_affinity.node_selector_terms
    assert [(r.key, r.values) for r in term.match_expressions] == [
        ("topology.gke.io/zone", ("gke-a",))
    ]


def test_every_binding_and_provisioning_is_an_event_of_kind_volume_before_the_pod_binds():
    step = run(HERE / "statefulset-claims.yaml")[1].step
    kinds = [(e.kind, e.pod, e.detail.split(" ")[0]) for e in step.events if e.time == 1]
    scheduled = kinds.index(("scheduled", "default/db-0", ""))
    before = [k for k in kinds[:scheduled] if k[0] == "volume"]
    assert ("volume", "", "PersistentVolume") in before
    assert "volumes provisioned: logs-db-0 in topology.kubernetes.io/zone=zone-a" in (step.notes[0])


def test_a_claim_written_before_its_volume_binds_it_rather_than_provisioning_another():
    initial, placed = run(HERE / "claim-before-volume.yaml")
    assert initial.claims["data"].spec.volume_name == "made-by-hand"
    assert list(initial.volumes) == ["made-by-hand"]
    assert placed.pods["app"] == "node-zone-b-1"


def test_the_pv_controller_prefers_volumes_with_the_fewest_extra_access_modes_over_smaller_ones():
    def volume(name: str, size: str, *modes: str) -> PersistentVolume:
        return PersistentVolume(
            ObjectMeta(name=name),
            capacity=parse_quantity(size),
            access_modes=modes,
            storage_class_name="manual",
            phase="Available",
        )

    claim = PersistentVolumeClaim(
        ObjectMeta(name="data", namespace="default", uid="u1"),
        PersistentVolumeClaimSpec(
            access_modes=("ReadWriteOnce",),
            storage_request=parse_quantity("1Gi"),
            storage_class_name="manual",
        ),
    )
    volumes = [
        volume("small-shared", "2Gi", "ReadWriteOnce", "ReadOnlyMany"),
        volume("large-exclusive", "8Gi", "ReadWriteOnce"),
        volume("smaller-exclusive", "4Gi", "ReadWriteOnce"),
        volume("read-only", "1Gi", "ReadOnlyMany"),
    ]
    found = find_volume_for_claim(claim, volumes, delay_binding=False)
    assert found is not None
    assert found.name == "smaller-exclusive"
    assert find_volume_for_claim(claim, volumes, delay_binding=True) is None
