"""A real Kubernetes control plane for live tests and benchmarks: etcd, kube-apiserver and
kube-controller-manager (optionally kube-scheduler) at the pinned release, on 127.0.0.1.

The binaries are built by ``bash controlplane/build.sh`` from the Go module proxy into a
version-keyed cache directory (:func:`binaries_dir`); nothing here builds or downloads.

```python
with ControlPlane() as cp:
    kube = Kube(connect(cp.admin_kubeconfig))      # topospread.testing.live, client.config
```

Each control plane runs in its own temporary directory with random free ports, serves TLS
from a fresh CA, and authorizes with RBAC (anonymous requests refused). Identities:

- admin by client certificate (``O=system:masters``): :attr:`ControlPlane.admin_kubeconfig`;
- admin by static token (group ``system:masters``): :attr:`ControlPlane.admin_token_kubeconfig`;
- :data:`READER_USER` by static token, in no group, so it holds only what RBAC grants every
  authenticated user (discovery, ``/version``): :attr:`ControlPlane.reader_kubeconfig`.

No kubelet runs: Nodes are plain API objects (set their ``status`` through the status
subresource, the API server drops it on create) and pods stay Pending once bound. The
node-lifecycle controller is off, so Nodes never turn NotReady or get tainted. Namespace
deletion does finish (the namespace controller runs) but takes a while: use unique names.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from topospread import KUBERNETES_VERSION

ETCD_VERSION = "v3.7.0"
"""The etcd release the pinned ``k8s.io/kubernetes`` requires; a test keeps it equal to
``controlplane/etcd/go.mod`` and to the oracle module's requirement."""

READER_USER = "topospread-reader"
"""The least-privilege identity: a static token, no groups, no RBAC bindings."""

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")

SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
_KUBERNETES_SERVICE_IP = "10.0.0.1"
"""The first address of the service range: the ``kubernetes`` Service's, so the serving
certificate names it as the in-cluster one would."""

_STOP_GRACE_SECONDS = 1.0
"""kube-apiserver's graceful shutdown takes many seconds; a throw-away cluster does not
need it, so TERM is followed by KILL after this long."""

_LOG_TAIL_LINES = 20

_WORKDIR_PREFIX = "topospread-controlplane-"
_OWNER_FILE = "owner.pid"


class ControlPlaneError(RuntimeError):
    """A control plane process died or did not become ready."""


class ControlPlaneUnavailable(ControlPlaneError):
    """The binaries are missing (not built on this machine)."""


# -- where the binaries are ---------------------------------------------------------------------


def cache_root() -> Path:
    """``$TOPOSPREAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/topospread``, else
    ``~/.cache/topospread`` (the same rule as ``controlplane/build.sh``)."""
    explicit = os.environ.get("TOPOSPREAD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "topospread"


def binaries_dir() -> Path:
    """Where the pinned binaries are: ``$TOPOSPREAD_CONTROLPLANE_BIN`` if set, else the
    version-keyed directory ``controlplane/build.sh`` builds into."""
    explicit = os.environ.get("TOPOSPREAD_CONTROLPLANE_BIN")
    if explicit:
        return Path(explicit)
    key = f"k8s-{KUBERNETES_VERSION}-etcd-{ETCD_VERSION}"
    return cache_root() / "controlplane" / key


def find_binaries(directory: Path | None = None) -> Path:
    """The binaries directory, checked to hold every binary; raises
    :class:`ControlPlaneUnavailable` saying what is missing and how to build it."""
    where = binaries_dir() if directory is None else directory
    missing = [
        name for name in BINARIES if not os.access(where / name, os.X_OK) or (where / name).is_dir()
    ]
    if missing:
        raise ControlPlaneUnavailable(
            f"no {', '.join(missing)} in {where}; build them with `bash controlplane/build.sh` "
            "(needs Go and the module proxy)"
        )
    return where


# -- the control plane ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int


class _PortTaken(ControlPlaneError):
    """Another process bound a port between choosing it and the server binding it."""


@dataclass
class _Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    log_handle: IO[bytes]


def _stop_processes(processes: Sequence[_Process], grace_seconds: float) -> None:
    """TERM every process, KILL what is left after ``grace_seconds``, close the logs."""
    for process in processes:
        if process.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.popen.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.popen.kill()
            process.popen.wait()
        process.log_handle.close()


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager (+ kube-scheduler if asked) on
    127.0.0.1. :meth:`start` returns when all are ready; :meth:`stop` (also run at
    interpreter exit) kills them and removes the temporary directory."""

    def __init__(
        self,
        binaries: Path | None = None,
        *,
        controller_manager: bool = True,
        scheduler: bool = False,
        ready_timeout: float = 60.0,
        extra_apiserver_args: tuple[str, ...] = (),
        extra_controller_manager_args: tuple[str, ...] = (),
    ) -> None:
        self.binaries = find_binaries(binaries)
        self._with_controller_manager = controller_manager
        self._with_scheduler = scheduler
        self._ready_timeout = ready_timeout
        self._extra_apiserver_args = extra_apiserver_args
        self._extra_controller_manager_args = extra_controller_manager_args
        self._processes: list[_Process] = []
        self._apiserver_args: list[str] = []
        self._controller_manager_args: list[str] = []
        self._workdir: Path | None = None
        self._ports: _Ports | None = None
        self.admin_token = secrets.token_hex(16)
        self.reader_token = secrets.token_hex(16)
        self.started_seconds: float | None = None
        """Wall time from :meth:`start` to every process ready."""

    # -- public surface --------------------------------------------------------------------

    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            raise ControlPlaneError("the control plane is not running")
        return self._workdir

    @property
    def server(self) -> str:
        """The API server's URL, ``https://127.0.0.1:PORT``."""
        return f"https://127.0.0.1:{self._require_ports().apiserver}"

    @property
    def ca_file(self) -> Path:
        """The CA that signed the API server's serving certificate and the admin's."""
        return self.workdir / "ca.crt"

    @property
    def admin_cert_file(self) -> Path:
        return self.workdir / "admin.crt"

    @property
    def admin_key_file(self) -> Path:
        return self.workdir / "admin.key"

    @property
    def admin_kubeconfig(self) -> Path:
        """Admin (``system:masters``) by client certificate."""
        return self.workdir / "admin.kubeconfig"

    @property
    def admin_token_kubeconfig(self) -> Path:
        """Admin (``system:masters``) by bearer token."""
        return self.workdir / "admin-token.kubeconfig"

    @property
    def reader_kubeconfig(self) -> Path:
        """:data:`READER_USER` by bearer token: no RBAC rights beyond discovery."""
        return self.workdir / "reader.kubeconfig"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self._require_ports().etcd_client}"

    def log_file(self, name: str) -> Path:
        """The combined output of one process (``etcd``, ``kube-apiserver``, ...)."""
        return self.workdir / f"{name}.log"

    @property
    def pids(self) -> dict[str, int]:
        return {p.name: p.popen.pid for p in self._processes}

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        if self._workdir is not None:
            raise ControlPlaneError("the control plane is already running")
        began = time.monotonic()
        _remove_abandoned_workdirs()
        self._workdir = Path(tempfile.mkdtemp(prefix=_WORKDIR_PREFIX))
        (self._workdir / _OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
        atexit.register(self.stop)
        try:
            self._write_credentials()
            try:
                self._start_processes()
            except _PortTaken:
                # A port chosen free was bound by someone else before the server bound it:
                # choose again, once.
                self._kill_processes()
                shutil.rmtree(self.workdir / "etcd-data", ignore_errors=True)
                self._start_processes()
        except BaseException:
            self.stop()
            raise
        self.started_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """TERM every process, KILL what is left after a second, remove the directory.
        Safe to call twice."""
        self._kill_processes()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self._ports = None
        atexit.unregister(self.stop)

    def kill_apiserver(self, *, graceful: bool = False) -> None:
        """SIGKILL kube-apiserver (a crash: no graceful shutdown, connections reset), or
        with ``graceful`` SIGTERM it (its own shutdown: watches ended, requests in flight
        drained); the other processes keep running. :meth:`start_apiserver` brings it
        back."""
        self._end("kube-apiserver", graceful=graceful)

    def start_apiserver(self) -> None:
        """Start kube-apiserver again, on the same port with the same flags, and wait
        until it is ready."""
        if any(p.name == "kube-apiserver" for p in self._processes):
            raise ControlPlaneError("kube-apiserver is already running")
        deadline = time.monotonic() + self._ready_timeout
        apiserver = self._spawn("kube-apiserver", self._apiserver_args)
        self._wait_ready(apiserver, f"{self.server}/readyz", self._api_context(), deadline)

    def restart_apiserver(self, down_seconds: float = 0.0, *, graceful: bool = False) -> None:
        """Kill (or with ``graceful`` stop) kube-apiserver, leave it down ``down_seconds``,
        start it again (ready)."""
        self.kill_apiserver(graceful=graceful)
        time.sleep(down_seconds)
        self.start_apiserver()

    def restart_controller_manager(self) -> None:
        """Stop kube-controller-manager (SIGTERM) and start it again with the same flags,
        waiting until it is healthy: its controllers start from a fresh list, with none of
        the old process's memory (a ReplicaSet's expectations among it)."""
        if not self._controller_manager_args:
            raise ControlPlaneError("this control plane runs no kube-controller-manager")
        self._end("kube-controller-manager", graceful=True)
        deadline = time.monotonic() + self._ready_timeout
        kcm = self._spawn("kube-controller-manager", self._controller_manager_args)
        port = self._require_ports().controller_manager
        self._wait_ready(kcm, f"https://127.0.0.1:{port}/healthz", _insecure_context(), deadline)

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (physically) and return that revision:
        every watch opened at an older resourceVersion, when the API server's watch cache
        is off, ends with 410 Gone and its client must list again."""
        revision = int(self._etcd("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        self._etcd("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def _etcd(self, path: str, body: dict[str, object]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.etcd_url}{path}", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    # -- credentials --------------------------------------------------------------------------

    def _write_credentials(self) -> None:
        d = self.workdir
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", d / "ca.key")  # fmt: skip
        _openssl("req", "-x509", "-new", "-key", d / "ca.key", "-subj", "/CN=topospread-test-ca",
                 "-days", "30", "-out", d / "ca.crt",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
        sans = f"IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc,IP:{_KUBERNETES_SERVICE_IP}"
        _signed_cert(d, "apiserver", "/CN=kube-apiserver", "serverAuth", sans)
        _signed_cert(d, "admin", "/O=system:masters/CN=topospread-admin", "clientAuth", None)
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", d / "sa.key")  # fmt: skip
        _openssl("pkey", "-in", d / "sa.key", "-pubout", "-out", d / "sa.pub")
        # Static tokens: token,user,uid,"groups". The reader is in no group on purpose.
        (d / "tokens.csv").write_text(
            f'{self.admin_token},topospread-admin,topospread-admin,"system:masters"\n'
            f"{self.reader_token},{READER_USER},{READER_USER}\n",
            encoding="utf-8",
        )
        for path in d.iterdir():
            if path.suffix in {".key", ".csv"}:
                path.chmod(0o600)

    def _write_kubeconfigs(self) -> None:
        d = self.workdir
        cert_user = {"client-certificate": str(d / "admin.crt"), "client-key": str(d / "admin.key")}
        for path, user, credentials in (
            (self.admin_kubeconfig, "topospread-admin", cert_user),
            (self.admin_token_kubeconfig, "topospread-admin-token", {"token": self.admin_token}),
            (self.reader_kubeconfig, READER_USER, {"token": self.reader_token}),
        ):
            # JSON is YAML: every kubeconfig reader accepts it.
            config = {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "topospread-test",
                        "cluster": {
                            "server": self.server,
                            "certificate-authority": str(self.ca_file),
                        },
                    }
                ],
                "users": [{"name": user, "user": credentials}],
                "contexts": [
                    {
                        "name": user,
                        "context": {
                            "cluster": "topospread-test",
                            "user": user,
                            "namespace": "default",
                        },
                    }
                ],
                "current-context": user,
                "preferences": {},
            }
            path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
            path.chmod(0o600)

    # -- processes ----------------------------------------------------------------------------

    def _start_processes(self) -> None:
        d = self.workdir
        ports = self._ports = _Ports(*_free_ports(5))
        self._write_kubeconfigs()
        deadline = time.monotonic() + self._ready_timeout

        peer = f"http://127.0.0.1:{ports.etcd_peer}"
        etcd = self._spawn(
            "etcd",
            [
                "--name=topospread",
                f"--data-dir={d / 'etcd-data'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=topospread={peer}",
                # One member on loopback: elections can be fast, and durability is not wanted
                # (the data dies with the test run).
                "--election-timeout=100",
                "--heartbeat-interval=20",
                "--unsafe-no-fsync",
                # Room for benchmark-sized clusters (tens of thousands of pods).
                "--quota-backend-bytes=8589934592",
                "--log-level=warn",
            ],
        )
        self._wait_ready(etcd, f"{self.etcd_url}/health", None, deadline)

        self._apiserver_args = [
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            f"--secure-port={ports.apiserver}",
            # 1.37 refuses a loopback advertise address while it reconciles the
            # `kubernetes` Endpoints; nothing in-cluster needs them here.
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",
            f"--cert-dir={d / 'apiserver-certs'}",
            f"--tls-cert-file={d / 'apiserver.crt'}",
            f"--tls-private-key-file={d / 'apiserver.key'}",
            f"--client-ca-file={self.ca_file}",
            f"--token-auth-file={d / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--anonymous-auth=false",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            # No kubelet runs: TaintNodesByCondition would give every new Node a
            # not-ready taint nobody removes, and ServiceAccount would refuse pods until
            # the controller manager has made each namespace's default ServiceAccount.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--allow-privileged=true",
            "--profiling=false",
            *self._extra_apiserver_args,
        ]
        apiserver = self._spawn("kube-apiserver", self._apiserver_args)
        self._wait_ready(apiserver, f"{self.server}/readyz", self._api_context(), deadline)

        component_common = [
            f"--kubeconfig={self.admin_kubeconfig}",
            f"--authentication-kubeconfig={self.admin_kubeconfig}",
            f"--authorization-kubeconfig={self.admin_kubeconfig}",
            "--bind-address=127.0.0.1",
            "--leader-elect=false",
            "--profiling=false",
        ]
        waits: list[tuple[_Process, str]] = []
        if self._with_controller_manager:
            self._controller_manager_args = [
                *component_common,
                f"--secure-port={ports.controller_manager}",
                f"--cert-dir={d / 'kcm-certs'}",
                # Without kubelets every Node would turn NotReady and get evicted from.
                "--controllers=*,-node-lifecycle-controller",
                f"--service-account-private-key-file={d / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                *self._extra_controller_manager_args,
            ]
            kcm = self._spawn("kube-controller-manager", self._controller_manager_args)
            waits.append((kcm, f"https://127.0.0.1:{ports.controller_manager}/healthz"))
        if self._with_scheduler:
            scheduler = self._spawn(
                "kube-scheduler",
                [*component_common, f"--secure-port={ports.scheduler}"],
            )
            waits.append((scheduler, f"https://127.0.0.1:{ports.scheduler}/healthz"))
        for process, url in waits:
            self._wait_ready(process, url, _insecure_context(), deadline)

    def _api_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.load_cert_chain(str(self.admin_cert_file), str(self.admin_key_file))
        return context

    def _spawn(self, name: str, args: list[str]) -> _Process:
        log = self.log_file(name)
        handle = log.open("ab")
        popen = subprocess.Popen(
            [str(self.binaries / name), *args],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            # Own session: a terminal's Ctrl-C reaches the test runner, which stops these in
            # order, instead of racing it.
            start_new_session=True,
            preexec_fn=_die_with_parent_hook(),
        )
        process = _Process(name, popen, log, handle)
        self._processes.append(process)
        return process

    def _wait_ready(
        self, process: _Process, url: str, context: ssl.SSLContext | None, deadline: float
    ) -> None:
        last = "no answer yet"
        while True:
            code = process.popen.poll()
            if code is not None:
                tail = _tail(process.log)
                if "address already in use" in tail:
                    raise _PortTaken(f"{process.name}: {tail}")
                raise ControlPlaneError(
                    f"{process.name} exited with status {code} before it was ready "
                    f"(log {process.log}):\n{tail}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2, context=context) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as error:
                # Closed here: an HTTPError holds the answer's socket, and one left to the
                # garbage collector (a reference cycle) warns "unclosed <ssl.SSLSocket>" in
                # whatever code runs when it is collected (a restart answers 500 for seconds).
                with error:
                    body = error.read().decode(errors="replace")
                last = f"HTTP {error.code}: {_failing_checks(body)}"
            except (OSError, ssl.SSLError) as error:
                last = str(error)
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"{process.name} was not ready within {self._ready_timeout:g} s "
                    f"({url}: {last}; log {process.log}):\n{_tail(process.log)}"
                )
            time.sleep(0.05)

    def _end(self, name: str, *, graceful: bool) -> None:
        """SIGKILL (or with ``graceful`` SIGTERM, then SIGKILL after a minute) the process
        ``name`` and forget it; the others keep running."""
        for process in self._processes:
            if process.name == name and process.popen.poll() is None:
                if graceful:
                    process.popen.terminate()
                    try:
                        process.popen.wait(60)
                    except subprocess.TimeoutExpired:
                        process.popen.kill()
                else:
                    process.popen.kill()
                process.popen.wait()
                process.log_handle.close()
        self._processes = [p for p in self._processes if p.name != name]

    def _kill_processes(self) -> None:
        processes, self._processes = self._processes, []
        _stop_processes(processes, _STOP_GRACE_SECONDS)

    def _require_ports(self) -> _Ports:
        if self._ports is None:
            raise ControlPlaneError("the control plane is not running")
        return self._ports


# -- helpers -------------------------------------------------------------------------------------


def _failing_checks(body: str) -> str:
    """What a /readyz or /healthz answer says is not ready: its ``[-]`` lines (each
    check is listed, one per line, ``[+]`` when it passed), else the body's start."""
    failing = [line.strip() for line in body.splitlines() if line.startswith("[-]")]
    return "; ".join(failing) if failing else body[:500].strip()


def _insecure_context() -> ssl.SSLContext:
    """For the components' health endpoints: their serving certificates are self-signed,
    made at start, and health is all we ask of them."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _openssl(*args: str | Path) -> None:
    done = subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ControlPlaneError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def _signed_cert(directory: Path, name: str, subject: str, usage: str, sans: str | None) -> None:
    """An EC P-256 key and a certificate for it signed by the directory's CA."""
    key, csr, crt = (directory / f"{name}.{ext}" for ext in ("key", "csr", "crt"))
    extensions = directory / f"{name}.ext"
    lines = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature",
        f"extendedKeyUsage={usage}",
    ]
    if sans:
        lines.append(f"subjectAltName={sans}")
    extensions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    _openssl("req", "-new", "-key", key, "-subj", subject, "-out", csr)
    _openssl("x509", "-req", "-in", csr, "-CA", directory / "ca.crt",
             "-CAkey", directory / "ca.key", "-CAcreateserial", "-days", "30",
             "-extfile", extensions, "-out", crt)  # fmt: skip
    csr.unlink()
    extensions.unlink()


def _free_ports(count: int) -> list[int]:
    """``count`` distinct ports free right now (all sockets held open until all are chosen,
    so the kernel does not hand out one twice)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A pre-exec hook that has the child killed when the thread that started it dies, even
    by SIGKILL, when atexit cannot run (Linux ``PR_SET_PDEATHSIG``). Resolved here, in the
    parent: a child between fork and exec must not import or load libraries."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def hook() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL))

    return hook


def _remove_abandoned_workdirs() -> None:
    """Remove the directories of control planes whose starting process died without
    :meth:`ControlPlane.stop` (killed): their servers died with it (see
    :func:`_die_with_parent_hook`), only the files are left."""
    for directory in Path(tempfile.gettempdir()).glob(_WORKDIR_PREFIX + "*"):
        try:
            owner = int((directory / _OWNER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not Path(f"/proc/{owner}").exists() and sys.platform.startswith("linux"):
            shutil.rmtree(directory, ignore_errors=True)


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-_LOG_TAIL_LINES:])
