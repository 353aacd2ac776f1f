"""`topospread explain --node-pools`: both views, today's and after the scale-up, in text and
JSON; bad pools are one clear line each and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "autoscaling"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def explain(*extra: str | Path) -> tuple[int, str, str]:
    return run("explain", "--cluster", DATA / "cluster.yaml", "--pod", DATA / "pod.yaml", *extra)


def test_the_json_names_the_pool_the_node_count_and_where_the_pod_lands() -> None:
    code, out, err = explain("--node-pools", DATA / "pools.yaml", "-o", "json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["selectedNode"] is None  # today: kube-scheduler's view is unchanged
    scale = answer["autoscaling"]
    assert scale["fitsToday"] is False
    assert scale["scaleUp"]["pool"] == "zone-c"
    assert scale["scaleUp"]["nodes"] == 1
    assert scale["scaleUp"]["byZone"] == {"zone-c": 1}
    assert scale["scaleUp"]["landsOn"] == "zone-c-1"
    assert scale["withScaleUp"]["selectedNode"] == "zone-c-1"
    assert [o["pool"] for o in scale["options"] if o["helps"]] == ["zone-c"]


def test_the_text_shows_both_views_and_why_other_pools_do_not_help() -> None:
    code, out, err = explain("--node-pools", DATA / "pools.yaml")
    assert code == 0, err
    assert "Pending: 0/2 nodes are available" in out
    assert "adds 1 node(s) from pool zone-c (zone-c: 1)" in out
    assert "pool zone-b would not help: max size reached (1/1 nodes)" in out
    assert "After the scale-up, kube-scheduler places it on zone-c-1" in out


def test_template_nodes_inside_the_cluster_files_are_pools_not_nodes(tmp_path: Path) -> None:
    merged = tmp_path / "cluster.yaml"
    merged.write_text(
        (DATA / "cluster.yaml").read_text() + "\n---\n" + (DATA / "pools.yaml").read_text()
    )
    code, out, err = run("explain", "--cluster", merged, "--pod", DATA / "pod.yaml", "-o", "json")
    assert code == 0, err
    answer = json.loads(out)
    assert [n["name"] for n in answer["nodes"]] == ["zone-a-1", "zone-b-1"]
    assert answer["autoscaling"]["scaleUp"]["pool"] == "zone-c"


def test_karpenter_nodepools_need_instance_types_and_predict_one_node_per_zone() -> None:
    code, _, err = run(
        "explain",
        "--cluster", DATA / "karpenter-pending.yaml",
        "--pod", DATA / "karpenter-pod.yaml",
        "--node-pools", DATA / "nodepool.yaml",
    )  # fmt: skip
    assert code == 2
    assert "give --instance-types" in err
    code, out, err = run(
        "explain",
        "--cluster", DATA / "karpenter-pending.yaml",
        "--pod", DATA / "karpenter-pod.yaml",
        "--node-pools", DATA / "nodepool.yaml",
        "--instance-types", DATA / "instance-types.json",
        "-o", "json",
    )  # fmt: skip
    assert code == 0, err
    scale = json.loads(out)["autoscaling"]
    assert scale["autoscaler"] == "karpenter"
    assert scale["scaleUp"]["byZone"] == {"test-zone-a": 1, "test-zone-b": 1, "test-zone-c": 1}
    assert scale["scaleUp"]["pods"] == 6


def _template(annotations: dict[str, str], allocatable: str = "{cpu: '4', pods: '110'}") -> str:
    lines = "".join(f"      {k}: {v!r}\n" for k, v in annotations.items())
    return (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: t\n  annotations:\n"
        + lines.replace("      ", "    ")
        + f"status:\n  allocatable: {allocatable}\n"
    )


POOL, MIN, MAX = (f"autoscaling.topospread.dev/{k}" for k in ("pool", "min-size", "max-size"))


@pytest.mark.parametrize(
    ("pools", "words"),
    [
        (
            _template({POOL: "p", MIN: "3", MAX: "1"}),
            "must be greater than or equal to min-size (3)",
        ),
        (
            _template({POOL: "p", MAX: "2"}, "{}"),
            "pool 'p' has no usable template",
        ),
        (
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n"
            "  template:\n    spec:\n      requirements:\n"
            "      - {key: topology.kubernetes.io/zone, operator: Near, values: [a]}\n",
            'spec.template.spec.requirements[0].operator: Unsupported value: "Near"',
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
            "apps/v1/Deployment d: not a node pool",
        ),
        (
            _template({POOL: "p", "autoscaling.topospread.dev/maxsize": "1"}),
            'metadata.annotations: Unsupported value: "autoscaling.topospread.dev/maxsize": '
            'supported values: "autoscaling.topospread.dev/max-size", ',
        ),
    ],
    ids=["max-below-min", "no-template", "unknown-operator", "not-a-pool", "misspelt-annotation"],
)  # fmt: skip
def test_bad_node_pools_are_one_line_each_and_exit_2(
    tmp_path: Path, pools: str, words: str
) -> None:
    path = tmp_path / "pools.yaml"
    path.write_text(pools)
    code, out, err = explain("--node-pools", path, "--instance-types", DATA / "instance-types.json")
    assert code == 2
    assert out == ""
    assert words in err, err
    assert "Traceback" not in err
