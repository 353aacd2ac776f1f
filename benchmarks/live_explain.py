"""Live ``topospread explain`` against a real API server holding a large cluster.

Starts the test control plane (etcd + kube-apiserver of the pinned release, built by
``bash controlplane/build.sh``), fills it with N nodes over 3 zones and M pods bound to them
(shaped like scheduler_perf's topology pods: requests, labels, a zone spread constraint),
adds one Pending pod, then times ``topospread explain NS/pending`` end to end as a user runs
it (a fresh process: start, kubeconfig, lists in parallel, decoding, the cycle, output),
repeated, reporting wall time, CPU time (user+sys) and peak RSS, min and median. The list
page size is varied to show where the time goes. Writes its table into BENCHMARKS.md.

    python benchmarks/live_explain.py                      # 5,000 nodes / 50,000 pods
    python benchmarks/live_explain.py --nodes 500 --pods 5000 --repeat 1 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from topospread.client.config import connect
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube, node, pod

ROOT = Path(__file__).resolve().parents[1]
MARK_START = "<!-- live-explain:start -->"
MARK_END = "<!-- live-explain:end -->"
ZONE_KEY = "topology.kubernetes.io/zone"


def populate(kube: Kube, nodes: int, pods: int, workers: int) -> float:
    started = time.monotonic()
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    names = [f"node-{i}" for i in range(nodes)]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda i: kube.create(node(names[i], f"zone-{i % 3}")), range(nodes)))
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE_KEY,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]

    def bound(i: int) -> None:
        kube.create(
            pod(f"web-{i}", "bench", {"app": "web"}, node_name=names[i % nodes], spread=spread)
        )

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(bound, range(pods)))
    kube.create(pod("pending", "bench", {"app": "web"}, spread=spread))
    return time.monotonic() - started


def timed(args: list[str], env: dict[str, str]) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *args], env=env, capture_output=True, text=True
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {result.stderr.strip()[-2000:]}")
    peak_kib = int(result.stderr.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss_mib": peak_kib / 1024, "out": len(result.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--page-sizes", default="500,5000")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--profile", metavar="FILE", help="Also run one explain under cProfile into FILE."
    )
    options = parser.parse_args()

    with ControlPlane(controller_manager=False) as plane:
        connection = connect(plane.admin_kubeconfig)
        kube = Kube(connection)
        fill = populate(kube, options.nodes, options.pods, options.workers)
        connection.close()
        print(f"created {options.nodes:,} nodes and {options.pods + 1:,} pods in {fill:.0f} s")
        rows: list[dict[str, Any]] = []
        for page_size in [int(p) for p in options.page_sizes.split(",")]:
            env = {**os.environ, "TOPOSPREAD_CHUNK_SIZE": str(page_size)}
            command = [
                sys.executable,
                "-m",
                "topospread.cli",
                "explain",
                "bench/pending",
                "--kubeconfig",
                str(plane.admin_kubeconfig),
                "--output",
                "json",
            ]
            load_before = os.getloadavg()[0]
            runs = [timed(command, env) for _ in range(options.repeat)]
            row = {
                "page": page_size,
                "wall_min": min(r["wall"] for r in runs),
                "wall_median": statistics.median(r["wall"] for r in runs),
                "cpu_min": min(r["cpu"] for r in runs),
                "cpu_median": statistics.median(r["cpu"] for r in runs),
                "rss": max(r["rss_mib"] for r in runs),
                "load": max(load_before, os.getloadavg()[0]),
            }
            rows.append(row)
            print(json.dumps(row))
        side_by_side = compare_with_oracle(plane, options.repeat)
        if options.profile:
            profiled = [sys.executable, "-m", "cProfile", "-o", options.profile, *command[1:]]
            subprocess.run(profiled, env=env, capture_output=True, check=True)
            print(f"wrote {options.profile}")
    if not options.no_write:
        write(rows, options, fill, side_by_side)


def compare_with_oracle(plane: ControlPlane, repeat: int) -> list[dict[str, Any]]:
    """The same cluster from a snapshot file: ``oracle explain`` beside ``topospread explain``.

    The oracle is upstream's scheduler code (``oracle/``); reading a file is the nearest
    thing upstream has to a one-shot explain, so this is the side-by-side ratio.
    """
    oracle = ROOT / "oracle" / "bin" / "oracle"
    if not oracle.is_file():
        print("no oracle binary (bash oracle/build.sh): side-by-side skipped")
        return []
    folder = Path(tempfile.mkdtemp(prefix="live-explain-"))
    snapshot, pod_file = folder / "snapshot.json", folder / "pod.json"
    cli = [sys.executable, "-m", "topospread.cli"]
    subprocess.run(
        [*cli, "snapshot", "-o", str(snapshot), "--kubeconfig", str(plane.admin_kubeconfig)],
        check=True,
        capture_output=True,
    )
    items = json.loads(snapshot.read_text())["items"]
    pending = next(i for i in items if i["kind"] == "Pod" and i["metadata"]["name"] == "pending")
    pod_file.write_text(json.dumps(pending))
    commands = {
        "oracle explain (upstream v1.37.1)": [
            str(oracle),
            "explain",
            "--cluster",
            str(snapshot),
            "--pod",
            str(pod_file),
        ],
        "topospread explain": [
            *cli,
            "explain",
            "--cluster",
            str(snapshot),
            "--pod",
            str(pod_file),
            "--output",
            "json",
        ],
    }
    results = []
    for name, command in commands.items():
        runs = [timed(command, dict(os.environ)) for _ in range(repeat)]
        results.append(
            {
                "name": name,
                "cpu_min": min(r["cpu"] for r in runs),
                "cpu_median": statistics.median(r["cpu"] for r in runs),
                "wall_min": min(r["wall"] for r in runs),
                "rss": max(r["rss_mib"] for r in runs),
            }
        )
        print(json.dumps(results[-1]))
    shutil.rmtree(folder)
    return results


def write(
    rows: list[dict[str, Any]],
    options: argparse.Namespace,
    fill: float,
    side_by_side: list[dict[str, Any]],
) -> None:
    machine = (
        f"{os.cpu_count()} vCPUs, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    lines = [
        MARK_START,
        "## Live explain against a real API server",
        "",
        f"`python benchmarks/live_explain.py --nodes {options.nodes} --pods {options.pods} "
        f"--repeat {options.repeat}` ({machine}; etcd, kube-apiserver and topospread share "
        "the machine). The cluster: "
        f"{options.nodes:,} nodes in 3 zones, {options.pods:,} bound pods with a zone spread "
        f"constraint, one Pending pod (created in {fill:.0f} s). Each run is a fresh "
        "`topospread explain bench/pending --output json` process: kubeconfig, every list "
        "(cluster-wide, in parallel, paginated), decoding, the scheduling cycle, output. "
        "CPU is the process's user+sys time (the API server's own work is not in it).",
        "",
        "| list page size | wall min | wall median | CPU min | CPU median | peak RSS "
        "| load average |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['page']:,} | {r['wall_min']:.1f} s | {r['wall_median']:.1f} s | "
        f"{r['cpu_min']:.1f} s | {r['cpu_median']:.1f} s | {r['rss']:.0f} MiB | "
        f"{r.get('load', 0):.1f} |"
        for r in rows
    ]
    if side_by_side:
        lines += [
            "",
            "The same cluster from a `topospread snapshot` JSON file, upstream's scheduler code "
            "(the oracle) beside topospread, in the same run:",
            "",
            "| command | CPU min | CPU median | wall min | peak RSS |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['name']} | {r['cpu_min']:.1f} s | {r['cpu_median']:.1f} s | "
            f"{r['wall_min']:.1f} s | {r['rss']:.0f} MiB |"
            for r in side_by_side
        ]
        lines += [
            "",
            "From a file topospread validates every object as the API server would on create "
            "(a file may be hand-written); from the API server it does not (the server "
            "validated them on admission), and it decodes pages while the next ones arrive.",
        ]
    lines.append(MARK_END)
    section = "\n".join(lines)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8")
    if MARK_START in text and MARK_END in text:
        head, _, rest = text.partition(MARK_START)
        _, _, tail = rest.partition(MARK_END)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
