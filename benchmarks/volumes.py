"""Volume plugins' speed: `topospread explain` beside `oracle explain` on clusters with storage.

Generates ``kubectl get nodes,pods,pv,pvc,storageclasses,csinodes,csidrivers,
csistoragecapacities,volumeattachments -A -o json``-shaped Lists (the nodes and running pods
of ``read_inputs.py``, with managedFields, status, conditions, images) of 1,000 nodes /
10,000 pods and 5,000 nodes / 50,000 pods in 3 zones, where about half the pods mount a
PersistentVolumeClaim bound to a volume of the pod's node:

* 70% CSI EBS volumes (``ebs.csi.aws.com``, class ``gp3``) with zone node affinity,
* 10% in-tree ``awsElasticBlockStore`` and 5% in-tree ``gcePersistentDisk`` volumes (classes
  ``gp2``, ``standard-gce``), which the CSINodes' ``storage.alpha.kubernetes.io/migrated-
  plugins`` annotation has the scheduler translate (their zone keys renamed),
* 15% node-local CSI volumes (``local.csi.openebs.io``, class ``fast-local``,
  WaitForFirstConsumer, ``storageCapacity: true``) with hostname node affinity;

a CSINode per node (EBS ``allocatable.count`` 25, every tenth node only 4; GCE PD 15), a
VolumeAttachment per attached EBS / GCE PD volume, six StorageClasses (Immediate and
WaitForFirstConsumer), an Available static ``fast-local`` volume on every fourth node
(50-200Gi) and a ``fast-local`` CSIStorageCapacity per node (20-500Gi). The incoming pod
has a bound ReadWriteOncePod claim (an in-tree EBS volume in zone ``us-east-1b``, migrated), a
WaitForFirstConsumer ``fast-local`` claim of 100Gi (matched with a static volume, or
provisioned where the node's capacity holds it) and two topology spread constraints (zone
DoNotSchedule, hostname ScheduleAnyway).

Both programs read the same files; the two answers must agree (node list, per-node filter
verdicts, scores, selected and tied nodes, message: the oracle comparison of
``tests/differential``) before a number is reported. CPU time is user+sys of the child
and peak RSS its ``ru_maxrss``, from ``wait4``; each run repeated; the table goes into
BENCHMARKS.md.

    python benchmarks/volumes.py [--sizes 1000x10000,5000x50000] [--repeat 3] [--write]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from read_inputs import ZONES, make_node, make_pod

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "oracle" / "bin" / "oracle"
_CREATED = "2026-03-01T10:00:00Z"
REGION = "us-east-1"

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
LOCAL = "local.csi.openebs.io"
EBS_ZONE = "topology.ebs.csi.aws.com/zone"
GCE_ZONE = "topology.gke.io/zone"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
INCOMING_ZONE = ZONES[1]  # the zone with the fewest app-0 pods: the spread allows it
SCRATCH_GI = 100

Obj = dict[str, Any]


def _uid(kind: int, index: int) -> str:
    high, middle, low = index >> 16 & 0xFFFF, index >> 4 & 0xFFF, index & 0xF
    return f"{kind:08x}-{high:04x}-4{middle:03x}-a{low:03x}-{index:012x}"


def _meta(name: str, namespace: str | None = None, **extra: Any) -> Obj:
    meta: Obj = {"creationTimestamp": _CREATED, "name": name, "resourceVersion": "1", **extra}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


# -- the volume kind of each existing claim -----------------------------------------------------


def volume_kind(index: int) -> str:
    """``gp3`` (CSI EBS), ``gp2`` (in-tree EBS), ``gce`` (in-tree GCE PD) or ``local``."""
    slot = (index // 2) % 20
    if slot < 14:
        return "gp3"
    if slot < 16:
        return "gp2"
    if slot < 17:
        return "gce"
    return "local"


def has_claim(index: int, nodes: int) -> bool:
    """Half the pods, five of every node's ten."""
    return (index + index // nodes) % 2 == 0


_CLASS = {"gp3": "gp3", "gp2": "gp2", "gce": "standard-gce", "local": "fast-local"}
_PROVISIONER = {
    "gp3": EBS,
    "gp2": "kubernetes.io/aws-ebs",
    "gce": "kubernetes.io/gce-pd",
    "local": LOCAL,
}


def make_node_with_storage(index: int) -> Obj:
    node = make_node(index)
    zone = ZONES[index % len(ZONES)]
    labels = node["metadata"]["labels"]
    labels[EBS_ZONE] = zone
    labels[GCE_ZONE] = zone
    labels["topology.local.csi.openebs.io/node"] = labels[HOSTNAME]
    node["metadata"]["annotations"]["csi.volume.kubernetes.io/nodeid"] = json.dumps(
        {
            EBS: f"i-0{index:016x}",
            GCE: f"projects/p/zones/{zone}/instances/n{index}",
            LOCAL: labels[HOSTNAME],
        }
    )
    return node


def make_csinode(index: int, name: str) -> Obj:
    # Every tenth node allows only 4 EBS volumes: with as many in use, the incoming pod's
    # EBS volume is one too many there.
    ebs_count = 4 if index % 10 == 3 else 25
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {
            **_meta(name),
            "annotations": {MIGRATED: "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": name,
                    "uid": f"6f9b1c2e-{index:04x}-4d6a-9b1e-0c2d3e4f5a6b",
                }
            ],
            "uid": _uid(1, index),
        },
        "spec": {
            "drivers": [
                {
                    "allocatable": {"count": ebs_count},
                    "name": EBS,
                    "nodeID": f"i-0{index:016x}",
                    "topologyKeys": [EBS_ZONE, "kubernetes.io/os"],
                },
                {
                    "allocatable": {"count": 15},
                    "name": GCE,
                    "nodeID": f"projects/p/zones/{ZONES[index % 3]}/instances/n{index}",
                    "topologyKeys": [GCE_ZONE],
                },
                {
                    "name": LOCAL,
                    "nodeID": name,
                    "topologyKeys": ["topology.local.csi.openebs.io/node"],
                },
            ]
        },
    }


def make_claim(
    name: str,
    namespace: str,
    uid: str,
    class_name: str,
    size_gi: int,
    volume: str | None,
    node: str | None,
    provisioner: str,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
) -> Obj:
    annotations = {
        "volume.beta.kubernetes.io/storage-provisioner": provisioner,
        "volume.kubernetes.io/storage-provisioner": provisioner,
    }
    if volume is not None:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
        annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
    if node is not None:
        annotations["volume.kubernetes.io/selected-node"] = node
    claim: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            **_meta(name, namespace),
            "annotations": annotations,
            "finalizers": ["kubernetes.io/pvc-protection"],
            "uid": uid,
        },
        "spec": {
            "accessModes": list(modes),
            "resources": {"requests": {"storage": f"{size_gi}Gi"}},
            "storageClassName": class_name,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }
    if volume is not None:
        claim["spec"]["volumeName"] = volume
        claim["status"] = {
            "accessModes": list(modes),
            "capacity": {"storage": f"{size_gi}Gi"},
            "phase": "Bound",
        }
    return claim


def _affinity(key: str, value: str) -> Obj:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
            ]
        }
    }


def make_volume(
    kind: str,
    name: str,
    index: int,
    zone: str,
    node: str,
    size_gi: int,
    claim: tuple[str, str, str] | None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
) -> Obj:
    """A PersistentVolume of ``kind``, bound to ``claim`` (namespace, name, uid) or Available."""
    spec: Obj = {
        "accessModes": list(modes),
        "capacity": {"storage": f"{size_gi}Gi"},
        "persistentVolumeReclaimPolicy": "Delete",
        "storageClassName": _CLASS[kind],
        "volumeMode": "Filesystem",
    }
    labels: Obj = {}
    annotations: Obj = {"pv.kubernetes.io/provisioned-by": _PROVISIONER[kind]}
    if kind == "gp3":
        spec["csi"] = {
            "driver": EBS,
            "fsType": "ext4",
            "volumeAttributes": {
                "storage.kubernetes.io/csiProvisionerIdentity": "1740000000000-7-ebs.csi.aws.com"
            },
            "volumeHandle": f"vol-0{index:016x}",
        }
        spec["nodeAffinity"] = _affinity(EBS_ZONE, zone)
    elif kind == "gp2":
        labels = {ZONE: zone, "topology.kubernetes.io/region": REGION}
        spec["awsElasticBlockStore"] = {
            "fsType": "ext4",
            "volumeID": f"aws://{zone}/vol-0{index:016x}",
        }
        spec["nodeAffinity"] = _affinity(ZONE, zone)
    elif kind == "gce":
        labels = {ZONE: zone, "topology.kubernetes.io/region": REGION}
        spec["gcePersistentDisk"] = {"fsType": "ext4", "pdName": f"pd-{index:08x}"}
        spec["nodeAffinity"] = _affinity(ZONE, zone)
    else:
        spec["csi"] = {
            "driver": LOCAL,
            "fsType": "xfs",
            "volumeAttributes": {"openebs.io/volgroup": "lvmvg"},
            "volumeHandle": f"pvc-{index:08x}",
        }
        spec["nodeAffinity"] = _affinity("topology.local.csi.openebs.io/node", node)
    status = {"phase": "Available"}
    if claim is not None:
        namespace, claim_name, uid = claim
        spec["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "name": claim_name,
            "namespace": namespace,
            "resourceVersion": "1",
            "uid": uid,
        }
        status = {"phase": "Bound"}
    metadata = {
        **_meta(name),
        "annotations": annotations,
        "uid": _uid(2, index),
        "finalizers": ["kubernetes.io/pv-protection"],
    }
    if labels:
        metadata["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def make_attachment(volume: str, attacher: str, node: str, index: int) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {
            **_meta(f"csi-{index:064x}"),
            "uid": _uid(3, index),
            "finalizers": ["external-attacher/ebs-csi-aws-com"],
        },
        "spec": {
            "attacher": attacher,
            "nodeName": node,
            "source": {"persistentVolumeName": volume},
        },
        "status": {"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdaa"}},
    }


def storage_classes() -> list[Obj]:
    def sc(name: str, provisioner: str, mode: str, **extra: Any) -> Obj:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": _meta(name),
            "provisioner": provisioner,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": mode,
            **extra,
        }

    gp3 = sc(
        "gp3", EBS, "WaitForFirstConsumer", parameters={"type": "gp3"}, allowVolumeExpansion=True
    )
    gp3["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return [
        gp3,
        sc("gp3-immediate", EBS, "Immediate", parameters={"type": "gp3"}),
        sc("gp2", "kubernetes.io/aws-ebs", "WaitForFirstConsumer", parameters={"type": "gp2"}),
        sc("standard-gce", "kubernetes.io/gce-pd", "Immediate", parameters={"type": "pd-standard"}),
        sc(
            "fast-local",
            LOCAL,
            "WaitForFirstConsumer",
            parameters={"storage": "lvm", "volgroup": "lvmvg"},
        ),
        sc("local-static", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
    ]


def csi_drivers() -> list[Obj]:
    def driver(name: str, attach: bool, capacity: bool) -> Obj:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": _meta(name),
            "spec": {
                "attachRequired": attach,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "podInfoOnMount": False,
                "requiresRepublish": False,
                "seLinuxMount": False,
                "storageCapacity": capacity,
                "volumeLifecycleModes": ["Persistent"],
            },
        }

    return [driver(EBS, True, False), driver(GCE, True, False), driver(LOCAL, False, True)]


def make_capacity(index: int, node: str, rng: random.Random) -> Obj:
    free = rng.randrange(20, 501)
    capacity: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {**_meta(f"csisc-{index:05x}", "openebs"), "uid": _uid(4, index)},
        "capacity": f"{free}Gi",
        "nodeTopology": {"matchLabels": {"topology.local.csi.openebs.io/node": node}},
        "storageClassName": "fast-local",
    }
    if index % 5 == 0:
        capacity["maximumVolumeSize"] = f"{max(20, free - 60)}Gi"
    return capacity


def make_capture(nodes: int, pods: int, seed: int = 1) -> Obj:
    """The cluster: nodes, pods, and every storage object the volume plugins read."""
    rng = random.Random(seed)
    node_objects = [make_node_with_storage(i) for i in range(nodes)]
    names = [n["metadata"]["name"] for n in node_objects]
    pod_objects: list[Obj] = []
    claims: list[Obj] = []
    volumes: list[Obj] = []
    attachments: list[Obj] = []
    for i in range(pods):
        node_index = i % nodes
        node, zone = names[node_index], ZONES[node_index % len(ZONES)]
        pod = make_pod(i, node, rng)
        if has_claim(i, nodes):
            kind = volume_kind(i)
            namespace = pod["metadata"]["namespace"]
            claim_name = f"data-{pod['metadata']['name']}"
            uid, volume = _uid(5, i), f"pvc-{_uid(5, i)}"
            size = (10, 20, 50, 100)[i % 4]
            claims.append(
                make_claim(
                    claim_name, namespace, uid, _CLASS[kind], size, volume, node, _PROVISIONER[kind]
                )
            )
            volumes.append(
                make_volume(kind, volume, i, zone, node, size, (namespace, claim_name, uid))
            )
            if kind != "local":
                attacher = GCE if kind == "gce" else EBS
                attachments.append(make_attachment(volume, attacher, node, i))
            pod["spec"]["volumes"].append(
                {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
            )
            pod["spec"]["containers"][0]["volumeMounts"].append(
                {"mountPath": "/data", "name": "data"}
            )
        pod_objects.append(pod)
    for n in range(0, nodes, 4):
        # Available static fast-local volumes, 50-200Gi: the incoming 100Gi claim fits some.
        size = (50, 100, 150, 200)[n // 4 % 4]
        volumes.append(
            make_volume("local", f"local-pv-{n:05x}", 10**7 + n, ZONES[n % 3], names[n], size, None)
        )
    # The incoming pod's bound claim: an in-tree EBS volume (translated on every node, its
    # zone label read by VolumeZone) in INCOMING_ZONE, ReadWriteOncePod.
    incoming_uid, incoming_pv = _uid(6, 0), "pvc-incoming-data"
    claims.append(
        make_claim(
            "data-incoming",
            "team-0",
            incoming_uid,
            "gp2",
            30,
            incoming_pv,
            None,
            "kubernetes.io/aws-ebs",
            ("ReadWriteOncePod",),
        )
    )
    volumes.append(
        make_volume(
            "gp2",
            incoming_pv,
            2 * 10**7,
            INCOMING_ZONE,
            "",
            30,
            ("team-0", "data-incoming", incoming_uid),
            ("ReadWriteOncePod",),
        )
    )
    # Its WaitForFirstConsumer claim, not yet bound.
    claims.append(
        make_claim(
            "scratch-incoming", "team-0", _uid(6, 1), "fast-local", SCRATCH_GI, None, None, LOCAL
        )
    )
    items = [
        *node_objects,
        *pod_objects,
        *volumes,
        *claims,
        *storage_classes(),
        *(make_csinode(i, names[i]) for i in range(nodes)),
        *csi_drivers(),
        *(make_capacity(i, names[i], rng) for i in range(nodes)),
        *attachments,
    ]
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def incoming_pod() -> Obj:
    pod = make_pod(10**7, "", random.Random(0))
    pod["spec"].pop("nodeName")
    pod["metadata"] = {"name": "incoming", "namespace": "team-0", "labels": {"app": "app-0"}}
    pod.pop("status")
    spec = pod["spec"]
    spec["volumes"] += [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-incoming"}},
        {"name": "scratch", "persistentVolumeClaim": {"claimName": "scratch-incoming"}},
    ]
    spec["containers"][0]["volumeMounts"] += [
        {"mountPath": "/data", "name": "data"},
        {"mountPath": "/scratch", "name": "scratch"},
    ]
    spec["topologySpreadConstraints"] = [
        {
            "labelSelector": {"matchLabels": {"app": "app-0"}},
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
        },
        {
            "labelSelector": {"matchLabels": {"app": "app-0"}},
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "ScheduleAnyway",
        },
    ]
    return pod


# -- files ---------------------------------------------------------------------------------------


def write_inputs(folder: Path, nodes: int, pods: int, formats: tuple[str, ...]) -> dict[str, Path]:
    """The capture as kubectl writes it (JSON: four-space indentation; YAML: keys sorted)."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{nodes}x{pods}"
    paths = {form: folder / f"volumes-{stem}.{form}" for form in formats}
    paths["pod"] = folder / "volumes-pod.yaml"
    if not all(p.exists() for p in paths.values()):
        capture = make_capture(nodes, pods)
        if "json" in paths:
            paths["json"].write_text(json.dumps(capture, indent=4) + "\n", encoding="utf-8")
        if "yaml" in paths:
            dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
            with paths["yaml"].open("w", encoding="utf-8") as handle:
                yaml.dump(capture, handle, Dumper=dumper, default_flow_style=False, sort_keys=True)
        paths["pod"].write_text(
            yaml.safe_dump(incoming_pod(), default_flow_style=False), encoding="utf-8"
        )
    return paths


# -- measuring -----------------------------------------------------------------------------------


def measure(command: list[str], output: Path) -> tuple[float, int]:
    """CPU seconds and peak RSS of one run, both from wait4's rusage of that child alone;
    its stdout goes to ``output``."""
    with output.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        assert process.stderr is not None
        err = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {err.decode(errors='replace')[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def agreement(ours: Path, theirs: Path) -> tuple[list[str], Obj]:
    """The differences between the two answers as the differential tests compare them, and
    a summary of upstream's answer."""
    from topospread.testing.scenarios import differences, upstream_result

    python = upstream_result(json.loads(ours.read_text(encoding="utf-8")))
    upstream = upstream_result(json.loads(theirs.read_text(encoding="utf-8")))
    verdicts: dict[str, int] = {}
    for node in upstream["nodes"]:
        code = (node.get("filter") or {}).get("code", "Success")
        plugin = (node.get("filter") or {}).get("plugin") or ""
        key = f"{code} {plugin}".strip()
        verdicts[key] = verdicts.get(key, 0) + 1
    summary = {
        "selectedNode": upstream.get("selectedNode"),
        "tiedNodes": len(upstream.get("tiedNodes") or []),
        "verdicts": verdicts,
    }
    return differences(python, upstream), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000x10000,5000x50000")
    parser.add_argument("--formats", default="json", help="json, yaml or json,yaml")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "volumes")
    parser.add_argument("--write", action="store_true", help="add the table to BENCHMARKS.md")
    parser.add_argument(
        "--source",
        type=Path,
        default=ROOT / "src",
        help="the topospread sources to time (first on PYTHONPATH; default: this checkout's)",
    )
    args = parser.parse_args()
    # The installed topospread may be another checkout's: time the sources asked for.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(args.source.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    sys.path.insert(0, str(args.source.resolve()))
    if not ORACLE.exists():
        sys.exit(f"no oracle at {ORACLE}: bash oracle/build.sh")
    formats = tuple(args.formats.split(","))
    topospread = [sys.executable, "-c", "from topospread.cli import main; main()"]
    rows = []
    summaries = []
    load = os.getloadavg()[0]
    commit = _commit(args)
    started = time.time()
    for size in args.sizes.split(","):
        nodes, pods = (int(x) for x in size.split("x"))
        paths = write_inputs(args.folder, nodes, pods, formats)
        for form in formats:
            mib = paths[form].stat().st_size / 2**20
            answers = {}
            runs: dict[str, list[tuple[float, int]]] = {"topospread": [], "oracle": []}
            for attempt in range(args.repeat):
                # Alternate the programs, so that a change in the machine's load falls on both.
                for name, program in (("topospread", topospread), ("oracle", [str(ORACLE)])):
                    command = [
                        *program,
                        "explain",
                        "--cluster",
                        str(paths[form]),
                        "--pod",
                        str(paths["pod"]),
                    ]
                    if name == "topospread":
                        command += ["-o", "json"]
                    answers[name] = args.folder / f"answer-{name}-{nodes}x{pods}-{form}.json"
                    runs[name].append(measure(command, answers[name]))
                    print(size, form, name, attempt, f"{runs[name][-1][0]:.2f} s CPU", flush=True)
                if attempt == 0:
                    problems, summary = agreement(answers["topospread"], answers["oracle"])
                    if problems:
                        sys.exit("topospread disagrees with the oracle:\n" + "\n".join(problems))
                    summaries.append((f"{nodes:,} / {pods:,}", summary))
                    print("answers agree:", summary, flush=True)
            for name in ("topospread", "oracle"):
                cpu = sorted(r[0] for r in runs[name])
                rss = sorted(r[1] for r in runs[name])
                rows.append((f"{nodes:,} / {pods:,}", form.upper(), mib, name, cpu, rss))
    table = _table(rows, summaries, args, time.time() - started, load, commit)
    print(table)
    if args.write:
        _write(table)


def _commit(args: Any) -> str:
    """The checkout's commit, and what the timed sources have beside it."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True, cwd=ROOT
    ).stdout.split("\n")
    changed = sorted(line[3:] for line in dirty if line.strip())
    source = (
        "" if args.source.resolve() == (ROOT / "src").resolve() else f" (sources {args.source})"
    )
    if changed:
        source += " with uncommitted changes in " + ", ".join(f"`{p}`" for p in changed)
    return f"`{commit}`{source}"


def _table(
    rows: list[Any], summaries: list[Any], args: Any, seconds: float, load: float, commit: str
) -> str:
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
        "## Volume plugins: `topospread explain` beside `oracle explain` on clusters with storage",
        "",
        "Written by `benchmarks/volumes.py` (its docstring describes the clusters): kubectl-shaped",
        "Lists of nodes, running pods (half with a claim bound to a CSI EBS, migrated in-tree",
        "EBS / GCE PD or node-local CSI volume), PersistentVolumes, claims, StorageClasses, a",
        "CSINode per node with attach limits, CSIDrivers, a CSIStorageCapacity per node and",
        "VolumeAttachments; the incoming pod has a bound ReadWriteOncePod claim, a",
        "WaitForFirstConsumer claim to match with a static volume or provision, and zone and",
        "hostname spread constraints, so VolumeRestrictions, NodeVolumeLimits, VolumeBinding",
        "and VolumeZone all run their PreFilter and Filter. The same files go to both programs,",
        "end to end (reading, decoding, one scheduling cycle, JSON output); both answers were",
        "checked identical (node list, per-node filter verdicts, scores, selected and tied",
        "nodes, message) before timing was kept. CPU is user+sys of the child and peak RSS its",
        f"`ru_maxrss`, both from `wait4`; {args.repeat} runs each, the two programs alternating,",
        "min and median.",
        "",
        f"Command: `python benchmarks/volumes.py --sizes {args.sizes} --formats {args.formats}"
        f" --repeat {args.repeat} --write`",
        "",
        f"Machine: nproc = {os.cpu_count()}, CPU `{cpu_name}`, CPython "
        f"{platform.python_version()}, `{' '.join(platform.uname())}`; shared with other work"
        f" (load average {load:.1f} when the run started). topospread at commit {commit};"
        f" oracle (kube-scheduler {go}). Total run time {seconds:,.0f} s.",
        "",
        "| nodes / pods | format | file MiB | program | CPU s min | CPU s median | peak RSS MiB min"
        " | peak RSS MiB median | CPU ÷ oracle (median) |",
        "|---|---|--:|---|--:|--:|--:|--:|--:|",
    ]
    medians = {(r[0], r[1], r[3]): statistics.median(r[4]) for r in rows}
    for size, form, mib, name, cpu, rss in rows:
        ratio = statistics.median(cpu) / medians[(size, form, "oracle")]
        lines.append(
            f"| {size} | {form} | {mib:,.0f} | {name} | {cpu[0]:.2f} | "
            f"{statistics.median(cpu):.2f} | {rss[0] / 2**20:,.0f} | "
            f"{statistics.median(rss) / 2**20:,.0f} | {ratio:.2f} |"
        )
    lines += ["", "Upstream's answers (the same as topospread's):", ""]
    for size, summary in summaries:
        verdicts = ", ".join(
            f"{count:,} {key}" for key, count in sorted(summary["verdicts"].items())
        )
        lines.append(
            f"- {size}: selected `{summary['selectedNode']}` ({summary['tiedNodes']} tied); "
            f"{verdicts}"
        )
    lines.append("")
    return "\n".join(lines)


def _write(table: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8")
    marker = "## Volume plugins:"
    if marker in text:
        start = text.index(marker)
        end = text.find("\n## ", start + len(marker))
        text = text[:start] + table + (text[end + 1 :] if end != -1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + table
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
