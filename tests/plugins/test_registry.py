"""The plugin registry: in-tree plugins plus the installed distributions' entry points.

The example plugin (examples/plugins/ratio-spread, installed in editable mode by
scripts/setup.sh) is found through its real entry point; refusals are shown with
distributions written into a temporary folder on ``sys.path``, which importlib.metadata
reads as it reads site-packages.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.errors import ConfigError
from topospread.framework.config.types import IN_TREE_PLUGINS
from topospread.io.loader import load_configuration
from topospread.plugins import registry as registry_module
from topospread.plugins.registry import in_tree_registry, refused_plugins, registry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "ratio-spread"


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """The entry points read again at the next call, and once more after the test."""
    registry_module._installed.cache_clear()
    yield
    registry_module._installed.cache_clear()


@pytest.fixture
def foreign_distributions(tmp_path: Path, fresh_registry: None) -> Iterator[Path]:
    """A folder on sys.path holding a broken-plugins distribution with three entry points:
    one named like an in-tree plugin, one whose module fails to import, one that works."""
    package = tmp_path / "broken_plugins"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from topospread.plugins.imagelocality import new as factory\n"
    )
    (package / "fails.py").write_text("raise RuntimeError('no GPU here')\n")
    info = tmp_path / "broken_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[topospread.plugins]\n"
        "NodeName = broken_plugins:factory\n"
        "Fails = broken_plugins.fails:factory\n"
        "Works = broken_plugins:factory\n"
    )
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("broken_plugins")]:
        del sys.modules[name]


def test_every_in_tree_factory_is_an_upstream_plugin() -> None:
    assert set(in_tree_registry()) <= set(IN_TREE_PLUGINS)


def test_the_registry_is_the_in_tree_plugins_plus_the_installed_ones(
    foreign_distributions: Path,
) -> None:
    plugins = registry()
    assert set(in_tree_registry()) <= set(plugins)
    assert "Works" in plugins
    assert plugins["NodeName"] is in_tree_registry()["NodeName"]


def test_a_clashing_or_broken_entry_point_is_refused_with_one_line_naming_it(
    foreign_distributions: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="topospread.plugins"):
        plugins = registry()
    assert "Fails" not in plugins
    assert refused_plugins() == (
        "plugin entry point Fails = broken_plugins.fails:factory of broken-plugins refused: "
        "RuntimeError: no GPU here",
        "plugin entry point NodeName = broken_plugins:factory of broken-plugins refused: "
        "NodeName is an in-tree plugin",
    )
    assert [r.getMessage() for r in caplog.records] == list(refused_plugins())
    # Loaded once: a second call neither imports nor warns again.
    caplog.clear()
    registry()
    assert caplog.records == []


def test_a_configuration_naming_a_refused_plugin_says_why_it_does_not_exist(
    foreign_distributions: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Fails}, {name: Nope}]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_configuration(config)
    assert [str(e) for e in caught.value.errors] == [
        'profile "default-scheduler": plugin "Fails" does not exist (plugin entry point '
        "Fails = broken_plugins.fails:factory of broken-plugins refused: "
        "RuntimeError: no GPU here)",
        'profile "default-scheduler": plugin "Nope" does not exist',
    ]


@pytest.mark.example_plugin
def test_a_configuration_file_decodes_the_installed_plugins_args_strictly(tmp_path: Path) -> None:
    text = (EXAMPLE / "scheduler-config.yaml").read_text()
    config = tmp_path / "config.yaml"
    config.write_text(text.replace("maxSkew: 1", "maxSkew: 1\n        skew: 1"))
    with pytest.raises(ConfigError) as caught:
        load_configuration(config)
    assert [str(e) for e in caught.value.errors] == [
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin RatioSpread: "
        'strict decoding error: unknown field "policies[0].skew"'
    ]


def explain(*options: str) -> str:
    demo = EXAMPLE / "demo"
    result = CliRunner().invoke(
        cli,
        [
            "explain",
            "--cluster",
            str(demo / "cluster.yaml"),
            "--pod",
            str(demo / "pod.yaml"),
            "--config",
            str(EXAMPLE / "scheduler-config.yaml"),
            *options,
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.example_plugin
def test_explain_shows_the_installed_plugins_verdicts_and_scores_beside_the_in_tree_ones() -> None:
    text = explain()
    assert (
        "spot-1  ✗ Unschedulable  RatioSpread: node(s) would put the pod's ratio policy over "
        "its share" in text
    )
    assert (
        "plain-1  ✗ UnschedulableAndUnresolvable  RatioSpread: node(s) didn't have a value" in text
    )
    header = next(line for line in text.splitlines() if "RatioSpread ×4" in line)
    assert "TaintToleration ×3" in header
    assert "Selected node: on-demand-1" in text


@pytest.mark.example_plugin
def test_explain_json_carries_the_installed_plugins_verdicts_and_scores() -> None:
    nodes = {n["name"]: n for n in json.loads(explain("--output", "json"))["nodes"]}
    assert nodes["spot-1"]["filter"] == {
        "code": "Unschedulable",
        "plugin": "RatioSpread",
        "reasons": ["node(s) would put the pod's ratio policy over its share"],
    }
    assert nodes["on-demand-1"]["verdicts"]["RatioSpread"] == {"code": "Success", "reasons": []}
    assert nodes["on-demand-1"]["scores"]["RatioSpread"] == 100


def test_a_plugin_whose_factory_raises_is_refused_in_one_line_as_kube_scheduler_words_it(
    tmp_path: Path, fresh_registry: None
) -> None:
    package = tmp_path / "raising_plugins"
    package.mkdir()
    (package / "__init__.py").write_text(
        "def factory(args, handle, features):\n    raise ValueError('needs a GPU node')\n"
    )
    info = tmp_path / "raising_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: raising-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[topospread.plugins]\nRaises = raising_plugins:factory\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Raises}]\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        result = CliRunner().invoke(
            cli, ["explain", "--example", "one-constraint", "--config", str(config)]
        )
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("raising_plugins", None)
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith(
        ': profile "default-scheduler": initializing plugin "Raises": ValueError: needs a GPU '
        "node\n"
    )
    assert len(result.stderr.splitlines()) == 1
