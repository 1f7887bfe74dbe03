"""The secure port as kube-scheduler's: HTTPS (self-signed or the given pair), every request
authenticated by a TokenReview and authorized by a SubjectAccessReview, against a fake API
server that answers both (and counts the reviews it was asked)."""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from aiohttp import web
from cryptography import x509
from kubernetes import client as k8s_client

from scheduler.app.endpoints import Endpoints
from scheduler.app.serving_cert import self_signed, server_context
from scheduler.app.settings import SettingsError
from scheduler.cycle.loop import OpenGate
from scheduler.kube.client import ApiClient
from scheduler.kube.delegated_auth import DelegatedAuth
from scheduler.metrics.registry import Metrics

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

TOKENS = {"reader-token": "system:serviceaccount:mon:prometheus", "other-token": "alice"}
ALLOWED = {("system:serviceaccount:mon:prometheus", "/metrics", "get")}


class FakeApiServer:
    """TokenReview: the tokens in TOKENS; SubjectAccessReview: the triples in ALLOWED."""

    def __init__(self) -> None:
        self.token_reviews: list[str] = []
        self.access_reviews: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/apis/authentication.k8s.io/v1/tokenreviews", self._token)
        app.router.add_post("/apis/authorization.k8s.io/v1/subjectaccessreviews", self._access)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        token = body["spec"]["token"]
        self.token_reviews.append(token)
        name = TOKENS.get(token)
        status: dict[str, Any] = {"authenticated": name is not None}
        if name is not None:
            status["user"] = {"username": name, "uid": "u-1", "groups": ["system:authenticated"]}
        return web.json_response({**body, "status": status})

    async def _access(self, request: web.Request) -> web.Response:
        body = await request.json()
        spec = body["spec"]
        self.access_reviews.append(spec)
        attrs = spec["nonResourceAttributes"]
        allowed = (spec["user"], attrs["path"], attrs["verb"]) in ALLOWED
        reason = "" if allowed else "no RBAC policy matched"
        return web.json_response({**body, "status": {"allowed": allowed, "reason": reason}})

    def client(self) -> ApiClient:
        configuration = k8s_client.Configuration()
        configuration.host = self.url
        return ApiClient(configuration, retries=0)


@pytest.fixture
async def api() -> AsyncIterator[FakeApiServer]:
    server = FakeApiServer()
    await server.start()
    yield server
    assert server.runner is not None
    await server.runner.cleanup()


async def _serve(
    auth: DelegatedAuth, tls: ssl.SSLContext | None = None
) -> AsyncIterator[Endpoints]:
    endpoints = Endpoints(
        metrics=Metrics(),
        synced=OpenGate(),
        host="127.0.0.1",
        port=0,
        configz={"parallelism": 16},
        tls=tls or server_context(None, None),
        auth=auth,
        field="secure_port",
    )
    await endpoints.start()
    try:
        yield endpoints
    finally:
        await endpoints.stop()
        await auth.close()


@pytest.fixture
async def secure(api: FakeApiServer) -> AsyncIterator[Endpoints]:
    async for endpoints in _serve(DelegatedAuth(api.client(), api.client())):
        yield endpoints


async def _get(endpoints: Endpoints, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"https://127.0.0.1:{endpoints.port}{path}", headers=headers, ssl=False) as r,
    ):
        return r.status, await r.text()


async def test_a_reader_scrapes_metrics(secure: Endpoints, api: FakeApiServer) -> None:
    status, body = await _get(secure, "/metrics", "reader-token")
    assert status == 200
    assert "# HELP scheduler_pending_pods" in body
    [review] = api.access_reviews
    assert review["user"] == "system:serviceaccount:mon:prometheus"
    assert review["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}


async def test_a_user_without_the_right_is_forbidden(secure: Endpoints) -> None:
    status, body = await _get(secure, "/metrics", "other-token")
    assert status == 403
    assert 'forbidden: User \\"alice\\" cannot get path \\"/metrics\\"' in body


async def test_no_token_is_anonymous_and_forbidden(secure: Endpoints, api: FakeApiServer) -> None:
    """kube's delegated authentication has anonymous on: the SAR decides (403), no 401."""
    status, body = await _get(secure, "/metrics")
    assert status == 403
    assert "system:anonymous" in body
    assert api.token_reviews == []
    assert api.access_reviews[0]["groups"] == ["system:unauthenticated"]


async def test_a_token_the_server_rejects_is_401_on_every_path(secure: Endpoints) -> None:
    for path in ("/metrics", "/healthz"):
        status, body = await _get(secure, path, "stolen-token")
        assert status == 401, path
        assert '"reason": "Unauthorized"' in body


async def test_health_paths_are_always_allowed(secure: Endpoints, api: FakeApiServer) -> None:
    for path in ("/healthz", "/readyz", "/livez"):
        assert await _get(secure, path) == (200, "ok")
    assert api.access_reviews == []


async def test_configz_needs_the_right_too(secure: Endpoints) -> None:
    assert (await _get(secure, "/configz", "reader-token"))[0] == 403


async def test_reviews_are_cached(secure: Endpoints, api: FakeApiServer) -> None:
    for _ in range(3):
        assert (await _get(secure, "/metrics", "reader-token"))[0] == 200
    assert api.token_reviews == ["reader-token"]
    assert len(api.access_reviews) == 1


async def test_reviews_expire_after_their_ttl(api: FakeApiServer) -> None:
    clock = [0.0]
    auth = DelegatedAuth(api.client(), api.client(), now=lambda: clock[0])
    user = await auth.authenticate("reader-token")
    assert user is not None
    assert (await auth.authorize(user, "/metrics", "get")).allowed
    clock[0] = 9.9
    await auth.authenticate("reader-token")
    await auth.authorize(user, "/metrics", "get")
    assert (len(api.token_reviews), len(api.access_reviews)) == (1, 1)
    clock[0] = 10.1  # kube's 10 s token and SAR cache TTLs
    await auth.authenticate("reader-token")
    await auth.authorize(user, "/metrics", "get")
    assert (len(api.token_reviews), len(api.access_reviews)) == (2, 2)
    await auth.close()


async def test_system_masters_skip_the_review(api: FakeApiServer) -> None:
    from scheduler.kube.delegated_auth import User

    auth = DelegatedAuth(None, api.client())
    assert (await auth.authorize(User("admin", groups=("system:masters",)), "/x", "get")).allowed
    assert api.access_reviews == []
    await auth.close()


async def test_without_review_clients_only_health_is_served() -> None:
    async for endpoints in _serve(DelegatedAuth(None, None)):
        assert (await _get(endpoints, "/healthz"))[0] == 200
        assert (await _get(endpoints, "/metrics", "reader-token"))[0] == 403


async def test_the_self_signed_certificate_names_localhost(secure: Endpoints) -> None:
    pem = await asyncio.to_thread(ssl.get_server_certificate, ("127.0.0.1", secure.port))
    cert = x509.load_pem_x509_certificate(pem.encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert cert.issuer == cert.subject


async def test_the_given_certificate_is_served(api: FakeApiServer, tmp_path: Path) -> None:
    cert_pem, key_pem = self_signed("scheduler.example")
    (tmp_path / "tls.crt").write_bytes(cert_pem)
    (tmp_path / "tls.key").write_bytes(key_pem)
    tls = server_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    async for endpoints in _serve(DelegatedAuth(api.client(), api.client()), tls):
        served = await asyncio.to_thread(ssl.get_server_certificate, ("127.0.0.1", endpoints.port))
        assert x509.load_pem_x509_certificate(served.encode()) == (
            x509.load_pem_x509_certificate(cert_pem)
        )
        # A client that trusts it (and checks the name) gets through TLS.
        trusting = ssl.create_default_context(cafile=str(tmp_path / "tls.crt"))
        trusting.check_hostname = False
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"https://127.0.0.1:{endpoints.port}/healthz", ssl=trusting) as r,
        ):
            assert r.status == 200


def test_a_pair_that_does_not_load_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("not a certificate")
    (tmp_path / "tls.key").write_text("not a key")
    with pytest.raises(SettingsError) as caught:
        server_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    assert caught.value.field == "tls_cert_file"
