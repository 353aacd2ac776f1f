"""Scale benchmark of ``topospread simulate`` (a script, not a test).

Generates a cluster of ``--zones`` zones × ``--nodes-per-zone`` nodes and one step that
applies a Deployment of ``--pods`` replicas shaped like scheduler_perf's
TopologySpreading pod (100m CPU / 500Mi, zone DoNotSchedule maxSkew 5) plus a hostname
ScheduleAnyway constraint, runs it and prints scheduled pods per second of scheduling
time and the peak RSS of the process.

    python benchmarks/sim_scale.py --nodes 500 --pods 2000
    python benchmarks/sim_scale.py --nodes 5000 --pods 50000 --zones 3

``--profile`` prints the top of a cProfile run instead; ``--write FILE`` only writes the
scenario (JSON, which is YAML) for ``topospread simulate FILE``, with its progress bar.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from topospread.engine.sim.scenario import parse_scenario
from topospread.engine.sim.simulator import Simulator


def scenario_document(nodes: int, pods: int, zones: int) -> dict[str, Any]:
    """The scenario as a parsed YAML document would look."""
    per_zone = -(-nodes // zones)
    return {
        "apiVersion": "topospread.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"scale-{nodes}-{pods}"},
        "cluster": {
            "nodes": {
                "zones": [f"zone-{i}" for i in range(zones)],
                "perZone": per_zone,
                "allocatable": {"cpu": "32", "memory": "256Gi", "pods": 110},
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
                                "selector": {"matchLabels": {"color": "blue"}},
                                "template": {
                                    "metadata": {"labels": {"color": "blue"}},
                                    "spec": {
                                        "topologySpreadConstraints": [
                                            {
                                                "maxSkew": 5,
                                                "topologyKey": "topology.kubernetes.io/zone",
                                                "whenUnsatisfiable": "DoNotSchedule",
                                                "labelSelector": {"matchLabels": {"color": "blue"}},
                                            },
                                            {
                                                "maxSkew": 1,
                                                "topologyKey": "kubernetes.io/hostname",
                                                "whenUnsatisfiable": "ScheduleAnyway",
                                                "labelSelector": {"matchLabels": {"color": "blue"}},
                                            },
                                        ],
                                        "containers": [
                                            {
                                                "name": "c",
                                                "image": "registry.k8s.io/pause:3.10",
                                                "resources": {
                                                    "requests": {"cpu": "100m", "memory": "500Mi"}
                                                },
                                            }
                                        ],
                                    },
                                },
                            },
                        }
                    ]
                },
            }
        ],
    }


def peak_rss_mib() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(nodes: int, pods: int, zones: int) -> dict[str, Any]:
    """Run one scenario; the numbers as a dict."""
    scenario = parse_scenario(scenario_document(nodes, pods, zones), "sim_scale")
    simulator = Simulator(scenario)
    start = time.perf_counter()
    result = simulator.run_scenario()
    elapsed = time.perf_counter() - start
    step = result.steps[-1]
    scheduled = sum(1 for e in step.events if e.kind == "scheduled")
    return {
        "nodes": len(scenario.objects),
        "pods": pods,
        "scheduled": scheduled,
        "attempts": step.scheduling_attempts,
        "seconds": round(elapsed, 2),
        "pods_per_second": round(scheduled / elapsed, 1) if elapsed else None,
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--zones", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary")
    parser.add_argument(
        "--write",
        metavar="FILE",
        help="only write the scenario to FILE (for `topospread simulate FILE`)",
    )
    args = parser.parse_args(argv)
    if args.write:
        document = scenario_document(args.nodes, args.pods, args.zones)
        Path(args.write).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        return 0
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        numbers = run(args.nodes, args.pods, args.zones)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    else:
        numbers = run(args.nodes, args.pods, args.zones)
    print(json.dumps(numbers))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
