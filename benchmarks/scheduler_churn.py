"""Churn and faults: ``topospread scheduler`` beside kube-scheduler v1.37.1 on a cluster that
changes while pods arrive (:mod:`topospread.testing.churn`).

Each run starts a fresh control plane (etcd, kube-apiserver, kube-controller-manager) and
kwok holding NODES 4-CPU Nodes over three zones; then Deployments (maxSkew 1 on zones,
DoNotSchedule; on hosts, ScheduleAnyway) totalling PODS replicas. While they arrive a
third is scaled up by half and a third down by half (at 30 % bound), and one zone's Nodes
are deleted with their pods (at 60 %). Timed from the Deployments' creation until every
Deployment has its replicas bound to live Nodes. ``--faults`` adds, for two replicas with
leader election: kube-apiserver killed and restarted (15 %), etcd compacted and the API
server restarted (45 %), the leader SIGKILLed (75 %). The checks (pods Pending, bound
twice, Nodes overcommitted, DoNotSchedule broken) come from the API server's objects.

    python benchmarks/scheduler_churn.py                          # 1,000 nodes, 10,000 pods
    python benchmarks/scheduler_churn.py --sizes 5000x50000 --faults --only topospread
    python benchmarks/scheduler_churn.py --repeat 3 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from topospread.testing.churn import ChurnPlan, ChurnResult, run_churn

ROOT = Path(__file__).resolve().parents[1]
MARK_START = "<!-- scheduler-churn:start -->"
MARK_END = "<!-- scheduler-churn:end -->"
DEPLOYMENTS = 20


def plan_for(nodes: int, pods: int, faults: bool, timeout: float, parallelism: int) -> ChurnPlan:
    return ChurnPlan(
        nodes=nodes,
        deployments=DEPLOYMENTS,
        replicas=pods // DEPLOYMENTS,
        faults=faults,
        replicas_of_scheduler=2 if faults else 1,
        timeout=timeout,
        parallelism=parallelism,
        lease_seconds=15 if faults else 6,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["1000x10000"], help="NODESxPODS")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=["topospread", "kube-scheduler"])
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--parallelism", type=int, default=16)
    parser.add_argument("--keep-logs", type=Path)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    schedulers = [options.only] if options.only else ["kube-scheduler", "topospread"]
    rows: list[dict[str, Any]] = []
    for size in options.sizes:
        try:
            nodes, pods = (int(x) for x in size.split("x"))
        except ValueError:
            parser.error(f"--sizes {size}: expected NODESxPODS, e.g. 1000x5000")
        try:
            plan = plan_for(nodes, pods, options.faults, options.timeout, options.parallelism)
        except ValueError as error:
            parser.error(f"{size}: {error}")
        for which in schedulers:
            runs: list[ChurnResult] = []
            for attempt in range(options.repeat):
                logs = None
                if options.keep_logs:
                    logs = options.keep_logs / f"{which}-{size}-{attempt}"
                result = run_churn(which, plan, keep_logs=logs)
                print(json.dumps(result.as_dict()), flush=True)
                runs.append(result)
            rows.append(summary(runs))
    if not options.no_write:
        write(rows, options.faults, options.parallelism)


def summary(runs: list[ChurnResult]) -> dict[str, Any]:
    """The fastest settled run with the median over all runs, and every run's checks."""
    best = min(runs, key=lambda r: (not r.settled, r.seconds))
    row = best.as_dict()
    row["median_seconds"] = statistics.median(r.seconds for r in runs)
    # A run that needed kube-controller-manager restarted says so: its seconds include the
    # minute the ReplicaSets stalled before the restart (ChurnResult.controller_manager_restarts).
    row["outcomes"] = [
        f"{r.outcome} (kube-controller-manager restarted)"
        if r.controller_manager_restarts
        else r.outcome
        for r in runs
    ]
    row["runs"] = len(runs)
    for key in ("pending", "bound_twice", "overcommitted", "violations"):
        row[key] = sum(len(getattr(r, key)) for r in runs)
    return row


def _git_version() -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def write(rows: list[dict[str, Any]], faults: bool, parallelism: int) -> None:
    kind = "faults" if faults else "churn"
    start = MARK_START.replace("churn:", f"{kind}:")
    end = MARK_END.replace("churn:", f"{kind}:")
    title = (
        "Churn with faults (two replicas, leader election)"
        if faults
        else "Churn (Deployments scaled up and down, a zone's Nodes deleted)"
    )
    lines = [
        start,
        f"### {title}",
        "",
        f"`benchmarks/scheduler_churn.py{' --faults' if faults else ''}`: machine "
        f"{platform.machine()}, {os.cpu_count()} cores (shared by etcd, kube-apiserver, "
        f"kube-controller-manager, kwok and the scheduler), Python "
        f"{platform.python_version()}, code {_git_version()}, `parallelism: {parallelism}`.",
        "",
        "| nodes | first pods | scheduler | outcome | seconds (best) | median | runs "
        "| scheduler CPU s | Pending | bound twice | overcommitted Nodes "
        "| DoNotSchedule broken | pods per zone | relists "
        "| bound to deleted Nodes after the drain (last, s after) "
        "| of which the scheduler's Events stamp after it (last, s after) |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for row in rows:
        zones = ", ".join(f"{z} {n}" for z, n in row["per_zone"].items())
        relists = row["relists"] if row["relists"] >= 0 else "-"
        lines.append(
            f"| {row['nodes']:,} | {row['first_pods']:,} | {row['scheduler']} "
            f"| {', '.join(row['outcomes'])} | {row['seconds']:.1f} "
            f"| {row['median_seconds']:.1f} | {row['runs']} | {row['cpu_seconds']:.1f} "
            f"| {row['pending']} | {row['bound_twice']} | {row['overcommitted']} "
            f"| {row['violations']} | {zones} | {relists} "
            f"| {row['orphans_after_drain']} ({row['last_bind_to_deleted_node']:.2f}) "
            f"| {row['binds_after_drain']} ({row['last_bind_after_drain']:.2f}) |"
        )
    lines += ["", end]
    block = "\n".join(lines)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in text and end in text:
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(end)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
