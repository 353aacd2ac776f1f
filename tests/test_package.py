"""Package-level promises: the version pin, the public names, the plugin contracts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import topospread
from topospread.framework.config.decode import default_configuration
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.plugins import names
from topospread.plugins.registry import in_tree_registry

ROOT = Path(__file__).resolve().parents[1]


def test_the_python_package_and_the_oracle_pin_the_same_kubernetes_release() -> None:
    go_mod = (ROOT / "oracle" / "go.mod").read_text(encoding="utf-8")
    pinned = re.search(r"^\s*k8s\.io/kubernetes (v\S+)$", go_mod, re.MULTILINE)
    assert pinned is not None, "oracle/go.mod does not require k8s.io/kubernetes"
    assert pinned.group(1) == topospread.KUBERNETES_VERSION
    staging = set(re.findall(r"=> k8s\.io/\S+ (v\S+)", go_mod))
    assert staging == {"v0" + topospread.KUBERNETES_VERSION.removeprefix("v1")}


def test_all_lists_exactly_the_public_names_of_the_package() -> None:
    public = {
        name
        for name in dir(topospread)
        if not name.startswith("_") and not isinstance(getattr(topospread, name), ModuleType)
    }
    assert set(topospread.__all__) == public | {"__version__"}


def test_importing_the_package_loads_neither_numpy_nor_a_kubernetes_client() -> None:
    heavy = "{'numpy', 'kubernetes', 'click'}"
    code = f"import sys, topospread; print(sorted({heavy} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_scripting_api_explains_a_bundled_example_from_files() -> None:
    folder = ROOT / "src" / "topospread" / "examples" / "one-constraint"
    cluster = topospread.load_cluster(folder / "cluster.yaml")
    result = topospread.explain(folder / "pod.yaml", cluster)
    assert isinstance(result, topospread.Explanation)
    assert result.selected_node == "node4"
    assert result.to_json()["selectedNode"] == "node4"


def test_the_scripting_api_takes_objects_as_dicts() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    result = topospread.explain(pod, topospread.cluster_from_objects([node]))
    assert result.selected_node == "n1"


ONE = ROOT / "src" / "topospread" / "examples" / "one-constraint"


def test_the_scripting_api_takes_the_cluster_as_files_too() -> None:
    folder = ONE
    by_file = topospread.explain(folder / "pod.yaml", str(folder / "cluster.yaml"))
    by_list = topospread.explain(folder / "pod.yaml", [folder / "cluster.yaml"])
    loaded = topospread.load_cluster([folder / "cluster.yaml"])
    assert by_file.selected_node == by_list.selected_node == "node4"
    assert loaded == topospread.load_cluster(folder / "cluster.yaml")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: topospread.explain(ONE / "pod.yaml", 42), "cluster: expected a Cluster"),
        (lambda: topospread.cluster_from_objects("cluster.yaml"), "for files: topospread.load"),
        (
            lambda: topospread.cluster_from_objects([1, 2]),
            "[0]: expected an object (dict), got int",
        ),
        (lambda: topospread.load_cluster([3]), "expected file paths, got int"),
        (lambda: topospread.simulate("story", tie_break="bogus"), "'bogus': one of first, random"),
    ],
    ids=["explain-cluster", "objects-path", "objects-ints", "paths-ints", "tie-break"],
)
def test_the_scripting_api_answers_a_wrong_argument_with_its_own_input_error(call, words):
    with pytest.raises(topospread.errors.InputError) as raised:
        call()
    assert words in str(raised.value)


def test_the_scripting_api_runs_a_bundled_scenario_by_name() -> None:
    result = topospread.simulate("scale-down-imbalance", seed=1)
    assert isinstance(result, topospread.SimulationResult)
    assert result.to_json()["scenario"] == "scale-down-imbalance"


EXPECTED_EXTENSION_POINTS = {
    names.POD_TOPOLOGY_SPREAD: {PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin},
    names.INTER_POD_AFFINITY: {PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin},
    names.NODE_AFFINITY: {PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin},
    names.NODE_NAME: {PreFilterPlugin, FilterPlugin},
    names.NODE_RESOURCES_FIT: {PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin},
    names.NODE_UNSCHEDULABLE: {FilterPlugin},
    names.TAINT_TOLERATION: {FilterPlugin, PreScorePlugin, ScorePlugin},
    names.NODE_RESOURCES_BALANCED_ALLOCATION: {PreScorePlugin, ScorePlugin},
    names.IMAGE_LOCALITY: {ScorePlugin},
    names.NODE_PORTS: {PreFilterPlugin, FilterPlugin},
}


@pytest.mark.parametrize("name", sorted(EXPECTED_EXTENSION_POINTS))
def test_each_registered_plugin_implements_its_extension_points_at_runtime(name: str) -> None:
    plugin = in_tree_registry()[name](
        None, Handle(Snapshot([])), topospread.framework.features.Features()
    )
    for protocol in EXPECTED_EXTENSION_POINTS[name]:
        assert isinstance(plugin, protocol), f"{name} is not a {protocol.__name__}"
    if isinstance(plugin, PreFilterPlugin) and plugin.pre_filter_extensions() is not None:
        assert isinstance(plugin.pre_filter_extensions(), PreFilterExtensions)
    if isinstance(plugin, ScorePlugin) and plugin.score_extensions() is not None:
        assert isinstance(plugin.score_extensions(), ScoreExtensions)


def test_the_default_profile_runs_pod_topology_spread_with_weight_2() -> None:
    (profile,) = default_configuration().profiles
    framework = Framework(profile, in_tree_registry(), Handle(Snapshot([])))
    assert framework.score_weights[names.POD_TOPOLOGY_SPREAD] == 2
    assert framework.plugins_at("filter")[:4] == [
        names.NODE_NAME,
        names.NODE_UNSCHEDULABLE,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
    ]
    assert names.POD_TOPOLOGY_SPREAD in framework.plugins_at("pre_filter")
