"""Microseconds per pod the scheduler's pod informer spends decoding, by case.

    python benchmarks/pod_decode.py [--repeat 9] [--round 5000]

The pod is the e2e benchmark's (scheduler_perf's pod-with-topology-spreading.yaml) as the
API server stores it (defaults, a managedFields entry), replicas of it differing in name
and uid; the Nodes are the e2e benchmark's. Cases:

- a new pod decoded whole (``decode_object``);
- a new replica decoded from its sibling (``PodDecoder``: same namespace, labels, spec);
- a bind's report decoded from the version before it (``decode_pod_update``);
- the whole pod informer path of that report: ``orjson.loads`` and ``Scheduler.on_update``
  (the cache and the queue), with the scheduler's garbage collector settings.

Each figure is the best of ``--repeat`` rounds of ``--round`` pods (min), on one core.
"""

from __future__ import annotations

import argparse
import copy
import gc
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from topospread.client.source import NODES, PODS
from topospread.client.transport import FakeTransport, Response
from topospread.model.decode import decode_object, decode_pod_update
from topospread.scheduler.cache import PodDecoder
from topospread.scheduler.heap import HeapKeeper
from topospread.scheduler.options import options_from_document
from topospread.scheduler.scheduler import Scheduler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scheduler_e2e import perf_node, spreading_pod


def stored_pod(index: int) -> dict[str, Any]:
    """Replica ``index`` of the e2e benchmark's pod, as the API server returns it."""
    doc = spreading_pod(index)
    doc["metadata"].update(
        uid=f"0f7c5a0e-1234-4a4b-9c9c-{index:012d}",
        resourceVersion=str(1000 + index),
        creationTimestamp="2026-11-28T00:00:00Z",
        managedFields=[
            {
                "manager": "python",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-11-28T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:color": {}}}},
            }
        ],
    )
    spec = doc["spec"]
    spec["containers"][0].update(
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
        imagePullPolicy="IfNotPresent",
    )
    spec.update(
        restartPolicy="Always",
        terminationGracePeriodSeconds=30,
        dnsPolicy="ClusterFirst",
        securityContext={},
        schedulerName="topospread",
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        priority=0,
        tolerations=[
            {
                "key": f"node.kubernetes.io/{taint}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for taint in ("not-ready", "unreachable")
        ],
    )
    doc["status"] = {"phase": "Pending", "qosClass": "Guaranteed"}
    return doc


def bound(doc: dict[str, Any], node: str) -> dict[str, Any]:
    """The report of ``doc``'s bind to ``node``."""
    new = copy.deepcopy(doc)
    new["spec"]["nodeName"] = node
    new["metadata"]["resourceVersion"] = str(int(new["metadata"]["resourceVersion"]) + 50_000)
    new["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-28T00:00:01Z"}
    ]
    return new


def node(index: int) -> dict[str, Any]:
    doc = perf_node(index)
    doc["metadata"]["resourceVersion"] = "1"
    return doc


def best(repeat: int, size: int, run: Callable[[], object]) -> float:
    """µs per call: the best of ``repeat`` rounds of ``size`` calls."""
    return min(timeit.repeat(run, number=size, repeat=repeat)) / size * 1e6


def informer_path(repeat: int, size: int) -> float:
    """µs per bind report through ``orjson.loads`` and ``Scheduler.on_update``."""
    options = options_from_document(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "topospread"}],
        },
        "benchmark",
    )
    heap = HeapKeeper()
    heap.started()
    rounds = []
    for _ in range(repeat):
        scheduler = Scheduler(FakeTransport(lambda _: Response(201, b"{}")), options, seed=1)
        for index in range(size):
            scheduler.on_add(NODES, node(index))
        pods = [stored_pod(index) for index in range(size)]
        for pod in pods:
            scheduler.on_add(PODS, pod)
        lines = [
            orjson.dumps({"type": "MODIFIED", "object": bound(pod, f"scheduler-perf-{index}")})
            for index, pod in enumerate(pods)
        ]
        heap.synced()
        began = time.process_time()
        for old, line in zip(pods, lines, strict=True):
            scheduler.on_update(PODS, old, orjson.loads(line)["object"])
        rounds.append(time.process_time() - began)
        gc.unfreeze()
        if len(scheduler.cache.pods) != size or scheduler.queue.pods():
            raise SystemExit("the bind reports did not all reach the cache")
    return min(rounds) / size * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--round", type=int, default=5_000, dest="size")
    options = parser.parse_args(argv)
    repeat, size = options.repeat, options.size
    first, second = stored_pod(1), stored_pod(2)
    first_pod = decode_object(first)
    second_pod = decode_object(second)
    report = bound(second, "scheduler-perf-2")
    decoder = PodDecoder()
    decoder.decode("bench/spreading-pod-1", first)
    assert decoder.decode("bench/spreading-pod-2", second) == second_pod
    rows = [
        ("a new pod, decoded whole", best(repeat, size, lambda: decode_object(second))),
        (
            "a new replica, from its sibling",
            best(repeat, size, lambda: decode_pod_update(second, first, first_pod)),
        ),
        (
            "a bind's report, from the version before",
            best(repeat, size, lambda: decode_pod_update(report, second, second_pod)),
        ),
        (
            "a bind's report, JSON to cache and queue",
            informer_path(max(1, repeat // 3), size),
        ),
    ]
    print(f"python {sys.version.split()[0]}; µs per pod, best of {repeat} × {size}")
    for name, micros in rows:
        print(f"{micros:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
