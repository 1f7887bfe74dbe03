"""ApiClient against the emulator: auth, error mapping, retries, credentials."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from yarl import URL

from scheduler.kube import errors
from scheduler.kube.client import ApiClient, backoff_delay, create_client
from scheduler.sim.faults import FaultConfig
from scheduler.sim.kubeconfig import write_kubeconfig
from tests.kube.kube_helpers import TOKEN, FailFirst, create_pod

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.sim.server import SimServer


async def test_get_with_bearer_token(api: ApiClient) -> None:
    """A kubeconfig with the sim's token reads the API."""
    nodes = await api.request("GET", "/api/v1/nodes")
    assert sorted(n["metadata"]["name"] for n in nodes["items"]) == ["node-0", "node-1", "node-2"]


async def test_missing_token_is_unauthorized(sim: SimServer, tmp_path: Path) -> None:
    """Without a token the sim answers 401, mapped to errors.Unauthorized."""
    path = write_kubeconfig(tmp_path / "anon", sim.url, token=None)
    client = await create_client(str(path))
    try:
        with pytest.raises(errors.Unauthorized) as info:
            await client.request("GET", "/api/v1/nodes")
    finally:
        await client.close()
    assert info.value.status == 401
    assert TOKEN not in str(info.value)


async def test_credential_is_reused_and_read_again_after_a_401(
    api: ApiClient, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests reuse the Authorization header read from the configuration (reading it runs
    the kubernetes client's refresh hook); a 401 makes the next request read it again."""
    current = {"token": TOKEN}
    reads: list[str] = []

    def read(*_: object, **__: object) -> str:
        reads.append(current["token"])
        return f"Bearer {current['token']}"

    monkeypatch.setattr(api.access.configuration, "get_api_key_with_prefix", read)
    for _ in range(5):
        await api.request("GET", "/api/v1/nodes")
    assert reads == [TOKEN]
    sim.token = current["token"] = "rotated"
    with pytest.raises(errors.Unauthorized):
        await api.request("GET", "/api/v1/nodes")  # the old one, still reused
    await api.request("GET", "/api/v1/nodes")
    assert reads == [TOKEN, "rotated"]


async def test_status_mapping(api: ApiClient) -> None:
    """404 → NotFound, 409 → Conflict with the server's reason and message."""
    with pytest.raises(errors.NotFound) as nf:
        await api.request("GET", "/api/v1/namespaces/default/pods/nope")
    assert 'pods "nope" not found' in nf.value.message
    await create_pod(api, "dup")
    with pytest.raises(errors.Conflict) as conflict:
        await create_pod(api, "dup")
    assert conflict.value.reason == "AlreadyExists"


@pytest.mark.parametrize("code", [503, 500, 429])
async def test_idempotent_requests_retry(api: ApiClient, sim: SimServer, code: int) -> None:
    """GET is retried on injected 5xx/429 and then succeeds."""
    fault = FailFirst(sim, "list", 2, code)
    nodes = await api.request("GET", "/api/v1/nodes")
    assert len(nodes["items"]) == 3
    assert fault.injected == 2


async def test_retries_give_up(api: ApiClient, sim: SimServer) -> None:
    """A GET failing more often than the retry budget raises ServerError."""
    FailFirst(sim, "list", 10, 503)
    with pytest.raises(errors.ServerError) as info:
        await api.request("GET", "/api/v1/nodes", retries=1)
    assert info.value.status == 503


async def test_post_is_not_retried(api: ApiClient, sim: SimServer) -> None:
    """A POST that gets a 500 raises at once (a lost response may hide a success)."""
    fault = FailFirst(sim, "create", 1, 500)
    with pytest.raises(errors.ServerError):
        await create_pod(api, "once")
    assert fault.injected == 1


async def test_rate_injected_faults_are_absorbed(api: ApiClient, sim: SimServer) -> None:
    """With 30 % of GETs failing (seeded), 20 reads all succeed thanks to retries."""
    sim.faults.config = FaultConfig(fail_rates={"get": 0.3}, retry_after=0, seed=7)
    await create_pod(api, "flaky")
    for _ in range(20):
        pod = await api.request("GET", "/api/v1/namespaces/default/pods/flaky")
        assert pod["metadata"]["name"] == "flaky"
    assert sim.faults.counters["errors"] > 0


async def test_retry_after_is_honoured(api: ApiClient, sim: SimServer) -> None:
    """A 429 with Retry-After: 1 delays the retry by about a second."""
    sim.faults.config = FaultConfig(
        fail_rates={"list": 1.0}, fail_codes=(429,), retry_after=1, seed=0
    )
    start = time.monotonic()
    with pytest.raises(errors.TooManyRequests) as info:
        await api.request("GET", "/api/v1/nodes", retries=1)
    assert info.value.retry_after == 1.0
    assert time.monotonic() - start >= 0.9


async def test_timeout_is_a_transport_error(api: ApiClient, sim: SimServer) -> None:
    """A server slower than the timeout yields TransportError (after the retries)."""
    sim.faults.config = FaultConfig(latency=0.5)
    with pytest.raises(errors.TransportError):
        await api.request("GET", "/api/v1/nodes", timeout=0.1, retries=1)


async def test_computed_timeouts_do_not_pile_up(api: ApiClient) -> None:
    """Each distinct timeout (a lease renewal passes the time its deadline leaves) makes
    an aiohttp timeout object; the client keeps a bounded number of them."""
    for i in range(500):
        await api.request("GET", "/api/v1/nodes", timeout=5.0 + i / 1000)
    assert len(api._timeouts) <= 64


async def test_credentials_for_kopf(api: ApiClient, sim: SimServer) -> None:
    """credentials() carries server and token, and its repr hides the token."""
    creds = api.credentials()
    assert creds.server == sim.url
    assert creds.token == TOKEN
    assert TOKEN not in repr(creds)
    info = creds.as_kopf()
    assert info.server == sim.url
    assert info.token == TOKEN
    assert info.default_namespace == "default"


async def test_incluster_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """kubeconfig=None inside a pod reads the service-account token and host env."""
    from kubernetes.config import incluster_config

    token = tmp_path / "token"
    token.write_text("sa-token")
    ca = tmp_path / "ca.crt"
    ca.write_text("dummy")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    client = await create_client(None)
    creds = client.credentials()
    await client.close()
    assert creds.server == "https://10.0.0.1:443"
    assert creds.token == "sa-token"
    assert creds.ca_path == str(ca)


def test_backoff_delay() -> None:
    """Retry-After wins (capped); otherwise exponential with 50-150 % jitter."""
    assert backoff_delay(0, retry_after=3.0) == 3.0
    assert backoff_delay(0, retry_after=99.0, retry_after_cap=5.0) == 5.0
    for attempt in range(6):
        d = backoff_delay(attempt, base=0.1, cap=1.0)
        assert 0.5 * min(1.0, 0.1 * 2**attempt) <= d <= 1.5 * min(1.0, 0.1 * 2**attempt)


@pytest.mark.parametrize(
    ("path", "prebuilt"),
    [
        pytest.param(
            "/api/v1/namespaces/ns/pods/web-0/binding", True, id="a plain path is used as is"
        ),
        pytest.param("/api/v1/namespaces/ns/pods/a b", False, id="a space goes through yarl"),
        pytest.param("/api/v1/pods?watch=1", False, id="a query goes through yarl"),
    ],
)
async def test_request_urls(api: ApiClient, path: str, prebuilt: bool) -> None:
    """A plain path's URL skips yarl's encoding and is the URL yarl would have built."""
    url = api._url(path)
    assert isinstance(url, URL) is prebuilt
    if prebuilt:
        assert url == URL(api.server + path)


async def test_a_bind_body_is_sent_pre_encoded(api: ApiClient) -> None:
    """``data=`` bytes are the request's JSON body: the sim reads the Binding and binds."""
    await create_pod(api, "pre-encoded")
    body = b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"pre-encoded"},'
    body += b'"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}}'
    path = "/api/v1/namespaces/default/pods/pre-encoded/binding"
    await api.request("POST", path, data=body, decode=False)
    pod = await api.request("GET", "/api/v1/namespaces/default/pods/pre-encoded")
    assert pod["spec"]["nodeName"] == "node-1"
