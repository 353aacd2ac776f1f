"""``topospread scheduler`` refuses bad input in one line, exit status 2."""

from __future__ import annotations

from click.testing import CliRunner

from topospread.cli.commands import cli as main


def run(*args: str):
    return CliRunner().invoke(main, ["scheduler", *args])


def test_help_lists_the_options():
    result = run("--help")
    assert result.exit_code == 0
    for option in (
        "--config",
        "--kubeconfig",
        "--port",
        "--pod-max-in-unschedulable-pods-duration",
    ):
        assert option in result.output


def test_a_bad_configuration_is_refused_with_its_field(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n"
    )
    result = run("--config", str(config))
    assert result.exit_code == 2
    assert "bad.yaml: leaderElection.leaseDuration: Invalid value" in result.output


def test_a_missing_kubeconfig_is_refused(tmp_path):
    result = run("--kubeconfig", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "nope" in result.output


def test_a_bad_duration_is_refused():
    result = run("--pod-max-in-unschedulable-pods-duration", "soon")
    assert result.exit_code == 2
    assert "not a positive duration: soon" in result.output


def test_a_missing_configuration_file_is_one_line(tmp_path):
    result = run("--config", str(tmp_path / "none.yaml"))
    assert result.exit_code == 2
    assert result.output == f"{tmp_path / 'none.yaml'}: no such file\n"


def test_a_profile_with_a_plugin_that_does_not_exist_is_one_line_not_a_traceback(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"leaderElection: {{leaderElect: false}}\nclientConnection: {{kubeconfig: {kubeconfig}}}\n"
        "profiles:\n- schedulerName: topospread\n"
        "  plugins: {score: {enabled: [{name: NoSuchPlugin}]}}\n"
    )
    result = run(
        "--config", str(config), "--write-processes", "0", "--cpu-affinity", "off", "--port", "0"
    )
    assert result.exit_code == 2, result.output
    assert result.output == 'profile "topospread": plugin "NoSuchPlugin" does not exist\n'
