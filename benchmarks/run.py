"""topospread against the Go scheduler, side by side, on scheduler_perf's topology workloads.

Builds each workload (nodes, existing pods, pods to place), runs it through topospread's
sequential scheduling loop (``topospread.engine.bench``) and through the Go oracle's
``bench`` mode (upstream kube-scheduler's own cycle, in-process), each in its own
process, one after the other; checks that both placed every pod on the same node; and
writes a table to ``BENCHMARKS.md``.

    python benchmarks/run.py                      # the default full run (see --scale)
    python benchmarks/run.py --scale 0.01 --output /tmp/b.md
    python benchmarks/run.py --workloads TopologySpreading --scale 1

Both loops are sequential (parallelism 1), start the node search at index 0, rotate it
as kube-scheduler does and give ties to the first node the search visited. The oracle is
``oracle/bin/oracle`` (``$TOPOSPREAD_ORACLE`` overrides; built with
``bash oracle/build.sh``). Exit status 1 when any placement differs (a faithfulness bug
in topospread), 2 on bad usage or a missing oracle.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

DEFAULT_SCALE = 1.0
DEFAULT_POD_SCALE = 0.2
"""The default full run: 5,000 nodes as upstream, pod counts at 1/5 (≈ 20 min on 2 cores)."""
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


# -- workloads ---------------------------------------------------------------------------------


def _node(name: str, labels: dict[str, str], taints: list[dict[str, str]] | None = None) -> dict:
    # scheduler_perf's node-default.yaml / node-with-taint.yaml; the API server copies
    # capacity into allocatable, written out here so that no defaulting is relied on.
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {HOSTNAME: name, **labels}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def _pod(
    name: str,
    namespace: str = "default",
    *,
    labels: dict[str, str] | None = None,
    node: str | None = None,
    requests: bool = True,
    port: bool = True,
    constraints: list[dict[str, Any]] | None = None,
) -> dict:
    container: dict[str, Any] = {"name": "pause", "image": "registry.k8s.io/pause:3.10.2"}
    if port:
        container["ports"] = [{"containerPort": 80}]
    if requests:
        amounts = {"cpu": "100m", "memory": "500Mi"}
        container["resources"] = {"limits": amounts, "requests": amounts}
    spec: dict[str, Any] = {"containers": [container]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node is not None:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _zoned_nodes(count: int, zones: list[str], prefix: str = "node-") -> list[dict]:
    # Zones in turn: the order kube-scheduler's node tree lists them in, so that the
    # snapshot order of both engines is the input order.
    width = len(str(max(count - 1, 0)))
    return [_node(f"{prefix}{i:0{width}d}", {ZONE: zones[i % len(zones)]}) for i in range(count)]


def _default_pods(count: int, nodes: list[dict]) -> list[dict]:
    # pod-default.yaml, already running: spread over the nodes in turn.
    return [
        _pod(f"init-pod-{i}", node=nodes[i % len(nodes)]["metadata"]["name"]) for i in range(count)
    ]


MOONS = ["moon-1", "moon-2", "moon-3"]


def topology_spreading(nodes: int, init: int, pods: int, when: str) -> dict:
    """TopologySpreading (DoNotSchedule) / PreferredTopologySpreading (ScheduleAnyway)."""
    node_objs = _zoned_nodes(nodes, MOONS)
    constraint = {
        "maxSkew": 5,
        "topologyKey": ZONE,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    measured = [
        _pod(f"spreading-pod-{i}", labels={"color": "blue"}, constraints=[constraint])
        for i in range(pods)
    ]
    return {"cluster": node_objs + _default_pods(init, node_objs), "pods": measured}


def default_topology_spreading(nodes: int, init: int, pods: int) -> dict:
    """A Service in service-ns and pods it selects: the system default constraints."""
    node_objs = _zoned_nodes(nodes, MOONS)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "service-0", "namespace": "service-ns", "uid": "uid-service-0"},
        "spec": {
            "selector": {"app": "scheduler-perf"},
            "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}],
        },
    }
    measured = [
        _pod(
            f"pod-{i}",
            "service-ns",
            labels={"app": "scheduler-perf"},
            requests=False,
            port=False,
        )
        for i in range(pods)
    ]
    return {
        "cluster": [*node_objs, service, *_default_pods(init, node_objs)],
        "pods": measured,
    }


def node_inclusion_policy(normal: int, tainted: int, pods: int) -> dict:
    """Normal and tainted nodes (no zones), hostname maxSkew 1 with Honor/Honor."""
    width = len(str(max(normal, tainted, 1)))
    node_objs = [_node(f"scheduler-perf-{i:0{width}d}", {}) for i in range(normal)]
    node_objs += [
        _node(f"taint-node-{i:0{width}d}", {}, [{"key": "foo", "effect": "NoSchedule"}])
        for i in range(tainted)
    ]
    constraint = {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "nodeAffinityPolicy": "Honor",
        "nodeTaintsPolicy": "Honor",
        "labelSelector": {"matchLabels": {"foo": "bar"}},
    }
    measured = [
        _pod(
            f"spreading-pod-with-node-inclusion-policy-{i}",
            labels={"foo": "bar"},
            constraints=[constraint],
        )
        for i in range(pods)
    ]
    return {"cluster": node_objs, "pods": measured}


def plugin_micro(nodes: int, existing: int, pods: int, case: str) -> dict:
    """PodTopologySpread's BenchmarkFilter cluster (MakeNodesAndPodsForEvenPodsSpread:
    10 zones, existing pods on the nodes in turn, labelled foo or foo+bar) with the full
    default profile, placing ``pods`` pods of the case's shape."""
    zones = [f"zone{i}" for i in range(10)]
    node_objs = [_node(f"node{i}", {ZONE: zones[i % 10]}) for i in range(nodes)]
    labels = {"foo": ""} if case != "zone+hostname" else {"foo": "", "bar": ""}
    keys = list(labels)
    cluster: list[dict] = list(node_objs)
    for i in range(existing):
        own = dict.fromkeys(keys[: i % len(keys) + 1], "")
        cluster.append(
            _pod(f"pod{i}", labels=own, node=f"node{i % nodes}", requests=False, port=False)
        )

    def spread(key: str, label: str) -> dict[str, Any]:
        return {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": label, "operator": "Exists"}]},
        }

    constraints = {
        "zone": [spread(ZONE, "foo")],
        "hostname": [spread(HOSTNAME, "foo")],
        "zone+hostname": [spread(ZONE, "foo"), spread(HOSTNAME, "bar")],
    }[case]
    measured = [
        _pod(f"p-{i}", labels=labels, requests=False, port=False, constraints=constraints)
        for i in range(pods)
    ]
    return {"cluster": cluster, "pods": measured}


@dataclass(frozen=True)
class Workload:
    name: str
    upstream: str
    """scheduler_perf's (or the Go unit benchmark's) name for it."""
    threshold: int | None
    """scheduler_perf's minimum pods/s, when it sets one."""
    counts: tuple[int, ...]
    """Nodes first, then the other counts the builder takes (at scale 1)."""
    pod_counts: tuple[bool, ...]
    """Which of ``counts`` are pod counts (scaled by --pod-scale too)."""
    build: Callable[..., dict]

    def scaled(self, scale: float, pod_scale: float) -> tuple[int, ...]:
        return tuple(
            max(1, round(c * scale * (pod_scale if is_pods else 1)))
            for c, is_pods in zip(self.counts, self.pod_counts, strict=True)
        )


WORKLOADS = [
    Workload(
        "TopologySpreading",
        "TopologySpreading/5000Nodes_5000Pods",
        460,
        (5000, 5000, 5000),
        (False, True, True),
        lambda n, i, p: topology_spreading(n, i, p, "DoNotSchedule"),
    ),
    Workload(
        "PreferredTopologySpreading",
        "PreferredTopologySpreading/5000Nodes_5000Pods",
        340,
        (5000, 5000, 5000),
        (False, True, True),
        lambda n, i, p: topology_spreading(n, i, p, "ScheduleAnyway"),
    ),
    Workload(
        "DefaultTopologySpreading",
        "DefaultTopologySpreading/5000Nodes_50000Pods",
        160,
        (5000, 5000, 50000),
        (False, True, True),
        default_topology_spreading,
    ),
    Workload(
        "SchedulingWithNodeInclusionPolicy",
        "SchedulingWithNodeInclusionPolicy/5000Nodes",
        270,
        (4000, 1000, 4000),
        (False, False, True),
        node_inclusion_policy,
    ),
    *(
        Workload(
            f"PodTopologySpread/{case}",
            f"BenchmarkFilter+BenchmarkTestPodTopologySpreadScore 1000nodes/{upstream}",
            None,
            (1000, 10000, 1000),
            (False, True, True),
            lambda n, e, p, case=case: plugin_micro(n, e, p, case),
        )
        for case, upstream in (
            ("zone", "single-constraint-zone"),
            ("hostname", "single-constraint-node"),
            ("zone+hostname", "two-Constraints-zone-node"),
        )
    ),
]


# -- the Python side (run in a child process: its own peak RSS) ------------------------------


def python_worker(workload_file: Path, placements_file: Path) -> dict[str, Any]:
    """Decode the workload, run the sequential loop, write placements; the numbers."""
    from topospread.engine.bench import schedule_sequentially
    from topospread.engine.cluster import Cluster
    from topospread.framework.config.decode import decode_configuration, default_configuration
    from topospread.model.decode import decode_documents
    from topospread.model.objects import Pod

    data = json.loads(workload_file.read_text(encoding="utf-8"))
    cluster = Cluster.from_objects(decode_documents(data["cluster"], "cluster").objects)
    pods = [o for o in decode_documents(data["pods"], "pods").objects if isinstance(o, Pod)]
    config = data.get("config")
    configuration = (
        default_configuration() if config is None else decode_configuration(config, "config")
    )
    del data
    # As the commands do with what they loaded (settle_loaded_objects) and the scheduler
    # with what it listed (scheduler/heap.py): frozen, the cyclic collector no longer walks
    # it during the loop. One full collection over the hostname workload's 2,000 pods took
    # 41 ms, most of a 97 ms run of 200 pods.
    gc.freeze()
    run = schedule_sequentially(cluster, pods, configuration)
    placements_file.write_text("".join(p.line() + "\n" for p in run.placements), encoding="utf-8")
    return {
        "nodes": len(cluster.nodes),
        "existingPods": len(cluster.pods),
        "pods": len(pods),
        "scheduled": run.scheduled,
        "seconds": run.seconds,
        "podsPerSecond": len(pods) / run.seconds if run.seconds else 0.0,
        "cpuSeconds": run.cpu_seconds,
        "peakRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pythonVersion": platform.python_version(),
    }


# -- orchestration -----------------------------------------------------------------------------


def locate_oracle(explicit: str | None) -> Path | None:
    """The oracle binary: --oracle, $TOPOSPREAD_ORACLE or oracle/bin/oracle."""
    candidate = explicit or os.environ.get("TOPOSPREAD_ORACLE")
    path = Path(candidate) if candidate else REPO / "oracle" / "bin" / "oracle"
    return path if path.is_file() and os.access(path, os.X_OK) else None


@dataclass
class Outcome:
    workload: Workload
    counts: tuple[int, ...]
    python: dict[str, Any]
    go: dict[str, Any]
    identical: bool
    mismatch: str | None
    message_mismatch: str | None = None
    """For pods unschedulable in both: the first FailedScheduling message that differs."""
    tie_mismatch: str | None = None
    """Above parallelism 1: the first pod Go placed elsewhere (where its workers' finishing
    order broke a tie); not a faithfulness verdict, only compared at parallelism 1."""


def compare_placements(python_file: Path, go_file: Path, *, messages: bool = False) -> str | None:
    """None when every pod went to the same node; otherwise the first difference.

    With ``messages``: instead, the first pod unschedulable in both engines whose
    FailedScheduling messages differ."""
    ours = python_file.read_text(encoding="utf-8").splitlines()
    theirs = go_file.read_text(encoding="utf-8").splitlines()
    if len(ours) != len(theirs):
        return f"{len(ours)} placements from topospread, {len(theirs)} from Go"
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        pod_a, node_a, *why = a.split("\t")
        pod_b, node_b, *why_not = b.split("\t")
        said, says = " ".join(why), " ".join(why_not)
        if messages:
            if pod_a == pod_b and node_a == node_b == "-" and said != says:
                return (
                    f"pod #{index} {pod_a}: unschedulable in both, but topospread says "
                    f"{said!r} and Go says {says!r}"
                )
        elif pod_a != pod_b or node_a != node_b:
            detail = f"pod #{index} {pod_a}: topospread -> {node_a}, Go -> {node_b}"
            if node_a == "-":
                detail += f" (topospread: {said})"
            if node_b == "-":
                detail += f" (Go: {says})"
            return detail
    return None


def run_workload(
    workload: Workload,
    scale: float,
    pod_scale: float,
    oracle: Path,
    workdir: Path,
    log: Callable[[str], None],
    parallelism: int = 1,
) -> Outcome:
    counts = workload.scaled(scale, pod_scale)
    document = {"name": workload.name, "config": None, **workload.build(*counts)}
    slug = workload.name.replace("/", "-").replace("+", "-")
    workload_file = workdir / f"{slug}.json"
    workload_file.write_text(json.dumps(document), encoding="utf-8")
    del document
    py_placements = workdir / f"{slug}.topospread.tsv"
    go_placements = workdir / f"{slug}.go.tsv"

    log(f"{workload.name} {counts}: Go ...")
    done = subprocess.run(
        [
            str(oracle),
            "bench",
            "--input",
            str(workload_file),
            "--placements",
            str(go_placements),
            "--parallelism",
            str(parallelism),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"oracle bench failed ({done.returncode}): {done.stderr.strip()}")
    go = json.loads(done.stdout)
    if not go["nodeOrderMatchesInput"]:
        raise RuntimeError(
            f"{workload.name}: upstream's snapshot lists the nodes in another order than the "
            f"input ({go['nodeOrderDifference']}); the workload must list them as the node "
            "tree does"
        )
    log(f"  Go: {go['podsPerSecond']:.1f} pods/s; topospread ...")
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            str(workload_file),
            str(py_placements),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"topospread worker failed: {done.stderr.strip()[-2000:]}")
    python = json.loads(done.stdout.strip().splitlines()[-1])
    log(f"  topospread: {python['podsPerSecond']:.1f} pods/s")
    mismatch = compare_placements(py_placements, go_placements)
    tie_mismatch = None
    if mismatch and parallelism > 1:
        # Go's parallel Filter workers list the feasible nodes in the order they finish:
        # ties go where they happen to, so placements are compared at parallelism 1 only.
        log(f"  placements differ at parallelism {parallelism} (ties): {mismatch}")
        tie_mismatch, mismatch = mismatch, None
    if mismatch:
        log(f"  PLACEMENTS DIFFER: {mismatch}")
    message_mismatch = compare_placements(py_placements, go_placements, messages=True)
    if message_mismatch:
        log(f"  messages differ: {message_mismatch}")
    return Outcome(
        workload, counts, python, go, mismatch is None, mismatch, message_mismatch, tie_mismatch
    )


def machine() -> dict[str, str]:
    """nproc, CPU model, Python and Go versions."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    code = "unknown"
    if shutil.which("git"):
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        code = done.stdout.strip() or code
    go = "not installed"
    if shutil.which("go"):
        done = subprocess.run(["go", "version"], capture_output=True, text=True, check=False)
        go = done.stdout.strip() or go
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": model,
        "python": f"CPython {platform.python_version()}"
        if platform.python_implementation() == "CPython"
        else f"{platform.python_implementation()} {platform.python_version()}",
        "go": go,
        "kernel": platform.release(),
        "code": code,
    }


def _mib(value: float) -> str:
    return f"{value:,.0f} MiB"


def _rate(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _cpu(numbers: dict[str, Any]) -> str:
    # An oracle built before it reported CPU time has no cpuSeconds.
    value = numbers.get("cpuSeconds")
    return "–" if value is None else f"{value:,.2f}"


def table(outcomes: list[Outcome]) -> Iterator[str]:
    yield (
        "| workload | nodes / existing pods / placed | topospread pods/s | Go pods/s | "
        "topospread ÷ Go | loop CPU s topospread | loop CPU s Go | peak RSS topospread | "
        "peak RSS Go | identical placements | upstream threshold |"
    )
    yield "|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|"
    for o in outcomes:
        py, go = o.python, o.go
        ratio = py["podsPerSecond"] / go["podsPerSecond"] if go["podsPerSecond"] else 0.0
        counts = f"{go['nodes']:,} / {go['existingPods']:,} / {go['pods']:,}"
        if go["scheduled"] != go["pods"] or py["scheduled"] != py["pods"]:
            counts += f" ({py['scheduled']:,} / {go['scheduled']:,} scheduled)"
        threshold = f"{o.workload.threshold} pods/s (at full size)" if o.workload.threshold else "–"
        same = "yes" if o.identical else f"**no**: {o.mismatch}"
        if o.tie_mismatch:
            same = f"not compared (ties; from {o.tie_mismatch.split(':')[0]})"
        yield (
            f"| {o.workload.name} | {counts} | {_rate(py['podsPerSecond'])} | "
            f"{_rate(go['podsPerSecond'])} | {ratio:,.2f} | {_cpu(py)} | {_cpu(go)} | "
            f"{_mib(py['peakRssMiB'])} | "
            f"{_mib(go['peakRssMiB'])} | {same} | {threshold} |"
        )


def report(
    outcomes: list[Outcome],
    command: str,
    started: float,
    host: dict[str, str],
    parallelism: int = 1,
) -> str:
    go0 = outcomes[0].go if outcomes else {}
    lines = [
        "# Benchmarks: topospread beside the Go scheduler",
        "",
        "Written by `benchmarks/run.py` (see `benchmarks/README.md` for the method). Each "
        "workload is scheduled by topospread's sequential loop (`topospread.engine.bench`) "
        "and by upstream kube-scheduler's own cycle in the Go oracle (`oracle bench`, "
        f"Kubernetes {go0.get('kubernetesVersion', '?')}), topospread at parallelism 1 and "
        f"Go at parallelism {parallelism}, one pod after the other, each assumed on its "
        "node before the next; pods/s is the wall time of that loop alone, loop CPU the "
        "process's user and system CPU time over the same loop (all its threads), peak RSS "
        "the whole process's (setup included).",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: nproc = {host['nproc']}, CPU `{host['cpu']}`, {host['python']}, "
        f"{host['go']} (oracle built with {go0.get('goVersion', '?')}, "
        f"GOMAXPROCS {go0.get('gomaxprocs', '?')}), Linux {host['kernel']}; "
        f"topospread at `{host['code']}` (`git describe --always --dirty`). "
        f"Total run time {time.monotonic() - started:,.0f} s.",
        "",
        *table(outcomes),
        "",
    ]
    lines += list(summary(outcomes, parallelism))
    return "\n".join(lines)


def summary(outcomes: list[Outcome], parallelism: int = 1) -> Iterator[str]:
    """Plain sentences on what the table says."""
    timed = [o for o in outcomes if o.python["podsPerSecond"] and o.go["podsPerSecond"]]
    if timed:
        ratios = sorted(o.python["podsPerSecond"] / o.go["podsPerSecond"] for o in timed)
        slower = [
            o.workload.name for o in timed if o.python["podsPerSecond"] < o.go["podsPerSecond"]
        ]
        threads = (
            "both single-threaded"
            if parallelism == 1
            else f"topospread's one thread beside Go's {parallelism} Filter/Score workers"
        )
        verdict = (
            "topospread is at least as fast as Go on every workload"
            if not slower
            else "topospread is slower than Go on " + ", ".join(slower)
        )
        yield (
            f"topospread ÷ Go pods/s ranges from {ratios[0]:,.2f} to {ratios[-1]:,.2f} on this "
            f"machine, {threads}: {verdict}."
        )
        yield ""
    thresholds = [o for o in timed if o.workload.threshold]
    below = [o for o in thresholds if o.python["podsPerSecond"] < (o.workload.threshold or 0)]
    if thresholds:
        if below:
            names = ", ".join(
                f"{o.workload.name} {_rate(o.python['podsPerSecond'])} < {o.workload.threshold}"
                for o in below
            )
            yield f"topospread is below scheduler_perf's threshold on: {names} pods/s."
        else:
            yield "topospread reaches every scheduler_perf threshold at these sizes."
        go_below = [o for o in thresholds if o.go["podsPerSecond"] < (o.workload.threshold or 0)]
        if go_below:
            names = ", ".join(f"{o.workload.name} {_rate(o.go['podsPerSecond'])}" for o in go_below)
            yield (
                f"Upstream's own cycle at parallelism {parallelism} on this machine is below "
                f"them too: {names} pods/s."
            )
        yield (
            "The thresholds are for the full sizes (5,000 nodes) and for the whole "
            "kube-scheduler with 16-way parallelism (scheduler_perf's CI machines); a "
            "sequential or scaled-down run is not held to them, but the ratio to Go is."
        )
        yield ""
    differing = [o for o in outcomes if not o.identical]
    if differing:
        yield "Placements differ (a faithfulness bug in topospread):"
        yield ""
        yield from (f"* {o.workload.name}: first difference at {o.mismatch}" for o in differing)
    elif any(o.tie_mismatch for o in outcomes):
        yield (
            f"At parallelism {parallelism} Go's workers break ties in the order they finish, "
            "so placements differing there are not a verdict; parity is checked at "
            "parallelism 1. Where no tie was broken differently, both placed every pod alike."
        )
    else:
        yield "Both engines placed every pod of every workload on the same node."
    worded = [o for o in outcomes if o.message_mismatch]
    if worded:
        yield ""
        yield "FailedScheduling messages of pods unschedulable in both engines differ:"
        yield ""
        yield from (f"* {o.workload.name}: {o.message_mismatch}" for o in worded)
    yield ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale",
        type=float,
        default=DEFAULT_SCALE,
        help=f"multiply every count (nodes and pods) by this (default {DEFAULT_SCALE})",
    )
    parser.add_argument(
        "--pod-scale",
        type=float,
        default=DEFAULT_POD_SCALE,
        help="multiply the pod counts (existing and placed) once more by this "
        f"(default {DEFAULT_POD_SCALE})",
    )
    parser.add_argument(
        "--workloads",
        nargs="*",
        metavar="NAME",
        help="run only these workloads (prefix match): " + ", ".join(w.name for w in WORKLOADS),
    )
    parser.add_argument("--oracle", help="the oracle binary (default oracle/bin/oracle)")
    parser.add_argument("--output", default=str(REPO / "BENCHMARKS.md"), help="the report")
    parser.add_argument("--keep", help="keep workloads and placement files in this directory")
    parser.add_argument(
        "--parallelism",
        type=int,
        default=1,
        help="Go's parallelism (oracle bench --parallelism; default 1, where placements "
        "must be identical; above 1 only the rates are compared)",
    )
    parser.add_argument(
        "--worker", nargs=2, metavar=("WORKLOAD", "PLACEMENTS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(python_worker(Path(args.worker[0]), Path(args.worker[1]))))
        return 0
    if args.scale <= 0 or args.pod_scale <= 0:
        parser.error("--scale and --pod-scale must be positive")
    chosen = [
        w
        for w in WORKLOADS
        if not args.workloads or any(w.name.startswith(prefix) for prefix in args.workloads)
    ]
    if not chosen:
        parser.error("no workload matches --workloads")
    oracle = locate_oracle(args.oracle)
    if oracle is None:
        print("run.py: no oracle (build it with `bash oracle/build.sh`)", file=sys.stderr)
        return 2

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.monotonic()
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="topospread-bench-") as tmp:
        workdir = Path(args.keep) if args.keep else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        outcomes.extend(
            run_workload(
                workload, args.scale, args.pod_scale, oracle, workdir, log, args.parallelism
            )
            for workload in chosen
        )
    text = report(outcomes, command.strip(), started, machine(), args.parallelism)
    Path(args.output).write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(o.identical for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
