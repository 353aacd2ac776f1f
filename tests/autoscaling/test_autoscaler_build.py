"""The autoscaler's pins, its build script, and its launcher when a process fails."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from topospread.testing.autoscaler import (
    KARPENTER_VERSION,
    KWOK_VERSION,
    Autoscaler,
    AutoscalerUnavailable,
    autoscaler_dir,
    find_autoscaler,
)
from topospread.testing.controlplane import ControlPlane, ControlPlaneError

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "autoscaler" / "build.sh"


def _go_mod(name: str) -> str:
    return (ROOT / "autoscaler" / name / "go.mod").read_text(encoding="utf-8")


def _requirement(go_mod: str, module: str) -> str | None:
    found = re.search(
        rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)(?: // indirect)?$", go_mod, re.M
    )
    return found.group(1) if found else None


def _tools(go_mod: str) -> set[str]:
    return set(re.findall(r"^tool (\S+)$", go_mod, re.M))


def test_each_scratch_module_pins_the_release_the_launcher_names() -> None:
    assert _requirement(_go_mod("kwok"), "sigs.k8s.io/kwok") == KWOK_VERSION
    assert _requirement(_go_mod("karpenter"), "sigs.k8s.io/karpenter") == KARPENTER_VERSION


def test_each_scratch_module_builds_exactly_one_tool_of_its_release() -> None:
    assert _tools(_go_mod("kwok")) == {"sigs.k8s.io/kwok/cmd/kwok"}
    assert _tools(_go_mod("karpenter")) == {"sigs.k8s.io/karpenter/kwok"}


def test_the_scratch_modules_link_the_client_libraries_of_one_kubernetes_minor() -> None:
    # Both talk to the v1.37 API server with client-go one minor behind (a supported skew);
    # a bump of either pin that moves client-go shows here.
    versions = {
        name: _requirement(_go_mod(name), "k8s.io/client-go") for name in ("kwok", "karpenter")
    }
    minors = {v.rsplit(".", 1)[0] for v in versions.values() if v}
    assert minors == {"v0.36"}, versions


def test_the_build_script_and_the_launcher_agree_on_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOPOSPREAD_AUTOSCALER_BIN", raising=False)
    for env in ({"TOPOSPREAD_CACHE_DIR": str(tmp_path / "c")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        for name in ("TOPOSPREAD_CACHE_DIR", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        script = subprocess.run(
            ["bash", str(BUILD), "--dir"], capture_output=True, text=True, check=True
        )
        assert Path(script.stdout.strip()) == autoscaler_dir()
    assert autoscaler_dir().name == f"kwok-{KWOK_VERSION}-karpenter-{KARPENTER_VERSION}"
    assert autoscaler_dir().parent.name == "autoscaler"


def test_an_unknown_build_option_is_refused_in_one_line() -> None:
    script = subprocess.run(["bash", str(BUILD), "--fast"], capture_output=True, text=True)
    assert script.returncode == 2
    assert script.stderr.strip().splitlines() == [f"usage: {BUILD} [--force | --dir]"]


def test_missing_files_are_named_with_the_command_that_builds_them(tmp_path: Path) -> None:
    (tmp_path / "kwok").write_text("", encoding="utf-8")  # present but not executable
    with pytest.raises(
        AutoscalerUnavailable,
        match=r"^no kwok, karpenter-kwok, instance_types\.json and \d+ more in .*; "
        r"build them with `bash autoscaler/build\.sh`",
    ):
        find_autoscaler(tmp_path)


def test_a_kwok_that_dies_at_start_is_reported_with_its_log_and_nothing_is_left_running(
    control_plane_binaries: Path, autoscaler_files: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "build"
    shutil.copytree(autoscaler_files, fake, symlinks=True, ignore=lambda d, names: ["kwok"])
    (fake / "kwok").write_text(
        "#!/bin/sh\necho 'fatal: no stages found' >&2\nexit 3\n", encoding="utf-8"
    )
    (fake / "kwok").chmod(0o755)
    with ControlPlane(control_plane_binaries, controller_manager=False) as plane:
        autoscaler = Autoscaler(plane, fake)
        with pytest.raises(ControlPlaneError, match=r"kwok exited with status 3(.|\n)*no stages"):
            autoscaler.start()
        assert autoscaler.pids == {}
