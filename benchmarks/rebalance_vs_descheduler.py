"""topospread rebalance against the real descheduler, on the same starting states.

For every scenario of :data:`topospread.testing.rebalance_live.SCENARIOS` and each tool, a
fresh control plane (etcd, kube-apiserver, kube-controller-manager and kube-scheduler
v1.37.1 on 127.0.0.1, :class:`topospread.testing.controlplane.ControlPlane`) with a
stand-in kubelet (:class:`~topospread.testing.rebalance_live.FakeKubelet`: bound pods turn
Running and Ready, deleted ones go) gets the scenario's starting state; then the tool runs
in rounds until a round evicts nothing (at most ``--max-rounds``), the cluster settling
between rounds (replacements created by the ReplicaSet controller, placed by the real
kube-scheduler, Ready):

- descheduler: ``descheduler --policy-config-file P --kubeconfig K`` (no
  ``--descheduling-interval``: one pass per run), the policy enabling only
  RemovePodsViolatingTopologySpreadConstraint in a profile's balance plugins, every
  argument at its default (DoNotSchedule constraints, topologyBalanceNodeFit true, the
  DefaultEvictor's defaults);
- topospread: ``topospread rebalance --apply -n NS --kubeconfig K`` (defaults).

Evictions are counted from the API (pods of the namespace that went away during a round),
the same way for both. Final skews are counted as kube-scheduler counts them (topospread's
audit: the PreFilter counting, minDomains included). Results go into BENCHMARKS.md between
``<!-- rebalance:start -->`` and ``<!-- rebalance:end -->`` (other sections untouched).

    bash benchmarks/descheduler/build.sh           # once (about 2 minutes with warm caches)
    python benchmarks/rebalance_vs_descheduler.py [--scenarios a,b] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from topospread.client.config import connect
from topospread.engine.audit import Scope, audit
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube
from topospread.testing.rebalance_live import SCENARIOS, FakeKubelet, pod_uids, settle

ROOT = Path(__file__).resolve().parents[1]
MARK_START = "<!-- rebalance:start -->"
MARK_END = "<!-- rebalance:end -->"
NAMESPACE = "bench"
POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: topology
  pluginConfig:
  - name: DefaultEvictor
  - name: RemovePodsViolatingTopologySpreadConstraint
  plugins:
    balance:
      enabled:
      - RemovePodsViolatingTopologySpreadConstraint
"""
_SHORT = {"topology.kubernetes.io/zone": "zone", "kubernetes.io/hostname": "hostname"}


@dataclass
class Outcome:
    tool: str
    scenario: str
    evictions: int = 0
    rounds: int = 0
    per_round: list[int] = field(default_factory=list)
    stable: bool = False
    converged: bool = False
    skews: dict[str, str] = field(default_factory=dict)
    """``app topologyKey`` -> ``skew/maxSkew``."""
    initial: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""


def _descheduler_binary() -> Path:
    out = subprocess.run(
        ["bash", str(ROOT / "benchmarks/descheduler/build.sh")],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _skews(kubeconfig: Path) -> tuple[dict[str, str], bool]:
    from topospread.cli.rebalance_command import _read_live

    objects, _, _, _ = _read_live(kubeconfig, None)
    report = audit(objects, None, Scope(frozenset({NAMESPACE})))
    skews: dict[str, str] = {}
    ok = True
    for w in report.workloads:
        for c in w.constraints:
            if c.report is None or not c.hard:
                continue
            r = c.report
            skews[f"{w.name} {_SHORT.get(r.topology_key, r.topology_key)}"] = (
                f"{r.skew}/{r.max_skew}"
            )
            ok = ok and r.satisfied
    return skews, ok


def _run_tool(tool: str, kubeconfig: Path, binary: Path, workdir: Path) -> str:
    if tool == "descheduler":
        policy = workdir / "policy.yaml"
        policy.write_text(POLICY)
        command = [
            str(binary),
            f"--policy-config-file={policy}",
            f"--kubeconfig={kubeconfig}",
            "--secure-port=0",
            "--v=2",
        ]
    else:
        command = [
            sys.executable,
            "-c",
            "from topospread.cli import main; main()",
            "rebalance",
            "--apply",
            "-n",
            NAMESPACE,
            "--kubeconfig",
            str(kubeconfig),
            "--timeout",
            "60",
        ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    return done.stdout + done.stderr


def run_one(scenario: str, tool: str, binary: Path, max_rounds: int) -> Outcome:
    outcome = Outcome(tool, scenario)
    started = time.monotonic()
    with ControlPlane(scheduler=True) as plane, tempfile.TemporaryDirectory() as tmp:
        connection = connect(plane.admin_kubeconfig)
        kube = Kube(connection)
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        with FakeKubelet(connection, [NAMESPACE]):
            SCENARIOS[scenario].build(kube, connection, NAMESPACE)
            if not settle(connection, NAMESPACE, 90):
                outcome.note = "starting state did not settle"
                return outcome
            initial, _ = _skews(plane.admin_kubeconfig)
            outcome.initial = initial
            logs: list[str] = []
            for _ in range(max_rounds):
                before = pod_uids(connection, NAMESPACE)
                logs.append(_run_tool(tool, plane.admin_kubeconfig, binary, Path(tmp)))
                settled = settle(connection, NAMESPACE, 90)
                gone = len(before - pod_uids(connection, NAMESPACE))
                outcome.per_round.append(gone)
                if not settled:
                    outcome.note = "did not settle after a round"
                    break
                if gone == 0:
                    outcome.stable = True
                    break
                outcome.rounds += 1
                outcome.evictions += gone
            (ROOT / "build").mkdir(exist_ok=True)
            (ROOT / "build" / f"rebalance-{scenario}-{tool}.log").write_text(
                "\n--- next round ---\n".join(logs)
            )
            skews, ok = _skews(plane.admin_kubeconfig)
            outcome.skews = skews
            outcome.converged = ok and outcome.stable
        connection.close()
    outcome.seconds = time.monotonic() - started
    return outcome


def _table(outcomes: list[Outcome]) -> str:
    rows = [
        "| scenario | start (skew/maxSkew) | tool | evictions | rounds | final skew | converged |",
        "|---|---|---|---:|---:|---|---|",
    ]
    for o in outcomes:
        start = ", ".join(f"{k} {v}" for k, v in o.initial.items())
        final = ", ".join(f"{k} {v}" for k, v in o.skews.items())
        verdict = "yes" if o.converged else ("no" + (f" ({o.note})" if o.note else ""))
        if not o.stable and not o.note:
            verdict = f"no (still evicting after {len(o.per_round)} rounds)"
        rows.append(
            f"| {o.scenario} | {start} | {o.tool} | {o.evictions} | {o.rounds} | {final} | "
            f"{verdict} |"
        )
    return "\n".join(rows)


def _write(outcomes: list[Outcome], path: Path, command: str) -> None:
    descriptions = "\n".join(
        f"- **{s.name}**: {s.description}"
        for s in SCENARIOS.values()
        if any(o.scenario == s.name for o in outcomes)
    )
    section = (
        f"{MARK_START}\n## rebalance against the descheduler\n\n"
        f"`{command}` ({os.cpu_count()} vCPUs, {platform.machine()}, Python "
        f"{platform.python_version()}). Each scenario and tool gets a fresh control plane "
        "(etcd v3.7.0, kube-apiserver, kube-controller-manager and kube-scheduler v1.37.1) "
        "and the same starting state; a stand-in kubelet marks bound pods Running and Ready "
        "and removes deleted ones. Each tool runs in rounds (one descheduler pass; one "
        "`topospread rebalance --apply`) until a round evicts nothing; the cluster settles "
        "between rounds (the ReplicaSet controller recreates, kube-scheduler places). "
        "Evictions are pods that went away; skews are counted as kube-scheduler counts them "
        "(minDomains included). Descheduler v0.36.0, "
        "RemovePodsViolatingTopologySpreadConstraint with default arguments. A topospread "
        "round is one `--apply` run: within it the plan is carried out in batches (one "
        "eviction each by default), waiting for each replacement and re-planning in between; "
        "a descheduler pass evicts everything it chose at once (with a PodDisruptionBudget, "
        "the API refuses the second eviction with 429 and the next pass retries).\n\n"
        f"{descriptions}\n\n{_table(outcomes)}\n{MARK_END}"
    )
    text = path.read_text() if path.exists() else ""
    if MARK_START in text and MARK_END in text:
        head, rest = text.split(MARK_START, 1)
        tail = rest.split(MARK_END, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--tools", default="descheduler,topospread")
    parser.add_argument("--max-rounds", type=int, default=6)
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--json", type=Path, default=None, help="Also write raw results.")
    parser.add_argument(
        "--descheduler", type=Path, default=None, help="The binary (default: build.sh's)."
    )
    parser.add_argument(
        "--from-json", type=Path, default=None, help="Rewrite the section from saved results."
    )
    args = parser.parse_args(argv)
    command = "python benchmarks/rebalance_vs_descheduler.py"
    if args.from_json is not None:
        saved = [Outcome(**o) for o in json.loads(args.from_json.read_text())]
        _write(saved, args.output, command)
        return 0
    binary = args.descheduler or _descheduler_binary()
    outcomes = []
    for scenario in args.scenarios.split(","):
        for tool in args.tools.split(","):
            outcome = run_one(scenario, tool, binary, args.max_rounds)
            print(json.dumps(outcome.__dict__), flush=True)
            outcomes.append(outcome)
    _write(outcomes, args.output, command)
    if args.json is not None:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
