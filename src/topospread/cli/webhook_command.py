"""``topospread webhook``: serve lint's findings to the API server as a ValidatingAdmissionWebhook.

Exit status: 0 after SIGTERM or SIGINT, 2 for bad options, certificate files that cannot
be read, or an address that cannot be bound (one line, no traceback).
"""

from __future__ import annotations

import signal
import ssl
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import click

from topospread.cli.shared import EXIT_INPUT, exit_with_error
from topospread.errors import InputError, TopospreadError

__all__ = ["webhook_command"]

_SEVERITIES = ("error", "warning", "info", "none")


@click.command("webhook")
@click.option(
    "--tls-cert-file",
    "cert_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Serving certificate (PEM, with its chain); read again when the file changes.",
)
@click.option(
    "--tls-private-key-file",
    "key_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="The certificate's private key (PEM).",
)
@click.option("--bind-address", default="0.0.0.0", show_default=True, help="Address to serve on.")
@click.option(
    "--port", default=8443, show_default=True, type=click.IntRange(0, 65535), help="HTTPS port."
)
@click.option(
    "--deny-on",
    type=click.Choice(_SEVERITIES),
    default="error",
    show_default=True,
    help="Deny an object with a finding at or above this severity (none: only warn).",
)
@click.option(
    "--warn-on",
    type=click.Choice(_SEVERITIES),
    default="warning",
    show_default=True,
    help="Return the other findings at or above this severity as warnings.",
)
@click.option(
    "--timeout",
    "deadline",
    default=2.0,
    show_default=True,
    type=click.FloatRange(0.05, 30.0),
    help="Seconds a review may take (also capped by the API server's own timeout).",
)
@click.option(
    "--failure-policy",
    type=click.Choice(["Ignore", "Fail"]),
    default="Ignore",
    show_default=True,
    help="On a timeout or internal error: allow with a warning (Ignore) or deny (Fail).",
)
@click.option(
    "--disable",
    "disable",
    multiple=True,
    metavar="RULE",
    help="Leave out a rule (repeatable, or comma-separated).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="KubeSchedulerConfiguration (its default constraints); upstream defaults if omitted.",
)
@click.option(
    "--workers", default=4, show_default=True, type=click.IntRange(1, 64), help="Review threads."
)
@click.option("-v", "--verbose", count=True, help="Log every review (one JSON line each).")
def webhook_command(
    cert_file: Path,
    key_file: Path,
    bind_address: str,
    port: int,
    deny_on: str,
    warn_on: str,
    deadline: float,
    failure_policy: str,
    disable: Sequence[str],
    config_file: Path | None,
    workers: int,
    verbose: int,
) -> None:
    """Serve a ValidatingAdmissionWebhook at /validate: lint's findings on Deployments,
    StatefulSets, ReplicaSets, DaemonSets, Jobs, CronJobs and Pods as warnings or denials.

    Manifests: deploy/webhook/. Runs until SIGTERM.
    """
    import logging

    from topospread.cli.rules import disabled_rules
    from topospread.engine.audit import Severity
    from topospread.io import load_configuration
    from topospread.webhook import Policy, TLSFiles, WebhookServer

    def severity(value: str) -> Severity | None:
        return None if value == "none" else Severity(value)

    try:
        policy = Policy(
            deny_at=severity(deny_on),
            warn_at=severity(warn_on),
            fail_closed=failure_policy == "Fail",
            deadline_seconds=deadline,
            disabled=disabled_rules(disable),
            configuration=load_configuration(config_file),
        )
        for path in (cert_file, key_file):
            # (ssl's own FileNotFoundError does not name the file.)
            if not path.is_file():
                raise InputError(str(path), message="no such file")
        tls = TLSFiles(cert_file, key_file)
        server = WebhookServer(policy, tls, bind_address, port, workers=workers)
    except TopospreadError as exc:
        exit_with_error(exc)
    except ssl.SSLError as exc:
        click.echo(f"{cert_file}, {key_file}: not a matching PEM certificate and key: "
                   f"{exc.reason or exc}", err=True)  # fmt: skip
        sys.exit(EXIT_INPUT)
    except OSError as exc:
        where = exc.filename or f"{bind_address}:{port}"
        click.echo(f"{where}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(message)s",
        stream=sys.stderr,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for the serving loop, which runs in this (the main) thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    click.echo(f"serving https://{bind_address}:{server.port}/validate", err=True)
    server.serve_forever()
