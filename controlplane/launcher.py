"""Start the real control plane on loopback: etcd, kube-apiserver, and optionally
kube-controller-manager and kube-scheduler, built by ``make controlplane`` (``build.sh``).

Used by the ``cluster`` test tier, the benchmarks and ``make cluster`` alike::

    with ControlPlane.start(workdir) as cp:
        cp.admin_kubeconfig      # kubernetes-admin (system:masters), client certificate
        cp.scheduler_kubeconfig  # our ServiceAccount, a TokenRequest token, under RBAC

What it sets up, as a real cluster would have it:

* etcd with its data in ``workdir`` (fsync off: a test cluster, not a durable one);
* kube-apiserver with generated serving certificates, client-certificate authentication,
  ServiceAccount token signing keys, ``--authorization-mode=Node,RBAC`` and the default
  admission plugins but TaintNodesByCondition (nodes here are API objects without kubelets:
  the not-ready taint it puts on every new node would never be lifted);
* kube-controller-manager (when asked; the tests ask) with every default controller but the
  node-lifecycle one: nodes here have no kubelet, and that controller would taint every
  node not-ready and evict its pods;
* the project's own ``manifests/`` 00–06 (namespace, ServiceAccount, ClusterRole, bindings,
  Role, ConfigMap) applied as the admin, and a token for the scheduler's ServiceAccount
  minted with the TokenRequest API.

Every process runs in its own session and is stopped (SIGTERM, then SIGKILL) by
:meth:`ControlPlane.stop`, which ``with`` calls even when the body raised; an ``atexit`` hook
covers a harness that never gets there. Process logs stay in ``workdir/logs``.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import ssl
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import yaml

from controlplane.faults import FaultControls
from controlplane.pki import Pki, write_pki
from controlplane.processes import (
    BIN,
    HERE,
    Process,
    b64,
    free_port,
    missing_binaries,
    spawn,
    write_kubeconfig,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType

REPO = HERE.parent
MANIFESTS = REPO / "manifests"
APPLIED_MANIFESTS = tuple(f"0{i}-" for i in range(7))
"""manifests/ files applied (by prefix): everything but the Deployment and its Service."""
SCHEDULER_NAMESPACE = "batch-scheduler"
SCHEDULER_ACCOUNT = "batch-scheduler"
TOKEN_SECONDS = 24 * 3600
DISABLED_CONTROLLERS = ("node-lifecycle-controller",)
"""No kubelets: node-lifecycle would taint every node not-ready and evict its pods."""


RUNTIME_CONFIG = {"GenericWorkload": "scheduling.k8s.io/v1beta1=true"}
"""API versions a gate needs served (kube v1.37.2 serves PodGroups only with both)."""


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says what to do."""


def gate_flags(feature_gates: str) -> list[str]:
    """``--feature-gates`` (and the ``--runtime-config`` a gate needs) for every component;
    empty for none."""
    if not feature_gates:
        return []
    flags = [f"--feature-gates={feature_gates}"]
    enabled = {
        name.strip()
        for name, _, value in (part.partition("=") for part in feature_gates.split(","))
        if value.strip().lower() == "true"
    }
    runtime = [config for gate, config in RUNTIME_CONFIG.items() if gate in enabled]
    return flags + ([f"--runtime-config={','.join(runtime)}"] if runtime else [])


@dataclass
class ControlPlane(FaultControls):
    """A running control plane; create with :meth:`start`. Faults (kill, restart, pause,
    resume, compact): :class:`controlplane.faults.FaultControls`."""

    workdir: Path
    pki: Pki
    api_url: str
    etcd_url: str
    admin_kubeconfig: Path
    scheduler_kubeconfig: Path = field(init=False)
    kube_scheduler_metrics: str | None = None
    """``https://127.0.0.1:PORT`` of kube-scheduler's secure port, when it runs."""
    processes: list[Process] = field(default_factory=list)
    owns_workdir: bool = False
    feature_gates: str = ""
    """The gates every component runs with (``make cluster --feature-gates``)."""
    readiness: dict[str, Callable[[], bool]] = field(default_factory=dict)
    """How each component that serves is seen to be ready (a restart waits on it)."""

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        workdir: Path | None = None,
        *,
        controller_manager: bool = True,
        controller_manager_args: Sequence[str] = (),
        kube_scheduler: bool = False,
        kube_scheduler_args: Sequence[str] = (),
        apiserver_args: Sequence[str] = (),
        feature_gates: str = "",
        timeout: float = 90.0,
    ) -> ControlPlane:
        """Start etcd and kube-apiserver (and the optional components), apply the manifests
        and mint the scheduler's token. ``feature_gates`` (``GenericWorkload=true,...``)
        goes to every component, with the ``--runtime-config`` a gate needs on the API
        server. Raises :class:`ControlPlaneError` on failure, with every process it started
        already stopped."""
        reason = missing_binaries()
        if reason:
            raise ControlPlaneError(reason)
        owns = workdir is None
        workdir = Path(tempfile.mkdtemp(prefix="batch-scheduler-cluster-")) if owns else workdir
        assert workdir is not None
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "logs").mkdir(exist_ok=True)
        pki = write_pki(workdir / "pki")
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        api_url = f"https://127.0.0.1:{api_port}"
        admin_cert, admin_key = pki.client("admin")
        cp = cls(
            workdir=workdir,
            pki=pki,
            api_url=api_url,
            etcd_url=f"http://127.0.0.1:{etcd_port}",
            admin_kubeconfig=write_kubeconfig(
                workdir / "admin.kubeconfig",
                api_url,
                pki.ca_cert,
                "kubernetes-admin",
                {"client-certificate-data": b64(admin_cert), "client-key-data": b64(admin_key)},
            ),
            owns_workdir=owns,
            feature_gates=feature_gates,
        )
        atexit.register(cp.stop)
        try:
            cp._start_etcd(peer_port, timeout)
            cp._start_apiserver(api_port, apiserver_args, timeout)
            if controller_manager:
                cp._start_controller_manager(controller_manager_args)
            cp._apply_manifests()
            cp.scheduler_kubeconfig = cp._scheduler_kubeconfig()
            if controller_manager:
                cp._wait_default_service_account(timeout)
            if kube_scheduler:
                cp._start_kube_scheduler(kube_scheduler_args, timeout)
        except BaseException:
            cp.stop()
            raise
        return cp

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop every process this control plane started, newest first (idempotent)."""
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()
        if self.owns_workdir and not os.environ.get("BATCH_SCHEDULER_KEEP_CLUSTER"):
            shutil.rmtree(self.workdir, ignore_errors=True)
        atexit.unregister(self.stop)

    @property
    def bin(self) -> Path:
        """Where the binaries are."""
        return BIN

    def process(self, name: str) -> Process:
        """A running component by name (``etcd``, ``kube-apiserver``, …)."""
        for process in self.processes:
            if process.name == name:
                return process
        raise KeyError(name)

    # -- components ------------------------------------------------------------------------

    def _spawn(self, name: str, args: Sequence[str]) -> Process:
        process = spawn(name, args, self.workdir / "logs" / f"{name}.log")
        self.processes.append(process)
        return process

    def _wait(self, process: Process, ready: Any, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if not process.alive():
                raise ControlPlaneError(
                    f"{process.name} exited with {process.proc.returncode}:\n{process.tail()}"
                )
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"{what} not ready in {timeout:.0f}s:\n{process.tail()}")
            time.sleep(0.1)

    def _start_etcd(self, peer_port: int, timeout: float) -> None:
        peer = f"http://127.0.0.1:{peer_port}"
        process = self._spawn(
            "etcd",
            [
                "--name=default",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        self.readiness["etcd"] = lambda: self._http_ok(f"{self.etcd_url}/health")
        self._wait(process, self.readiness["etcd"], "etcd", timeout)

    def _start_apiserver(self, port: int, extra: Sequence[str], timeout: float) -> None:
        pki = self.pki
        process = self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # loopback cannot be a kubernetes Service endpoint; nothing here needs one
                "--endpoint-reconciler-type=none",
                f"--secure-port={port}",
                f"--tls-cert-file={pki.serving_cert}",
                f"--tls-private-key-file={pki.serving_key}",
                f"--client-ca-file={pki.ca_cert}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={pki.sa_pub}",
                f"--service-account-signing-key-file={pki.sa_key}",
                "--authorization-mode=Node,RBAC",
                # New nodes would get node.kubernetes.io/not-ready:NoSchedule, which only
                # the node-lifecycle controller lifts once a kubelet reports Ready.
                "--disable-admission-plugins=TaintNodesByCondition",
                "--service-cluster-ip-range=10.96.0.0/16",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                "--v=1",
                *gate_flags(self.feature_gates),
                *extra,
            ],
        )
        self.readiness["kube-apiserver"] = lambda: self._http_ok(f"{self.api_url}/readyz")
        self._wait(process, self.readiness["kube-apiserver"], "apiserver", timeout)

    def _start_controller_manager(self, extra: Sequence[str] = ()) -> None:
        kubeconfig = self.client_kubeconfig("controller-manager", "system:kube-controller-manager")
        self._spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                f"--service-account-private-key-file={self.pki.sa_key}",
                f"--root-ca-file={self.pki.ca_cert}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--controllers=*," + ",".join(f"-{c}" for c in DISABLED_CONTROLLERS),
                "--v=1",
                *gate_flags(self.feature_gates)[:1],
                *extra,
            ],
        )

    def kube_scheduler_flags(self, port: int) -> list[str]:
        """kube-scheduler's serving flags: ``/readyz``, ``/metrics`` and ``/debug/pprof`` on
        ``port`` (loopback) without authentication (always-allowed paths), delegated
        authn/authz for the rest."""
        kubeconfig = self.client_kubeconfig("scheduler", "system:kube-scheduler")
        return [
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'kube-scheduler-certs'}",
        ]

    def _start_kube_scheduler(self, extra: Sequence[str], timeout: float) -> None:
        kubeconfig = self.client_kubeconfig("scheduler", "system:kube-scheduler")
        port = free_port()
        process = self._spawn(
            "kube-scheduler",
            [
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                *self.kube_scheduler_flags(port),
                *gate_flags(self.feature_gates)[:1],
                *extra,
            ],
        )
        self.kube_scheduler_metrics = url = f"https://127.0.0.1:{port}"
        self.readiness["kube-scheduler"] = lambda: self._http_ok(f"{url}/readyz", verify=False)
        self._wait(process, self.readiness["kube-scheduler"], "kube-scheduler", timeout)

    def client_kubeconfig(self, stem: str, user: str) -> Path:
        """A kubeconfig for a client identity of :data:`controlplane.pki.CLIENTS`."""
        cert, key = self.pki.client(stem)
        return write_kubeconfig(
            self.workdir / f"{stem}.kubeconfig",
            self.api_url,
            self.pki.ca_cert,
            user,
            {"client-certificate-data": b64(cert), "client-key-data": b64(key)},
        )

    # -- API, as the admin -----------------------------------------------------------------

    def _ssl(self, *, verify: bool = True) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        cert, key = self.pki.client("admin")
        context.load_cert_chain(str(cert), str(key))
        return context

    def _http_ok(self, url: str, *, verify: bool = True) -> bool:
        context = self._ssl(verify=verify) if url.startswith("https") else None
        try:
            with urllib.request.urlopen(url, timeout=5, context=context) as response:
                return int(response.status) == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One JSON request as the admin; the decoded body (raises ``HTTPError`` on non-2xx)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.api_url}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30, context=self._ssl()) as response:
            return json.loads(response.read() or b"null")

    def _apply_manifests(self) -> None:
        """Create manifests/ 00–06 as the admin (the objects a cluster admin installs)."""
        for path in sorted(MANIFESTS.glob("*.yaml")):
            if not path.name.startswith(APPLIED_MANIFESTS):
                continue
            for doc in yaml.safe_load_all(path.read_text()):
                if doc:
                    self.request("POST", _collection_path(doc), doc)

    def _scheduler_kubeconfig(self) -> Path:
        """A kubeconfig that authenticates as our ServiceAccount (TokenRequest token)."""
        review = self.request(
            "POST",
            f"/api/v1/namespaces/{SCHEDULER_NAMESPACE}/serviceaccounts/{SCHEDULER_ACCOUNT}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": TOKEN_SECONDS},
            },
        )
        return write_kubeconfig(
            self.workdir / "scheduler.kubeconfig",
            self.api_url,
            self.pki.ca_cert,
            f"system:serviceaccount:{SCHEDULER_NAMESPACE}:{SCHEDULER_ACCOUNT}",
            {"token": review["status"]["token"]},
        )

    def _wait_default_service_account(self, timeout: float) -> None:
        """Pods cannot be created before the ServiceAccount controller made ``default``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")
                return
            except urllib.error.HTTPError as exc:
                if exc.code != 404 or time.monotonic() > deadline:
                    kcm = self.process("kube-controller-manager")
                    raise ControlPlaneError(
                        f"no default ServiceAccount ({exc.code}):\n{kcm.tail()}"
                    ) from exc
            time.sleep(0.1)


def _collection_path(doc: dict[str, Any]) -> str:
    """The REST collection a manifest's object is created in (the few kinds we ship)."""
    api_version, kind = doc["apiVersion"], doc["kind"]
    namespace = doc.get("metadata", {}).get("namespace")
    plural = {
        "Namespace": "namespaces",
        "ServiceAccount": "serviceaccounts",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Role": "roles",
        "RoleBinding": "rolebindings",
        "ConfigMap": "configmaps",
    }[kind]
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespace:
        return f"{prefix}/namespaces/{namespace}/{plural}"
    return f"{prefix}/{plural}"
