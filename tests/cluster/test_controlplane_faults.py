"""The control plane's fault controls (controlplane/faults.py) on a control plane of their
own: kube-apiserver and etcd killed and restarted at the same URL with the data kept, the
API server paused and resumed, and etcd compacted (410 Gone at an older revision)."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from controlplane.launcher import ControlPlane
from controlplane.processes import missing_binaries
from tests.cluster.conftest import REQUIRE

if TYPE_CHECKING:
    from collections.abc import Iterator

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd and kube-apiserver only: nothing else needs them here."""
    reason = missing_binaries()
    if reason:
        if os.environ.get(REQUIRE):
            pytest.fail(f"cluster tier required ({REQUIRE}) but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    with ControlPlane.start(tmp_path_factory.mktemp("faults"), controller_manager=False) as plane:
        yield plane


def _configmap(cp: ControlPlane, name: str) -> dict[str, Any]:
    body = {"metadata": {"name": name}, "data": {"k": name}}
    created: dict[str, Any] = cp.request("POST", CONFIGMAPS, body)
    return created


def _watch_from(cp: ControlPlane, version: str) -> dict[str, Any]:
    """The first event of a watch of ConfigMaps resumed from ``version``."""
    context = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
    cert, key = cp.pki.client("admin")
    context.load_cert_chain(str(cert), str(key))
    url = f"{cp.api_url}{CONFIGMAPS}?watch=true&resourceVersion={version}&timeoutSeconds=5"
    with urllib.request.urlopen(url, timeout=10, context=context) as response:
        event: dict[str, Any] = json.loads(response.readline())
        return event


def test_the_api_server_killed_and_restarted_serves_the_same_objects(cp: ControlPlane) -> None:
    _configmap(cp, "before-apiserver-kill")
    cp.kill("kube-apiserver")
    assert not cp.process("kube-apiserver").alive()
    with pytest.raises(urllib.error.URLError):
        cp.request("GET", f"{CONFIGMAPS}/before-apiserver-kill")
    seconds = cp.restart("kube-apiserver")
    assert seconds < 60
    assert cp.request("GET", f"{CONFIGMAPS}/before-apiserver-kill")["data"] == {
        "k": "before-apiserver-kill"
    }


def test_etcd_killed_and_restarted_keeps_its_data(cp: ControlPlane) -> None:
    _configmap(cp, "before-etcd-kill")
    cp.kill("etcd")
    cp.restart("etcd")
    # the API server reconnects by itself: ready again without a restart of its own
    deadline = time.monotonic() + 30
    while not cp.readiness["kube-apiserver"]():
        assert time.monotonic() < deadline, cp.process("kube-apiserver").tail()
        time.sleep(0.2)
    assert cp.request("GET", f"{CONFIGMAPS}/before-etcd-kill")["metadata"]["name"] == (
        "before-etcd-kill"
    )


def test_a_paused_api_server_answers_nothing_until_resumed(cp: ControlPlane) -> None:
    cp.pause("kube-apiserver")
    try:
        assert cp.process("kube-apiserver").alive()
        port = int(cp.api_url.rsplit(":", 1)[1])
        context = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=1, context=context)
        try:
            with pytest.raises(TimeoutError):  # the TLS handshake itself gets no answer
                connection.connect()
        finally:
            connection.close()
    finally:
        cp.resume("kube-apiserver")
    assert _configmap(cp, "after-pause")["metadata"]["name"] == "after-pause"


def test_compaction_is_410_gone_once_the_api_servers_cache_is_rebuilt(cp: ControlPlane) -> None:
    """kube-apiserver v1.37 serves exact LISTs and watches from its cache, which keeps the
    history etcd compacted away; restarted, it answers both at the old revision 410."""
    old = _configmap(cp, "compacted-1")["metadata"]["resourceVersion"]
    _configmap(cp, "compacted-2")
    exact = f"{CONFIGMAPS}?resourceVersion={old}&resourceVersionMatch=Exact"
    revision = cp.compact()
    assert revision > int(old)
    assert cp.request("GET", exact)["metadata"]["resourceVersion"] == old  # from its cache
    assert _watch_from(cp, old)["type"] == "ADDED"
    cp.restart("kube-apiserver")
    with pytest.raises(urllib.error.HTTPError) as gone:
        cp.request("GET", exact)
    assert gone.value.code == 410
    gone.value.close()  # an HTTPError holds the response open
    event = _watch_from(cp, old)
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410
