"""``topospread explain`` end to end: bundled examples, JSON shape, and bad input."""

from __future__ import annotations

import json
import os
from contextlib import chdir
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread import KUBERNETES_VERSION
from topospread.cli.commands import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "topospread" / "examples"
INVALID = ROOT / "tests" / "data" / "invalid"
BROKEN = ROOT / "tests" / "data" / "broken"
ONE = EXAMPLES / "one-constraint"
UPDATE_GOLDEN = os.environ.get("TOPOSPREAD_UPDATE_GOLDEN") == "1"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "pod.yaml").exists())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_each_bundled_example_prints_its_golden_explanation(name: str) -> None:
    code, out, err = run("explain", "--example", name)
    assert code == 0, err
    golden = EXAMPLES / name / "explain.out"
    if UPDATE_GOLDEN:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_examples_lists_every_bundled_example_with_its_summary() -> None:
    code, out, _ = run("examples")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == EXAMPLE_NAMES
    assert "zoneB" in out


def test_json_output_has_the_documented_shape_and_lists_nodes_in_input_order() -> None:
    code, out, _ = run(
        "explain",
        "--cluster",
        str(ONE / "cluster.yaml"),
        "--pod",
        str(ONE / "pod.yaml"),
        "--output",
        "json",
    )
    assert code == 0
    document = json.loads(out)
    assert document["pod"] == "default/mypod"
    assert document["kubernetesVersion"] == KUBERNETES_VERSION
    assert [n["name"] for n in document["nodes"]] == ["node1", "node2", "node3", "node4"]
    verdicts = document["nodes"][0].pop("verdicts")
    assert verdicts["PodTopologySpread"] == {
        "code": "Unschedulable",
        "reasons": ["node(s) didn't match pod topology spread constraints"],
    }
    assert verdicts["TaintToleration"] == {"code": "Success", "reasons": []}
    assert document["nodes"][0] == {
        "name": "node1",
        "filter": {
            "code": "Unschedulable",
            "plugin": "PodTopologySpread",
            "reasons": ["node(s) didn't match pod topology spread constraints"],
        },
        "scores": {},
        "totalScore": None,
    }
    assert document["nodes"][2]["filter"] == {"code": "Success", "plugin": None, "reasons": []}
    # NodeResourcesFit 96 × 1 + TaintToleration 100 × 3 on node3; node4 has one pod less.
    # DynamicResources and VolumeBinding score 0 without claims or volumes, as upstream.
    assert document["nodes"][2]["scores"] == {
        "TaintToleration": 100,
        "NodeResourcesFit": 96,
        "ImageLocality": 0,
        "DynamicResources": 0,
        "VolumeBinding": 0,
    }
    assert document["nodes"][2]["totalScore"] == 396
    assert document["nodes"][3]["totalScore"] == 397
    assert document["selectedNode"] == "node4"
    assert document["tiedNodes"] == ["node4"]
    assert document["message"] is None


def test_a_pending_pod_reports_the_kube_scheduler_message_in_json() -> None:
    folder = EXAMPLES / "conflicting-constraints"
    code, out, _ = run(
        "explain",
        "--cluster",
        str(folder / "cluster.yaml"),
        "--pod",
        str(folder / "pod.yaml"),
        "-o",
        "json",
    )
    assert code == 0
    document = json.loads(out)
    assert document["selectedNode"] is None
    assert document["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
        " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    assert document["preemption"] == {"nominatedNode": None, "victims": {}, "tiedNodes": []}


def test_scores_are_reported_for_feasible_nodes_only_and_weighted_in_the_total() -> None:
    code, out, _ = run("explain", "--example", "system-defaults", "-o", "json")
    assert code == 0
    nodes = {n["name"]: n for n in json.loads(out)["nodes"]}
    assert nodes["node-b2"]["scores"] == {
        "TaintToleration": 100,
        "NodeResourcesFit": 97,
        "PodTopologySpread": 100,
        "ImageLocality": 0,
        "DynamicResources": 0,
        "VolumeBinding": 0,
    }
    assert nodes["node-b2"]["totalScore"] == 100 * 3 + 97 + 100 * 2


def test_several_cluster_files_are_read_in_order(tmp_path: Path) -> None:
    folder = EXAMPLES / "system-defaults"
    docs = (folder / "cluster.yaml").read_text(encoding="utf-8").split("---\n")
    runner = CliRunner()
    with chdir(tmp_path):
        Path("nodes.yaml").write_text("---\n".join(d for d in docs if "kind: Node" in d))
        Path("rest.yaml").write_text("---\n".join(d for d in docs if "kind: Node" not in d))
        result = runner.invoke(
            cli,
            [
                "explain",
                "--cluster",
                "nodes.yaml",
                "--cluster",
                "rest.yaml",
                "--pod",
                str(folder / "pod.yaml"),
                "-o",
                "json",
            ],
        )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["selectedNode"] == "node-b2"


def test_objects_of_other_kinds_are_skipped_with_a_note(tmp_path: Path) -> None:
    runner = CliRunner()
    with chdir(tmp_path):
        Path("extra.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n"
            # What a snapshot holds for simulate and audit: skipped without a note.
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
            "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n"
            "    metadata: {labels: {app: web}}\n"
            "    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}\n"
        )
        result = runner.invoke(
            cli,
            [
                "explain",
                "--cluster",
                str(ONE / "cluster.yaml"),
                "--cluster",
                "extra.yaml",
                "--pod",
                str(ONE / "pod.yaml"),
            ],
        )
    assert result.exit_code == 0
    assert "extra.yaml: skipped v1/ConfigMap cm (kind not used by the scheduler)" in result.stderr
    assert "Deployment" not in result.stderr


def test_missing_options_are_a_usage_error() -> None:
    code, _, err = run("explain", "--pod", str(ONE / "pod.yaml"))
    assert code == 2
    assert "pod/NAME), --cluster FILE (one or more) and --pod FILE" in err


def test_a_reference_to_a_deployment_is_refused_before_any_cluster_is_read() -> None:
    code, out, err = run("explain", "deployment/web", "-n", "shop")
    assert (code, out) == (2, "")
    assert "deployment/web: explain takes a pod (pod/NAME), not a deployment" in err


def test_standard_input_given_to_two_options_is_a_usage_error() -> None:
    code, out, err = run("explain", "--cluster", "-", "--pod", "-")
    assert (code, out) == (2, "")
    assert "standard input (-) is given 2 times (--cluster, --pod); it can be read once" in err


@pytest.mark.parametrize("case", sorted(p.name for p in BROKEN.iterdir() if p.is_dir()))
def test_broken_input_gives_one_clear_error_and_exit_status_2(case: str) -> None:
    folder = BROKEN / case
    cluster = (
        folder / "cluster.yaml" if (folder / "cluster.yaml").exists() else ONE / "cluster.yaml"
    )
    pod = (
        folder / "pod.yaml"
        if (folder / "pod.yaml").exists() or case == "missing-file"
        else ONE / "pod.yaml"
    )
    args = ["explain", "--cluster", str(cluster), "--pod", str(pod)]
    if (folder / "config.yaml").exists():
        args += ["--config", str(folder / "config.yaml")]
    code, out, err = run(*args)
    expected = (folder / "expect").read_text(encoding="utf-8").replace("{dir}", str(folder))
    assert code == 2
    assert out == ""
    assert err == expected
    assert "Traceback" not in err


def _invalid_cases() -> list[tuple[str, str]]:
    cases = []
    for path in sorted(INVALID.glob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        cases.append((path.name, first.removeprefix("# expect: ")))
    return cases


@pytest.mark.parametrize(("name", "expected"), _invalid_cases())
def test_invalid_objects_are_rejected_with_the_api_server_message(name: str, expected: str) -> None:
    path = INVALID / name
    if "kind: Node" in path.read_text(encoding="utf-8"):
        code, out, err = run("explain", "--cluster", str(path), "--pod", str(ONE / "pod.yaml"))
        node_name = path.read_text(encoding="utf-8").split("name: ", 1)[1].split()[0]
        assert err == f"{path}: Node {node_name}: {expected}\n"
    else:
        code, out, err = run("explain", "--cluster", str(ONE / "cluster.yaml"), "--pod", str(path))
        assert err == f"{path}: {expected}\n"
    assert code == 2
    assert out == ""


def test_a_pod_read_back_from_a_cluster_is_validated_as_stored_not_as_a_new_manifest(
    tmp_path: Path,
) -> None:
    # The API server merged pod-template-hash into the selector when it admitted the pod;
    # validating that again as a create would wrongly report the key as duplicated.
    admitted = ROOT / "tests" / "data" / "pods" / "admitted-with-merged-match-label-keys.yaml"
    code, _, err = run("explain", "--cluster", str(ONE / "cluster.yaml"), "--pod", str(admitted))
    assert code == 0, err
    runner = CliRunner()
    with chdir(tmp_path):
        text = admitted.read_text(encoding="utf-8")
        Path("manifest.yaml").write_text(
            "\n".join(line for line in text.splitlines() if "uid:" not in line)
        )
        result = runner.invoke(
            cli, ["explain", "--cluster", str(ONE / "cluster.yaml"), "--pod", "manifest.yaml"]
        )
    assert result.exit_code == 2
    assert result.stderr == (
        "manifest.yaml: spec.topologySpreadConstraints[0][0]: Invalid value: "
        '"pod-template-hash": exists in both matchLabelKeys and labelSelector\n'
    )


def test_json_lists_every_filter_plugins_verdict_not_only_the_first_rejection(
    tmp_path: Path,
) -> None:
    # node1 is cordoned: NodeUnschedulable rejects it first; PodTopologySpread would too.
    docs = (ONE / "cluster.yaml").read_text(encoding="utf-8").split("---\n")
    docs[0] = docs[0].replace("status:\n", "spec:\n  unschedulable: true\nstatus:\n", 1)
    (tmp_path / "cluster.yaml").write_text("---\n".join(docs), encoding="utf-8")
    code, out, err = run(
        "explain",
        "--cluster",
        str(tmp_path / "cluster.yaml"),
        "--pod",
        str(ONE / "pod.yaml"),
        "-o",
        "json",
    )
    assert code == 0, err
    node1 = json.loads(out)["nodes"][0]
    assert node1["filter"]["plugin"] == "NodeUnschedulable"
    rejecting = {p: v["code"] for p, v in node1["verdicts"].items() if v["code"] != "Success"}
    assert rejecting == {
        "NodeUnschedulable": "UnschedulableAndUnresolvable",
        "PodTopologySpread": "Unschedulable",
    }


def test_tie_break_random_draws_the_selected_node_among_the_tied_with_the_seed(tmp_path) -> None:
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: "
        f"{{kubernetes.io/hostname: n{i}}}}}\nstatus: {{allocatable: {{cpu: '4', pods: '10'}}}}\n"
        for i in range(5)
    )
    (tmp_path / "nodes.yaml").write_text(nodes)
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n"
    )
    common = ["explain", "--cluster", str(tmp_path / "nodes.yaml"), "--pod"]
    common += [str(tmp_path / "pod.yaml"), "-o", "json"]
    code, out, _ = run(*common)
    assert code == 0
    assert json.loads(out)["selectedNode"] == "n0"
    selected = set()
    for seed in range(10):
        code, out, _ = run(*common, "--tie-break", "random", "--seed", str(seed))
        result = json.loads(out)
        assert result["selectedNode"] in result["tiedNodes"]
        selected.add(result["selectedNode"])
    assert len(selected) > 1


def test_a_pod_topospread_cannot_explain_is_refused_in_one_line_naming_its_file(
    tmp_path: Path,
) -> None:
    cluster = tmp_path / "cluster.yaml"
    # An extended resource backed by a DeviceClass (DRAExtendedResource) is not decided.
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec: {extendedResourceName: example.com/gpu}\n"
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: default}\n"
        "spec:\n  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 1}}}]\n"
    )
    code, out, err = run("explain", "--cluster", str(cluster), "--pod", str(pod))
    assert (code, out) == (2, "")
    [line] = err.strip().splitlines()
    assert line.startswith(f"{pod}: unsupported: cannot explain pod default/db: ")


def test_a_key_no_node_carries_is_hinted_as_the_cause_not_min_domains() -> None:
    data = ROOT / "tests" / "data"
    code, out, err = run(
        "explain",
        "--cluster",
        str(data / "audit" / "key-on-no-node.yaml"),
        "--pod",
        str(data / "pods" / "rack-spread.yaml"),
    )
    assert code == 0, err
    assert "minDomains=1" in out  # the constraint as parsed, defaults included
    assert "minDomains" not in out.replace("minDomains=1", "")
    (hint,) = [line.strip() for line in out.splitlines() if "hint:" in line]
    assert hint == (
        "hint: hard #1: no example.com/rack domain is eligible: none of the 3 node(s) has the "
        "label example.com/rack, so every node is UnschedulableAndUnresolvable for "
        "PodTopologySpread and the pod cannot schedule; label the nodes with example.com/rack, "
        "or spread on a key they carry"
    )
