"""Fixtures of the webhook tests: manifests and a CA-signed serving certificate for 127.0.0.1."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

GHOST_SELECTOR_TEXT = "labelSelector app=wbe matches none of the workload's own pods"


def deployment(name: str = "web", namespace: str = "default", *, ghost: bool = False) -> dict:
    """A Deployment spread by zone; with ``ghost`` its selector names a label value its pods
    do not carry (``app=wbe``), so the constraint spreads nothing."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "wbe" if ghost else "web"}},
                            "matchLabelKeys": ["pod-template-hash"],
                        }
                    ],
                },
            },
        },
    }


def review(obj: dict | None, operation: str = "CREATE", old: dict | None = None) -> dict:
    """An admission.k8s.io/v1 AdmissionReview as kube-apiserver sends it."""
    source = obj or old or {}
    meta = source.get("metadata", {})
    kind = source.get("kind", "Deployment")
    group, _, version = source.get("apiVersion", "apps/v1").rpartition("/")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
            "namespace": meta.get("namespace", "default"),
            "name": meta.get("name", ""),
            "operation": operation,
            "userInfo": {"username": "alice"},
            "object": copy.deepcopy(obj),
            "oldObject": copy.deepcopy(old),
            "dryRun": False,
        },
    }


@dataclass(frozen=True)
class Certificates:
    """A CA and a serving certificate for 127.0.0.1 signed by it (PEM files)."""

    ca: Path
    cert: Path
    key: Path

    def ca_bundle(self) -> bytes:
        return self.ca.read_bytes()


def _openssl(*args: Any) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def make_certificates(directory: Path) -> Certificates:
    """A self-signed CA and a serverAuth certificate for IP 127.0.0.1 (openssl CLI)."""
    ca_key, ca = directory / "ca.key", directory / "ca.crt"
    key, csr, cert = directory / "tls.key", directory / "tls.csr", directory / "tls.crt"
    ext = directory / "tls.ext"
    curve = ("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
    _openssl("genpkey", *curve, "-out", ca_key)
    _openssl("req", "-x509", "-new", "-key", ca_key, "-subj", "/CN=topospread-webhook-test-ca",
             "-days", "1", "-out", ca)  # fmt: skip
    _openssl("genpkey", *curve, "-out", key)
    _openssl("req", "-new", "-key", key, "-subj", "/CN=127.0.0.1", "-out", csr)
    ext.write_text(
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
        encoding="utf-8",
    )
    _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-days", "1", "-extfile", ext, "-out", cert)  # fmt: skip
    return Certificates(ca, cert, key)


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    if shutil.which("openssl") is None:
        reason = "the openssl command is needed to make the test certificates"
        if os.environ.get("TOPOSPREAD_REQUIRE_CONTROLPLANE") == "1":
            pytest.fail(f"TOPOSPREAD_REQUIRE_CONTROLPLANE=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return make_certificates(tmp_path_factory.mktemp("webhook-tls"))
