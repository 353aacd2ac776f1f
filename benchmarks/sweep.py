"""`simulate --runs`: runs per second on 1 and N local workers and on a local Ray instance.

The scenario is the issue's shape at a chosen scale: NODES nodes over three zones, one
Deployment of PODS pods spread by zone (DoNotSchedule) and by hostname (ScheduleAnyway),
a rollout, then a zone outage. Each executor runs the same seeds (their reports are
checked identical before the times count); wall time, runs/s, and peak RSS of the worker
processes (pool: the largest child's, from wait4; Ray: not measured) are reported, with
min/median over --repeat repetitions. --write puts a section into BENCHMARKS.md.

    python3 benchmarks/sweep.py --nodes 300 --pods 3000 --runs 16 --repeat 3 [--ray] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def scenario(nodes: int, pods: int) -> dict[str, object]:
    per_zone = max(1, nodes // 3)
    cpu = max(1, -(-pods * 250 // (per_zone * 3) // 1000) + 1)
    spread = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}},
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
         "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}},
    ]  # fmt: skip
    return {
        "apiVersion": "topospread.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"sweep-{nodes}x{pods}"},
        "cluster": {
            "nodes": {
                "zones": ["zone-a", "zone-b", "zone-c"],
                "perZone": per_zone,
                "allocatable": {"cpu": str(cpu * 2), "memory": "64Gi", "pods": 110},
            }
        },
        "steps": [
            {
                "name": "deploy",
                "apply": {
                    "objects": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "metadata": {"name": "web"},
                            "spec": {
                                "replicas": pods,
                                "selector": {"matchLabels": {"app": "web"}},
                                "template": {
                                    "metadata": {"labels": {"app": "web"}},
                                    "spec": {
                                        "topologySpreadConstraints": spread,
                                        "containers": [
                                            {"name": "web", "image": "nginx:1.27",
                                             "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}
                                        ],
                                    },
                                },
                            },
                        }
                    ]
                },
            },
            {"name": "rollout", "rollout": {"deployment": "web", "image": "nginx:1.28"}},
            {"name": "zone-a outage", "failZone": {"zone": "zone-a", "mode": "notReady"}},
        ],
    }


WORKER = """
import json, resource, sys, time
from topospread.execution import run_sweep
from topospread.io.scenarios import load_scenario
scenario = load_scenario(sys.argv[1])
runs, workers, ray = int(sys.argv[2]), sys.argv[3], sys.argv[4]
start = time.perf_counter()
report = run_sweep(scenario, runs, 0, workers=None if workers == "-" else int(workers),
                   ray_address=None if ray == "-" else ray)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "steps": report.to_json()["steps"],
                  "childRssMiB": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "selfRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(path: Path, runs: int, workers: str, ray: str) -> dict[str, object]:
    import json

    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(path), str(runs), workers, ray],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="also on a local Ray instance")
    parser.add_argument("--write", action="store_true", help="write into BENCHMARKS.md")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep.yaml"
        path.write_text(yaml.safe_dump(scenario(args.nodes, args.pods)))
        executors = [("1 process", "1", "-"), (f"{cores} workers", str(cores), "-")]
        if args.ray:
            executors.append((f"Ray local ({cores} CPU)", "-", "local"))
        rows = []
        reference = None
        for label, workers, ray in executors:
            times, rss = [], 0.0
            for _ in range(args.repeat):
                got = measure(path, args.runs, workers, ray)
                if reference is None:
                    reference = got["steps"]
                assert got["steps"] == reference, f"{label}: a different report for the same seeds"
                times.append(float(got["seconds"]))  # type: ignore[arg-type]
                rss = max(rss, float(got["childRssMiB"]) if workers != "1" else float(got["selfRssMiB"]))  # type: ignore[arg-type]
            best, median = min(times), statistics.median(times)
            rows.append((label, best, median, args.runs / best, rss))
    base = rows[0][1]
    lines = [
        "| executor | wall min | wall median | runs/s (min) | speed-up | peak RSS per worker |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for label, best, median, rate, rss in rows:
        shown = f"{rss:.0f} MiB" if "Ray" not in label else "not measured"
        lines.append(
            f"| {label} | {best:.2f} s | {median:.2f} s | {rate:.2f} | {base / best:.2f}× | {shown} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip()  # fmt: skip
        section = (
            f"\n## `simulate --runs`: sweeps over cores and Ray\n\n"
            f"`python3 benchmarks/sweep.py --nodes {args.nodes} --pods {args.pods} --runs "
            f"{args.runs} --repeat {args.repeat}{' --ray' if args.ray else ''} --write` on "
            f"{platform.machine()}, {cores} cores ({platform.processor() or 'cpu'}), Python "
            f"{platform.python_version()}, commit {commit}: a {args.nodes}-node scenario, one "
            f"Deployment of {args.pods} pods (zone DoNotSchedule + hostname ScheduleAnyway), a "
            "rollout, a zone outage; every executor's report checked identical for the same "
            f"seeds; {args.repeat} repetitions.\n\n{table}\n"
        )
        with (ROOT / "BENCHMARKS.md").open("a", encoding="utf-8") as out:
            out.write(section)
    _ = resource


if __name__ == "__main__":
    main()
