"""``topospread rebalance`` against a real control plane: the dry run changes nothing, and
``--apply`` reaches the state the plan predicted.

The module starts its own control plane with the real kube-scheduler (replacements are
placed by it, not by topospread) and kube-controller-manager (the ReplicaSet controller
recreates evicted pods, the disruption controller keeps PodDisruptionBudgets' status).
A stand-in kubelet (:class:`topospread.testing.rebalance_live.FakeKubelet`) makes bound
pods Running and Ready and removes deleted ones, so budgets count healthy pods.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.client.config import Connection, connect
from topospread.client.transport import Request
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube
from topospread.testing.rebalance_live import (
    SCENARIOS,
    ApplyProcess,
    FakeKubelet,
    budget_observed,
    evict,
    lease_spec,
    pod_uids,
    settle,
    steal_lease,
)

pytestmark = pytest.mark.cluster

ZONE = "topology.kubernetes.io/zone"
ROOT = Path(__file__).parents[2]
# Short Lease timings, so that the tests take seconds: a holder renews every 0.5 s and
# gives up after 2 s; another process may take an unrenewed Lease after 3 s.
SHORT_LEASE = ("--lease-duration", "3", "--renew-deadline", "2", "--retry-period", "0.5")
# Shorter still where the run must outlast the Lease (two evictions take about 2 s).
SHORTEST_LEASE = ("--lease-duration", "1", "--renew-deadline", "0.8", "--retry-period", "0.2")
HOLDING = r"holding lease kube-system/(\S+) as (\S+)"


@pytest.fixture(scope="module")
def plane(control_plane_binaries: Path) -> Iterator[ControlPlane]:
    with ControlPlane(control_plane_binaries, scheduler=True) as started:
        yield started


def _rebalance(plane: ControlPlane, namespace: str, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(
        cli,
        [
            "rebalance",
            "-n",
            namespace,
            "--kubeconfig",
            str(plane.admin_kubeconfig),
            "-o",
            "json",
            *args,
        ],
    )
    return result.exit_code, json.loads(result.stdout)


def _zone_counts(data: dict, app: str) -> dict[str, int]:
    for w in data["workloads"]:
        if w["name"] == app:
            for c in w["constraints"]:
                if c["topologyKey"] == ZONE:
                    return c["domainCounts"]
    raise AssertionError(app)


def _start(plane: ControlPlane, scenario: str, namespace: str):
    connection = connect(plane.admin_kubeconfig)
    kube = Kube(connection)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    kubelet = FakeKubelet(connection, [namespace]).__enter__()
    SCENARIOS[scenario].build(kube, connection, namespace)
    assert settle(connection, namespace, 90)
    return connection, kubelet


@pytest.mark.parametrize("scenario", ["scale-12-to-7", "pdb-one-at-a-time", "zone-and-hostname"])
def test_apply_reaches_the_planned_state(plane: ControlPlane, unique_name, scenario: str) -> None:
    namespace = unique_name("rb")
    connection, kubelet = _start(plane, scenario, namespace)
    try:
        before = pod_uids(connection, namespace)
        code, plan = _rebalance(plane, namespace)
        assert code == 0, plan["reason"]
        assert plan["converged"]
        assert plan["evictions"]
        # The dry run is read-only.
        assert pod_uids(connection, namespace) == before
        if scenario == "pdb-one-at-a-time":
            batches = [e["batch"] for e in plan["evictions"]]
            assert len(batches) == len(set(batches)), "one disruption per batch"

        code, applied = _rebalance(plane, namespace, "--apply", "--timeout", "60")
        assert code == 0, applied["reason"]
        assert applied["converged"]
        assert applied["evictions"] == len(plan["evictions"])
        for batch in applied["rounds"]:
            assert batch["surprise"] is None
            planned = {e["pod"]: e["tiedNodes"] for e in batch["plan"]["evictions"]}
            for pod, node in batch["landed"].items():
                assert node in planned[pod]
        assert settle(connection, namespace, 60)

        code, after = _rebalance(plane, namespace)
        assert code == 0
        assert after["evictions"] == []
        assert after["targets"] == []
        # The end state is the one the plan predicted (its zone counts; ties inside a zone
        # give the same counts).
        if all(e["certain"] for e in plan["evictions"]):
            assert _zone_counts(after["before"], "web") == _zone_counts(plan["after"], "web")
    finally:
        kubelet.__exit__()
        connection.close()


def _bind(kube: Kube, role_file: str, suffix: str, account: str, namespace: str) -> None:
    role = yaml.safe_load((ROOT / "deploy" / "rbac" / role_file).read_text())
    role["metadata"]["name"] = f"{role['metadata']['name']}-{suffix}"
    kube.create(role)
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role["metadata"]["name"]},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role["metadata"]["name"],
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )


def _token_kubeconfig(plane: ControlPlane, token: str, namespace: str, path: Path) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "sa",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": plane.server,
                            "certificate-authority": str(plane.ca_file),
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [
                    {"name": "sa", "context": {"cluster": "c", "user": "u", "namespace": namespace}}
                ],
            }
        )
    )
    return path


def test_the_rebalance_role_is_enough_to_apply(plane: ControlPlane, unique_name, tmp_path) -> None:
    namespace = unique_name("rbac")
    connection, kubelet = _start(plane, "recovered-zone", namespace)
    kube = Kube(connection)
    try:
        account = "rebalancer"
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": account, "namespace": namespace},
            }
        )
        _bind(kube, "reader.yaml", namespace, account, namespace)
        kubeconfig = _token_kubeconfig(
            plane, kube.token(account, namespace), namespace, tmp_path / "kubeconfig"
        )
        runner = CliRunner()
        # The reader alone plans but cannot evict: one line, exit 2 (the command itself,
        # as a user runs it: its logging unconfigured, warnings would reach stderr too).
        command = [sys.executable, "-c", "from topospread.cli import main; main()"]
        refused = subprocess.run(
            [*command, "rebalance", "--apply", "--kubeconfig", str(kubeconfig), "--timeout", "30"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.count("403 Forbidden") == 1, refused.stderr
        assert "Traceback" not in refused.stderr
        _bind(kube, "rebalance.yaml", namespace, account, namespace)
        applied = runner.invoke(
            cli, ["rebalance", "--apply", "--kubeconfig", str(kubeconfig), "--timeout", "60"]
        )
        assert applied.exit_code == 0, applied.output
        assert "balanced: 2 eviction(s)" in applied.output
    finally:
        kubelet.__exit__()
        connection.close()


def test_unready_pods_pass_a_budget_only_as_the_eviction_api_lets_them(
    plane: ControlPlane, unique_name
) -> None:
    namespace = unique_name("unready")
    connection, kubelet = _start(plane, "unready-unhealthy-budget", namespace)
    kube = Kube(connection)
    try:
        # The budget is unhealthy (3 healthy of 4): under IfHealthyBudget no pod may go.
        code, plan = _rebalance(plane, namespace)
        assert code == 1
        assert plan["evictions"] == []
        assert "needs 4 healthy pods and has 3 currently" in plan["reason"]
        # The real Eviction API refuses an unready pod in the same words.
        status, body = evict(connection, namespace, "web-01")
        assert status == 429, body
        assert "The disruption budget web needs 4 healthy pods and has 3 currently" in body

        # AlwaysAllow: unready pods go past the budget; the plan moves one and --apply
        # evicts it through the Eviction API.
        policy = {"spec": {"unhealthyPodEvictionPolicy": "AlwaysAllow"}}
        kube.patch("PodDisruptionBudget", "web", policy, namespace)
        deadline = time.monotonic() + 30
        while budget_observed(connection, namespace, "web") is None:
            assert time.monotonic() < deadline, "the disruption controller saw the policy"
            time.sleep(0.3)
        code, plan = _rebalance(plane, namespace)
        assert code == 0, plan["reason"]
        (eviction,) = plan["evictions"]
        assert eviction["pod"] in {f"{namespace}/web-01", f"{namespace}/web-02"}
        code, applied = _rebalance(plane, namespace, "--apply", "--timeout", "60")
        assert code == 0, applied["reason"]
        assert applied["evictions"] == 1
        (round_,) = applied["rounds"]
        assert round_["surprise"] is None
    finally:
        kubelet.__exit__()
        connection.close()


def test_two_apply_processes_one_evicts_the_other_waits_and_says_who_holds_the_lease(
    plane: ControlPlane, unique_name
) -> None:
    namespace = unique_name("twice")
    lease = unique_name("lease")
    connection, kubelet = _start(plane, "recovered-zone", namespace)
    args = ("--lease-name", lease, *SHORTEST_LEASE, "--timeout", "60")
    first = second = None
    renewals: RenewTimes | None = None
    try:
        # The kubelet lags until the second process has found the Lease held: the first
        # waits for its evictions to be replaced, holding the Lease, however long the
        # second takes to start on a loaded machine (a CI run once saw the first finish
        # before the second asked).
        kubelet.pause()
        first = ApplyProcess(plane.admin_kubeconfig, namespace, *args)
        holder = first.wait_for_line(HOLDING, 60).group(2)
        # While the first one works, the Lease stays its own and is renewed, though the run
        # lasts longer than the lease duration. Watched from the moment it is held.
        renewals = RenewTimes(connection, lease, holder)
        second = ApplyProcess(plane.admin_kubeconfig, namespace, *args)
        waiting = second.wait_for_line(r"is held by (\S+) .*waiting for it", 60)
        kubelet.resume()
        assert waiting.group(1) == holder
        code, applied = first.finish(120)
        renewals.stop()
        assert code == 0, first.stderr
        assert applied["converged"]
        assert applied["evictions"] == 2
        # The second takes the Lease only once the first has released it, and finds the
        # cluster balanced: nothing more to evict.
        code, after = second.finish(120)
        assert code == 0, second.stderr
        assert after["converged"]
        assert after["evictions"] == 0
        took_over = second.when(HOLDING)
        assert took_over is not None, second.stderr
        assert first.finished is not None
        assert second.started + took_over >= first.started + first.finished - 0.5
        held_from = first.when(HOLDING)
        assert held_from is not None
        assert first.finished - held_from > 1, "the Lease was held longer than its duration"
        # Two renewTimes seen prove a renewal while the run held the Lease past its
        # duration; the poll (every 0.1 s, on a loaded 2-core CI machine) may see no more.
        assert len(renewals.seen) >= 2, renewals.seen
        spec = lease_spec(connection, "kube-system", lease)
        assert spec is not None
        assert spec["holderIdentity"] == ""  # released by the second at its end
        assert spec["leaseTransitions"] == 1
        print(
            f"first held the Lease {first.finished - held_from:.1f} s "
            f"({len(renewals.seen)} renewals seen); "
            f"second waited {took_over:.1f} s"
        )
    finally:
        if renewals is not None:
            renewals.stop()
        for process in (first, second):
            if process is not None:
                process.kill()
        kubelet.__exit__()
        connection.close()


def test_a_second_process_told_not_to_wait_exits_and_says_who_holds_the_lease(
    plane: ControlPlane, unique_name
) -> None:
    namespace = unique_name("nowait")
    lease = unique_name("lease")
    connection = connect(plane.admin_kubeconfig)
    try:
        _create_lease(connection, lease, "someone-else")
        result = CliRunner().invoke(
            cli,
            [
                "rebalance",
                "--apply",
                "-n",
                namespace,
                "--kubeconfig",
                str(plane.admin_kubeconfig),
                "--lease-name",
                lease,
                "--no-wait-for-lease",
            ],
        )
        assert result.exit_code == 3, result.output
        assert f"lease kube-system/{lease} is held by someone-else" in result.output
        assert "not waiting (--no-wait-for-lease)" in result.output
        assert "Traceback" not in result.output
    finally:
        connection.close()


def _create_lease(connection, name: str, holder: str) -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 60},
    }
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    response = connection.transport.send(Request("POST", path, body=json.dumps(lease).encode()))
    assert response.status == 201, response.data


def test_a_holder_whose_lease_is_stolen_stops_before_its_next_eviction(
    plane: ControlPlane, unique_name
) -> None:
    namespace = unique_name("stolen")
    lease = unique_name("lease")
    connection, kubelet = _start(plane, "recovered-zone", namespace)
    process = None
    try:
        code, plan = _rebalance(plane, namespace)
        assert code == 0
        assert len(plan["evictions"]) == 2
        before = pod_uids(connection, namespace)
        process = ApplyProcess(
            plane.admin_kubeconfig, namespace, "--lease-name", lease, *SHORT_LEASE
        )
        process.wait_for_line(r"^evicted ", 60)
        steal_lease(connection, "kube-system", lease, "thief")
        code, applied = process.finish(60)
        assert code == 1, process.stderr
        assert not applied["converged"]
        assert applied["evictions"] == 1
        assert applied["reason"] == (
            f"stopped: lost the Lease kube-system/{lease}: it is now held by thief"
        )
        assert "Traceback" not in process.stderr
        # One pod went, not two; the thief keeps the Lease (the loser releases nothing).
        assert len(before - pod_uids(connection, namespace)) == 1
        spec = lease_spec(connection, "kube-system", lease)
        assert spec is not None
        assert spec["holderIdentity"] == "thief"
    finally:
        if process is not None:
            process.kill()
        kubelet.__exit__()
        connection.close()


class RenewTimes:
    """The renewTimes of a Lease while ``holder`` holds it, read every 0.1 s by a thread
    until the Lease changes hands or :meth:`stop`."""

    def __init__(self, connection: Connection, name: str, holder: str) -> None:
        self.seen: set[str] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._poll, args=(connection, name, holder), daemon=True
        )
        self._thread.start()

    def _poll(self, connection: Connection, name: str, holder: str) -> None:
        while not self._done.is_set():
            spec = lease_spec(connection, "kube-system", name)
            if spec is None or spec["holderIdentity"] != holder:
                return
            self.seen.add(spec["renewTime"])
            self._done.wait(0.1)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(10)
