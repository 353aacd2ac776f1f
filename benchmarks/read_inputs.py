"""Reading speed: `topospread explain` beside `oracle explain` on kubectl-shaped captures.

Generates ``kubectl get nodes,pods -A -o yaml|json``-shaped Lists (nodes and running pods
with managedFields, status, conditions, images, as a real cluster returns them) of
1,000 nodes / 10,000 pods and 5,000 nodes / 50,000 pods, runs both programs on the same
files, and records CPU time (user+sys of the child, ``getrusage(RUSAGE_CHILDREN)``) and
peak RSS (``ru_maxrss``), each run repeated; the table goes into BENCHMARKS.md.

    python benchmarks/read_inputs.py [--sizes 1000x10000,5000x50000] [--repeat 3] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "oracle" / "bin" / "oracle"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
_CREATED = "2026-03-01T10:00:00Z"


def _managed(manager: str, operation: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        "time": _CREATED,
    }


def make_node(index: int) -> dict[str, Any]:
    name = f"ip-10-0-{index // 250}-{index % 250}.ec2.internal"
    zone = ZONES[index % len(ZONES)]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": "m5.2xlarge",
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": "us-east-1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m5.2xlarge",
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
    }
    conditions = [
        {
            "lastHeartbeatTime": _CREATED,
            "lastTransitionTime": _CREATED,
            "message": message,
            "reason": reason,
            "status": status,
            "type": kind,
        }
        for kind, status, reason, message in (
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": f"10.0.{index // 250}.{index % 250}",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": _CREATED,
            "labels": labels,
            "managedFields": [
                _managed(
                    "kubelet",
                    "Update",
                    {
                        "f:metadata": {
                            "f:annotations": {
                                ".": {},
                                "f:alpha.kubernetes.io/provided-node-ip": {},
                            },
                            "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
                        },
                        "f:spec": {"f:providerID": {}},
                    },
                ),
                _managed(
                    "kubelet",
                    "Update",
                    {
                        "f:status": {
                            "f:allocatable": {"f:cpu": {}, "f:memory": {}, "f:pods": {}},
                            "f:conditions": {
                                f'k:{{"type":"{c["type"]}"}}': {
                                    "f:lastHeartbeatTime": {},
                                    "f:message": {},
                                    "f:reason": {},
                                    "f:status": {},
                                }
                                for c in conditions
                            },
                            "f:images": {},
                            "f:nodeInfo": {"f:bootID": {}, "f:machineID": {}},
                        }
                    },
                ),
            ],
            "name": name,
            "resourceVersion": str(100000 + index),
            "uid": f"6f9b1c2e-{index:04x}-4d6a-9b1e-0c2d3e4f5a6b",
        },
        "spec": {"providerID": f"aws:///{zone}/i-0{index:016x}"},
        "status": {
            "addresses": [
                {"address": f"10.0.{index // 250}.{index % 250}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
                {"address": name, "type": "InternalDNS"},
            ],
            "allocatable": {
                "cpu": "7910m",
                "ephemeral-storage": "95551679124",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": "31482280Ki",
                "pods": "58",
            },
            "capacity": {
                "cpu": "8",
                "ephemeral-storage": "104845292Ki",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": "32504232Ki",
                "pods": "58",
            },
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [
                {
                    "names": [
                        f"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/image-{k}@sha256:{k:064x}",
                        f"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/image-{k}:v1.{k}.0",
                    ],
                    "sizeBytes": 30000000 + k * 1000,
                }
                for k in range(8)
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": f"{index:08x}-aaaa-bbbb-cccc-dddddddddddd",
                "containerRuntimeVersion": "containerd://1.7.11",
                "kernelVersion": "5.10.205-195.807.amzn2.x86_64",
                "kubeProxyVersion": "v1.37.1",
                "kubeletVersion": "v1.37.1",
                "machineID": f"ec2{index:029x}",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2",
                "systemUUID": f"ec2{index:029x}",
            },
        },
    }


def make_pod(index: int, node: str, rng: random.Random) -> dict[str, Any]:
    app = f"app-{index % 200}"
    rs = f"{app}-7d9f8c6b5"
    name = f"{rs}-{rng.randrange(36**5):05x}"
    labels = {"app": app, "pod-template-hash": "7d9f8c6b5", "tier": "backend"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/restartedAt": _CREATED},
            "creationTimestamp": _CREATED,
            "generateName": f"{rs}-",
            "labels": labels,
            "managedFields": [
                _managed(
                    "kube-controller-manager",
                    "Update",
                    {
                        "f:metadata": {
                            "f:generateName": {},
                            "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
                            "f:ownerReferences": {".": {}, f'k:{{"uid":"{index:08x}"}}': {}},
                        },
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"main"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:imagePullPolicy": {},
                                    "f:name": {},
                                    "f:ports": {
                                        ".": {},
                                        'k:{"containerPort":8080,"protocol":"TCP"}': {},
                                    },
                                    "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                                }
                            },
                            "f:dnsPolicy": {},
                            "f:topologySpreadConstraints": {},
                        },
                    },
                ),
                _managed(
                    "kubelet",
                    "Update",
                    {
                        "f:status": {
                            "f:conditions": {},
                            "f:containerStatuses": {},
                            "f:hostIP": {},
                            "f:phase": {},
                            "f:podIP": {},
                            "f:startTime": {},
                        }
                    },
                ),
            ],
            "name": name,
            "namespace": f"team-{index % 20}",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"{index % 200:08x}-1111-2222-3333-444444444444",
                }
            ],
            "resourceVersion": str(200000 + index),
            "uid": f"{index:08x}-5555-6666-7777-888888888888",
        },
        "spec": {
            "containers": [
                {
                    "env": [
                        {"name": "LOG_LEVEL", "value": "info"},
                        {"name": "PORT", "value": "8080"},
                    ],
                    "image": f"registry.example.com/{app}:1.4.2",
                    "imagePullPolicy": "IfNotPresent",
                    "name": "main",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "512Mi"},
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "volumeMounts": [
                        {
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "name": f"kube-api-access-{index % 1000:05d}",
                            "readOnly": True,
                        }
                    ],
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "nodeName": node,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
            ],
            "topologySpreadConstraints": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ],
            "volumes": [
                {
                    "name": f"kube-api-access-{index % 1000:05d}",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                    "name": "kube-root-ca.crt",
                                }
                            },
                        ],
                    },
                }
            ],
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": _CREATED,
                    "status": "True",
                    "type": kind,
                }
                for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{index:064x}",
                    "image": f"registry.example.com/{app}:1.4.2",
                    "imageID": f"registry.example.com/{app}@sha256:{index % 200:064x}",
                    "lastState": {},
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": _CREATED}},
                }
            ],
            "hostIP": "10.0.0.1",
            "phase": "Running",
            "podIP": f"10.1.{index // 250 % 250}.{index % 250}",
            "podIPs": [{"ip": f"10.1.{index // 250 % 250}.{index % 250}"}],
            "qosClass": "Burstable",
            "startTime": _CREATED,
        },
    }


def make_capture(nodes: int, pods: int, seed: int = 1) -> dict[str, Any]:
    """A ``kubectl get nodes,pods -A -o yaml``-shaped List."""
    rng = random.Random(seed)
    node_objects = [make_node(i) for i in range(nodes)]
    names = [n["metadata"]["name"] for n in node_objects]
    items = [*node_objects, *(make_pod(i, names[i % nodes], rng) for i in range(pods))]
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def incoming_pod() -> dict[str, Any]:
    pod = make_pod(10**7, "", random.Random(0))
    pod["spec"].pop("nodeName")
    pod["metadata"] = {"name": "incoming", "namespace": "team-0", "labels": {"app": "app-0"}}
    pod.pop("status")
    return pod


# -- files ---------------------------------------------------------------------------------------


def write_inputs(folder: Path, nodes: int, pods: int) -> dict[str, Path]:
    """The capture as YAML and JSON (as kubectl writes them) and the pod to place."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{nodes}x{pods}"
    paths = {
        "yaml": folder / f"cluster-{stem}.yaml",
        "json": folder / f"cluster-{stem}.json",
        "pod": folder / "pod.yaml",
    }
    if not all(p.exists() for p in paths.values()):
        capture = make_capture(nodes, pods)
        # kubectl -o json: four-space indentation; -o yaml: sigs.k8s.io/yaml, keys sorted,
        # block style, sequences not indented under their key.
        paths["json"].write_text(json.dumps(capture, indent=4) + "\n", encoding="utf-8")
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        with paths["yaml"].open("w", encoding="utf-8") as handle:
            yaml.dump(capture, handle, Dumper=dumper, default_flow_style=False, sort_keys=True)
        paths["pod"].write_text(
            yaml.safe_dump(incoming_pod(), default_flow_style=False), encoding="utf-8"
        )
    return paths


# -- measuring -----------------------------------------------------------------------------------


def measure_rss(command: list[str]) -> tuple[float, int]:
    """CPU seconds and peak RSS of one run, both from wait4's rusage of that child alone."""
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(command, stdout=null, stderr=subprocess.PIPE)
        assert process.stderr is not None
        err = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {err.decode(errors='replace')[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def help_time(repeat: int) -> tuple[float, float]:
    """Median CPU time (user+sys) of ``topospread --help`` and of a bare interpreter.

    CPU time, not wall time: on a shared machine the wall clock measures the load.
    """

    def median_cpu(command: list[str]) -> float:
        return statistics.median(measure_rss(command)[0] for _ in range(repeat))

    help_cpu = median_cpu([sys.executable, "-c", HELP_SCRIPT])
    baseline = median_cpu([sys.executable, "-c", "pass"])
    return help_cpu, baseline


HELP_SCRIPT = (
    "import sys; sys.argv = ['topospread', '--help']; from topospread.cli import main; main()"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000x10000,5000x50000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "read-inputs")
    parser.add_argument("--write", action="store_true", help="add the table to BENCHMARKS.md")
    args = parser.parse_args()
    if not ORACLE.exists():
        sys.exit(f"no oracle at {ORACLE}: bash oracle/build.sh")
    topospread = [sys.executable, "-c", "from topospread.cli import main; main()"]
    rows = []
    started = time.time()
    for size in args.sizes.split(","):
        nodes, pods = (int(x) for x in size.split("x"))
        paths = write_inputs(args.folder, nodes, pods)
        for form in ("yaml", "json"):
            mib = paths[form].stat().st_size / 2**20
            for name, program in (("topospread", topospread), ("oracle", [str(ORACLE)])):
                command = [*program, "explain", "--cluster", str(paths[form]),
                           "--pod", str(paths["pod"])]  # fmt: skip
                if name == "topospread":
                    command += ["-o", "json"]
                runs = [measure_rss(command) for _ in range(args.repeat)]
                cpu = sorted(r[0] for r in runs)
                rss = sorted(r[1] for r in runs)
                rows.append((f"{nodes:,} / {pods:,}", form.upper(), mib, name, cpu, rss))
                print(
                    rows[-1][:4], [round(c, 2) for c in cpu], [r // 2**20 for r in rss], flush=True
                )
    help_median, baseline = help_time(max(5, args.repeat))
    table = _table(rows, help_median, baseline, args, time.time() - started)
    print(table)
    if args.write:
        _write(table)


def _table(rows: list[Any], help_median: float, baseline: float, args: Any, seconds: float) -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    try:
        version = json.loads(
            subprocess.run([str(ORACLE), "version"], capture_output=True, text=True).stdout
        )
        go = str(version.get("kubernetesVersion", "?"))
    except (ValueError, AttributeError):
        go = "?"
    cpu_name = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lines = [
        "## Reading inputs: `topospread explain` beside `oracle explain` on kubectl captures",
        "",
        "Written by `benchmarks/read_inputs.py`: `kubectl get nodes,pods -A -o yaml|json`-shaped",
        "Lists (nodes and running pods with managedFields, status, conditions, images), the",
        "same files given to both programs, end to end (reading, decoding, defaulting,",
        "validation, one scheduling cycle, JSON output). CPU is user+sys of the child and peak",
        f"RSS its `ru_maxrss`, both from `wait4`; {args.repeat} runs each, min and median.",
        "",
        f"Command: `python benchmarks/read_inputs.py --sizes {args.sizes} --repeat {args.repeat}"
        " --write`",
        "",
        f"Machine: nproc = {os.cpu_count()}, CPU `{cpu_name}`, CPython "
        f"{platform.python_version()}, Linux {platform.release()}; shared with other work while"
        f" it ran. topospread at commit `{commit}`; oracle (kube-scheduler {go})."
        f" Total run time {seconds:,.0f} s.",
        "",
        "| nodes / pods | format | file MiB | program | CPU s min | CPU s median | peak RSS MiB min"
        " | peak RSS MiB median |",
        "|---|---|--:|---|--:|--:|--:|--:|",
    ]
    for size, form, mib, name, cpu, rss in rows:
        lines.append(
            f"| {size} | {form} | {mib:,.0f} | {name} | {cpu[0]:.2f} | "
            f"{statistics.median(cpu):.2f} | {rss[0] / 2**20:,.0f} | "
            f"{statistics.median(rss) / 2**20:,.0f} |"
        )
    lines += [
        "",
        f"`topospread --help`: {help_median * 1000:.0f} ms CPU (median of "
        f"{max(5, args.repeat)}), of which {baseline * 1000:.0f} ms is starting the "
        "interpreter itself (`python -c pass`); it imports neither NumPy nor any command "
        "module (`tests/cli/test_lazy_help.py`).",
        "",
    ]
    return "\n".join(lines)


def _write(table: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8")
    marker = "## Reading inputs:"
    if marker in text:
        start = text.index(marker)
        end = text.find("\n## ", start + len(marker))
        text = text[:start] + table + (text[end + 1 :] if end != -1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + table
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
