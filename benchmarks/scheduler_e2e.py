"""End-to-end pods/s of ``topospread scheduler`` and kube-scheduler v1.37.1, side by side.

For each scheduler and size, a fresh control plane (etcd + kube-apiserver of the pinned
release, no controller manager: nothing else writes) is filled with scheduler_perf's
TopologySpreading shape — N ``node-default`` Nodes labelled ``topology.kubernetes.io/zone``
moon-1/2/3, then M Pending ``pod-with-topology-spreading`` pods (color=blue, maxSkew 5 on
the zone, DoNotSchedule, 100m CPU / 500Mi). Then the scheduler is started as a process
with the same KubeSchedulerConfiguration (default profile, leader election off,
``clientConnection`` qps/burst 5000 for both) and timed from its launch until a watch has
seen every pod bound: start, informer sync, cycles and binds all included. The spread of
the result is checked (every DoNotSchedule constraint holds) and each scheduler's CPU
time is read from /proc. Writes its table into BENCHMARKS.md between its own markers.

    python benchmarks/scheduler_e2e.py                         # 1,000 nodes / 5,000 pods
    python benchmarks/scheduler_e2e.py --sizes 1000x5000 5000x5000 --repeat 2
    python benchmarks/scheduler_e2e.py --only topospread --no-write
    python benchmarks/scheduler_e2e.py --parallelism 2              # workers = cores
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from topospread.client.config import connect
from topospread.client.transport import Request
from topospread.testing.churn import own_cpu_seconds, start_scheduler
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube
from topospread.testing.scheduling import create_all, list_raw, spread_violations

ROOT = Path(__file__).resolve().parents[1]
MARK_START = "<!-- scheduler-e2e:start -->"
MARK_END = "<!-- scheduler-e2e:end -->"
ZONE_KEY = "topology.kubernetes.io/zone"
ZONES = ("moon-1", "moon-2", "moon-3")
NAMESPACE = "bench"
PODS_PER_NODE = 40
"""node-default's 4 CPUs over pod-with-topology-spreading's 100m (memory allows 65)."""


def perf_node(i: int) -> dict[str, Any]:
    """scheduler_perf's node-default.yaml with the zone label its strategy adds."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"scheduler-perf-{i}",
            "labels": {ZONE_KEY: ZONES[i % 3], "kubernetes.io/hostname": f"scheduler-perf-{i}"},
        },
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def spreading_pod(i: int) -> dict[str, Any]:
    """scheduler_perf's pod-with-topology-spreading.yaml."""
    resources = {"cpu": "100m", "memory": "500Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"spreading-pod-{i}",
            "namespace": NAMESPACE,
            "labels": {"color": "blue"},
        },
        "spec": {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 5,
                    "topologyKey": ZONE_KEY,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"color": "blue"}},
                }
            ],
            "containers": [
                {
                    "image": "registry.k8s.io/pause:3.10.2",
                    "name": "pause",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": resources, "requests": resources},
                }
            ],
        },
    }


def write_config(directory: Path, kubeconfig: Path, parallelism: int) -> Path:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 5000, "burst": 5000},
        "leaderElection": {"leaderElect": False},
        "parallelism": parallelism,
    }
    path = directory / "scheduler-config.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


class BoundCounter:
    """Counts pods of the namespace with spec.nodeName, from a list then a watch."""

    def __init__(self, kubeconfig: Path, total: int) -> None:
        self.connection = connect(kubeconfig)
        self.total = total
        self.bound: set[str] = set()
        self.done = threading.Event()
        self.finished_at = 0.0
        self.first_at = 0.0
        """When the first pod was seen bound: start-up ends there."""

    def run(self) -> None:
        # The API server closes a watch whose reader falls behind a burst of binds (its
        # watch cache's "unresponsive" watcher); a list then a new watch picks up again.
        while not self.done.is_set():
            self._list_then_watch()

    def _list_then_watch(self) -> None:
        transport = self.connection.transport
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        response = transport.send(Request("GET", path))
        page = json.loads(response.data)
        for item in page["items"]:
            if item["spec"].get("nodeName"):
                self._bound(item["metadata"]["name"])
        if self.done.is_set():
            return
        version = page["metadata"]["resourceVersion"]
        query = (("watch", "true"), ("resourceVersion", version), ("timeoutSeconds", "3600"))
        for line in transport.stream(Request("GET", path, query), read_timeout=3600):
            event = json.loads(line)
            obj = event.get("object") or {}
            if event.get("type") == "ERROR":
                return  # e.g. 410 Gone: list again
            if event.get("type") in ("ADDED", "MODIFIED") and obj["spec"].get("nodeName"):
                self._bound(obj["metadata"]["name"])
                if self.done.is_set():
                    return

    def _bound(self, name: str) -> None:
        if not self.bound:
            self.first_at = time.monotonic()
        self.bound.add(name)
        if len(self.bound) >= self.total and not self.done.is_set():
            self.finished_at = time.monotonic()
            self.done.set()


def scheduled_events(kubeconfig: Path) -> int:
    """The ``Scheduled`` Events the scheduler has posted so far."""
    items = list_raw(connect(kubeconfig), f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events")
    return sum(1 for item in items if item.get("reason") == "Scheduled")


def thread_cpu_seconds(pid: int) -> list[float]:
    """user + system CPU of each thread of process ``pid``, its main thread first and the
    others from most to least: where its one GIL's time went."""
    ticks = os.sysconf("SC_CLK_TCK")
    main_thread, others = 0.0, []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds = round((int(fields[11]) + int(fields[12])) / ticks, 2)
        if task.name == str(pid):
            main_thread = seconds
        elif seconds:
            others.append(seconds)
    return [main_thread, *sorted(others, reverse=True)]


def run_one(
    which: str,
    nodes: int,
    pods: int,
    timeout: float,
    keep_logs: Path | None = None,
    parallelism: int = 16,
    extra_args: tuple[str, ...] = (),
    label: str | None = None,
) -> dict[str, Any]:
    with ControlPlane(controller_manager=False) as plane:
        kube = Kube(connect(plane.admin_kubeconfig))
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        began = time.monotonic()
        create_all(kube, [perf_node(i) for i in range(nodes)], workers=32)
        create_all(kube, [spreading_pod(i) for i in range(pods)], workers=32)
        fill = time.monotonic() - began
        config = write_config(plane.workdir, plane.admin_kubeconfig, parallelism)
        counter = BoundCounter(plane.admin_kubeconfig, pods)
        watcher = threading.Thread(target=counter.run, daemon=True)
        watcher.start()
        time.sleep(1.0)  # the watch is open before the scheduler starts
        load = os.getloadavg()[0]
        started = time.monotonic()
        replica = start_scheduler(which, plane, config, 0, extra_args)
        process = replica.popen
        try:
            finished = counter.done.wait(timeout)
            # Read at once: both schedulers go on posting Events after the last bind.
            events = scheduled_events(plane.admin_kubeconfig) if finished else 0
            cpu = replica.cpu_seconds()
            # The rest is topospread's write processes (kube-scheduler has no children).
            own_cpu = own_cpu_seconds(process.pid)
            threads = thread_cpu_seconds(process.pid)
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if keep_logs is not None:
                keep_logs.mkdir(parents=True, exist_ok=True)
                name = (label or which).replace(" ", "-").replace(",", "")
                target = keep_logs / f"{name}-{nodes}x{pods}.log"
                target.write_bytes(replica.log.read_bytes())
        if not finished:
            # Kept as a row (the other scheduler still runs): how far it got.
            print(
                f"{which}: only {len(counter.bound)}/{pods} pods bound in {timeout} s",
                file=sys.stderr,
                flush=True,
            )
            return {
                "scheduler": label or which,
                "nodes": nodes,
                "pods": pods,
                "seconds": timeout,
                "pods_per_second": len(counter.bound) / timeout,
                "cpu_seconds": cpu,
                "child_cpu_seconds": cpu - own_cpu,
                "fill_seconds": fill,
                "violations": [],
                "per_zone": {},
                "load": load,
                "bound": len(counter.bound),
            }
        seconds = counter.finished_at - started
        first_bind = counter.first_at - started
        admin = connect(plane.admin_kubeconfig)
        placed = list_raw(admin, f"/api/v1/namespaces/{NAMESPACE}/pods")
        violations = spread_violations(placed, list_raw(admin, "/api/v1/nodes"))
        per_zone: dict[str, int] = {}
        zone_of = {f"scheduler-perf-{i}": ZONES[i % 3] for i in range(nodes)}
        for item in placed:
            zone = zone_of[item["spec"]["nodeName"]]
            per_zone[zone] = per_zone.get(zone, 0) + 1
        return {
            "scheduler": label or which,
            "nodes": nodes,
            "pods": pods,
            "seconds": seconds,
            "first_bind_seconds": first_bind,
            "pods_per_second": pods / seconds,
            "cpu_seconds": cpu,
            "child_cpu_seconds": cpu - own_cpu,
            "thread_cpu_seconds": threads,
            "fill_seconds": fill,
            "scheduled_events": events,
            "violations": violations,
            "per_zone": per_zone,
            "load": load,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", default=["1000x5000"], help="NODESxPODS (default 1000x5000)"
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=["topospread", "kube-scheduler"])
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--keep-logs", type=Path, help="copy each scheduler's log here")
    parser.add_argument(
        "--parallelism",
        type=int,
        default=16,
        help="the configuration's parallelism, for both schedulers (default 16, "
        "kube-scheduler's; topospread's cycles run on one thread either way)",
    )
    parser.add_argument(
        "--write-processes",
        type=int,
        nargs="+",
        help="run topospread once with each of these --write-processes (default: once, "
        "with its own default)",
    )
    parser.add_argument(
        "--cpu-affinity",
        nargs="+",
        choices=["auto", "off"],
        help="run topospread once with each of these --cpu-affinity (default: once, with "
        "its own default)",
    )
    parser.add_argument(
        "--watch-list",
        action="store_true",
        help="run topospread once more with --watch-list (its informers' state streamed)",
    )
    parser.add_argument(
        "--no-watch-process",
        action="store_true",
        help="run topospread once more with --no-watch-process (its pod watch read in the "
        "scheduling process)",
    )
    options = parser.parse_args()
    schedulers: list[tuple[str, tuple[str, ...], str | None]] = []
    if options.only != "topospread":
        schedulers.append(("kube-scheduler", (), None))
    if options.only != "kube-scheduler":
        for count in options.write_processes or [None]:
            for affinity in options.cpu_affinity or [None]:
                args: tuple[str, ...] = ()
                notes = []
                if count is not None:
                    args += ("--write-processes", str(count))
                    notes.append(f"{count} write process{'es' if count != 1 else ''}")
                if affinity is not None:
                    args += ("--cpu-affinity", affinity)
                    notes.append(f"cpu affinity {affinity}")
                label = ", ".join(["topospread", *notes]) if notes else None
                schedulers.append(("topospread", args, label))
        if options.watch_list:
            schedulers.append(("topospread", ("--watch-list",), "topospread, watch-list"))
        if options.no_watch_process:
            schedulers.append(
                ("topospread", ("--no-watch-process",), "topospread, no watch process")
            )
    rows: list[dict[str, Any]] = []
    for size in options.sizes:
        try:
            nodes, pods = (int(x) for x in size.split("x"))
        except ValueError:
            parser.error(f"--sizes {size}: expected NODESxPODS, e.g. 1000x5000")
        if pods > nodes * PODS_PER_NODE:
            parser.error(
                f"{size}: {nodes} nodes hold at most {nodes * PODS_PER_NODE} of these pods "
                f"({PODS_PER_NODE} each: 4 CPU / 100m); every pod must fit for a run to end"
            )
        for which, extra_args, label in schedulers:
            runs = []
            for _ in range(options.repeat):
                result = run_one(
                    which,
                    nodes,
                    pods,
                    options.timeout,
                    options.keep_logs,
                    options.parallelism,
                    extra_args,
                    label,
                )
                print(
                    json.dumps({k: v for k, v in result.items() if k != "violations"}),
                    f"violations={len(result['violations'])}",
                    flush=True,
                )
                runs.append(result)
            best = min(runs, key=lambda r: r["seconds"])
            best["median_seconds"] = statistics.median(r["seconds"] for r in runs)
            best["runs"] = len(runs)
            rows.append(best)
    if not options.no_write:
        write(rows, parallelism=options.parallelism)


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


def write(
    rows: list[dict[str, Any]], notes: tuple[str, ...] = (), *, parallelism: int = 16
) -> None:
    lines = [
        MARK_START,
        "## `topospread scheduler` end to end, beside kube-scheduler v1.37.1",
        "",
        "`benchmarks/scheduler_e2e.py`: a fresh control plane per run (etcd + kube-apiserver "
        "v1.37.1, no controller manager), N scheduler_perf `node-default` Nodes over zones "
        "moon-1/2/3 and M Pending `pod-with-topology-spreading` pods created first; then the "
        "scheduler process is launched with the same KubeSchedulerConfiguration (default "
        "profile, leader election off, clientConnection qps/burst 5000) and timed until a "
        "watch has seen every pod bound — process start, informer sync, cycles, binds and "
        "the Scheduled Events posted meanwhile included. Same machine, same API server "
        "build; the scheduler, kube-apiserver and etcd share its cores. The Scheduled "
        "Events column counts those the API server held when the last bind was seen "
        "(listed at once); the rest were posted after the timed span.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; code {_git_version()}; `parallelism: {parallelism}` "
        f"(kube-scheduler's Filter/Score workers share the {os.cpu_count()} cores).",
        "",
        "| nodes | pods | scheduler | seconds (best) | median | first bind, s (best run) "
        "| pods/s | scheduler CPU s | of which write processes "
        "| Scheduled Events by the last bind | DoNotSchedule violations | pods per zone "
        "| load average at start |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        zones = ", ".join(f"{z} {n}" for z, n in sorted(row["per_zone"].items()))
        if "bound" in row:
            zones = f"did not finish: {row['bound']:,} of {row['pods']:,} bound at the timeout"
        lines.append(
            f"| {row['nodes']:,} | {row['pods']:,} | {row['scheduler']} | {row['seconds']:.1f} "
            f"| {row['median_seconds']:.1f} | {row.get('first_bind_seconds', 0.0):.2f} "
            f"| {row['pods_per_second']:.0f} "
            f"| {row['cpu_seconds']:.1f} | {row.get('child_cpu_seconds', 0.0):.1f} "
            f"| {row.get('scheduled_events', 0):,} | {len(row['violations'])} | {zones} "
            f"| {row['load']:.1f} |"
        )
    lines += ["", *notes, "", MARK_END] if notes else ["", MARK_END]
    block = "\n".join(lines)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if MARK_START in text and MARK_END in text:
        head, _, rest = text.partition(MARK_START)
        _, _, tail = rest.partition(MARK_END)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
