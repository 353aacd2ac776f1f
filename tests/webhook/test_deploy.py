"""deploy/webhook, and where people already are: kubectl's plugin name, krew, pre-commit,
GitHub Actions. The files parse, name what exists, and topospread's own manifests pass
its lint."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli

ROOT = Path(__file__).resolve().parents[2]
WEBHOOK = ROOT / "deploy" / "webhook"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def by_kind(kind: str) -> dict[str, Any]:
    [found] = [d for p in sorted(WEBHOOK.glob("*.yaml")) for d in documents(p) if d["kind"] == kind]
    return found


def test_the_kustomization_lists_every_manifest_but_the_cert_manager_option():
    listed = set(documents(WEBHOOK / "kustomization.yaml")[0]["resources"])
    present = {p.name for p in WEBHOOK.glob("*.yaml")} - {"kustomization.yaml"}

    assert present - listed == {"certificate.yaml"}
    assert listed <= present


def test_the_webhook_configuration_is_side_effect_free_bounded_and_fails_open():
    [hook] = by_kind("ValidatingWebhookConfiguration")["webhooks"]

    assert hook["sideEffects"] == "None"
    assert hook["admissionReviewVersions"] == ["v1"]
    assert hook["timeoutSeconds"] == 5
    assert hook["failurePolicy"] == "Ignore"
    assert hook["clientConfig"]["service"]["path"] == "/validate"
    resources = {r for rule in hook["rules"] for r in rule["resources"]}
    assert resources == {
        "deployments", "statefulsets", "replicasets", "daemonsets", "jobs", "cronjobs", "pods"
    }  # fmt: skip
    assert "topospread-system" in hook["namespaceSelector"]["matchExpressions"][0]["values"]


def test_the_webhooks_own_deadline_and_failure_policy_match_the_configuration():
    [hook] = by_kind("ValidatingWebhookConfiguration")["webhooks"]
    [container] = by_kind("Deployment")["spec"]["template"]["spec"]["containers"]
    args = dict(a.split("=", 1) for a in container["args"] if "=" in a)

    assert args["--failure-policy"] == hook["failurePolicy"]
    assert float(args["--timeout"]) < hook["timeoutSeconds"]


def test_the_webhook_runs_without_any_api_access():
    account = by_kind("ServiceAccount")
    pod = by_kind("Deployment")["spec"]["template"]["spec"]
    kinds = {d["kind"] for p in WEBHOOK.glob("*.yaml") for d in documents(p)}

    assert account["automountServiceAccountToken"] is False
    assert pod["automountServiceAccountToken"] is False
    assert not kinds & {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}


def test_topospreads_own_deployments_pass_its_lint():
    files = sorted(str(p) for p in (ROOT / "deploy").glob("*/*.yaml"))

    result = CliRunner().invoke(cli, ["lint", "--fail-on", "info", "-o", "json", *files])

    assert result.exit_code == 0, result.stdout


def test_kubectl_finds_the_plugin_as_kubectl_topospread():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    assert project["scripts"]["kubectl-topospread"] == "topospread.cli:kubectl_main"
    usage = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv[1:] = ['lint', '--help'];"
         "from topospread.cli import kubectl_main; kubectl_main()"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert usage.stdout.startswith("Usage: kubectl topospread lint [OPTIONS] FILE...|-")


def test_the_krew_manifest_installs_that_executable():
    [plugin] = documents(ROOT / "deploy" / "krew" / "topospread.yaml")

    assert plugin["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert plugin["kind"] == "Plugin"
    assert plugin["metadata"]["name"] == "topospread"
    for platform in plugin["spec"]["platforms"]:
        assert platform["bin"] == "kubectl-topospread"
        assert len(platform["sha256"]) == 64
    assert (ROOT / "deploy" / "krew" / "kubectl-topospread").stat().st_mode & 0o111


def test_the_krew_release_steps_make_an_archive_with_every_file_the_manifest_names(tmp_path):
    manifest = (ROOT / "deploy" / "krew" / "topospread.yaml").read_text()
    [tar_line] = [line for line in manifest.splitlines() if line.startswith("#   tar ")]
    archive = tmp_path / "kubectl-topospread.tar.gz"
    command = tar_line.removeprefix("#   ").replace("kubectl-topospread.tar.gz", str(archive), 1)
    subprocess.run(["bash", "-e", "-c", command], cwd=ROOT, check=True, capture_output=True)
    with tarfile.open(archive) as opened:
        members = set(opened.getnames())
    [plugin] = documents(ROOT / "deploy" / "krew" / "topospread.yaml")
    for platform in plugin["spec"]["platforms"]:
        assert {f["from"] for f in platform["files"]} <= members


def test_the_pre_commit_hook_runs_lint():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())

    assert hook["id"] == "topospread-lint"
    assert hook["entry"] == "topospread lint"
    assert hook["language"] == "python"
    # One run sees every manifest (selector-overlap compares the manifests of one input).
    assert hook["require_serial"] is True


def test_the_github_actions_example_uploads_lints_sarif():
    workflow = yaml.safe_load(
        (ROOT / "examples" / "github-actions" / "topospread-lint.yaml").read_text()
    )
    steps = workflow["jobs"]["lint"]["steps"]
    [lint] = [s for s in steps if s.get("name") == "topospread lint"]
    [upload] = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload")]

    assert "--output sarif" in lint["run"]
    assert "> topospread.sarif" in lint["run"]
    assert upload["uses"] == "github/codeql-action/upload-sarif@v3"
    assert upload["with"]["sarif_file"] == "topospread.sarif"
    assert workflow["permissions"]["security-events"] == "write"


def _run_lint_step(repository: Path) -> subprocess.CompletedProcess[str]:
    """The example's lint step, run by bash in ``repository`` with this topospread."""
    workflow = yaml.safe_load(
        (ROOT / "examples" / "github-actions" / "topospread-lint.yaml").read_text()
    )
    [lint] = [s for s in workflow["jobs"]["lint"]["steps"] if s.get("name") == "topospread lint"]
    bin_dir = repository / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "topospread"
    shim.write_text(
        f'#!/bin/sh\nexec {sys.executable} -c "from topospread.cli import main; main()" "$@"\n'
    )
    shim.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    return subprocess.run(
        ["bash", "-e", "-c", lint["run"]],
        cwd=repository,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(repository)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_github_actions_lint_step_without_manifests_succeeds_and_writes_no_sarif(
    tmp_path: Path,
) -> None:
    done = _run_lint_step(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no manifests to lint" in done.stdout
    assert not (tmp_path / "topospread.sarif").exists()


def test_the_github_actions_lint_step_writes_sarif_for_the_manifests_in_git(
    tmp_path: Path,
) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "web.yaml").write_text(
        (ROOT / "tests" / "data" / "lint" / "clean.yaml").read_text()
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "manifests"], check=True)
    done = _run_lint_step(tmp_path)
    assert done.returncode == 0, done.stderr
    sarif = json.loads((tmp_path / "topospread.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert sarif["runs"][0]["tool"]["driver"]["name"] == "topospread"
