"""kubeconfig: credentials from the official loader, refused when unusable, and the
Authorization header reused for a minute, read again after a 401 (no I/O here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from kubernetes import client as k8s_client

from scheduler.kube.kubeconfig import (
    CREDENTIAL_REUSE_S,
    KubeconfigError,
    ServerAccess,
    load_configuration,
)

if TYPE_CHECKING:
    from pathlib import Path


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _access(token: str = "t1") -> tuple[ServerAccess, k8s_client.Configuration, _Clock]:
    configuration = k8s_client.Configuration()
    configuration.host = "https://127.0.0.1:6443/"
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    clock = _Clock()
    return ServerAccess(configuration, default_namespace="team", clock=clock), configuration, clock


@pytest.mark.parametrize(
    ("advance", "forget", "expected"),
    [
        pytest.param(CREDENTIAL_REUSE_S - 1, False, "Bearer t1", id="reused-within-a-minute"),
        pytest.param(CREDENTIAL_REUSE_S, False, "Bearer t2", id="read-again-after-a-minute"),
        pytest.param(1.0, True, "Bearer t2", id="read-again-at-once-after-a-401"),
    ],
)
def test_the_authorization_header_is_reused_then_read_again(
    advance: float, forget: bool, expected: str
) -> None:
    """A rotated token is picked up after CREDENTIAL_REUSE_S, or at once after a 401."""
    access, configuration, clock = _access()
    assert access.authorization() == "Bearer t1"
    configuration.api_key = {"authorization": "t2"}
    clock.now += advance
    if forget:
        access.forget_authorization()
    assert access.authorization() == expected


def test_credentials_for_kopf_carry_server_token_and_namespace() -> None:
    """The server without its trailing slash, the bare token, the context's namespace."""
    access, _, _ = _access()
    creds = access.credentials()
    assert (creds.server, creds.token, creds.default_namespace) == (
        "https://127.0.0.1:6443",
        "t1",
        "team",
    )
    assert "t1" not in repr(creds)


def test_plain_http_needs_no_tls_context() -> None:
    """An http:// server gets no TLS context (aiohttp's ``ssl=False``)."""
    configuration = k8s_client.Configuration()
    configuration.host = "http://127.0.0.1:8080"
    assert ServerAccess(configuration).ssl_context() is False


def _kubeconfig(server: str = "https://127.0.0.1:6443", user: str = "token: abc") -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c1, cluster: {{server: '{server}'}}}}]\n"
        f"users: [{{name: u1, user: {{{user}}}}}]\n"
        "contexts: [{name: x, context: {cluster: c1, user: u1, namespace: team}}]\n"
        "current-context: x\n"
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param(
            _kubeconfig(user='token: "abc\\n"'),
            "users[name=u1].user.token: contains a line break",
            id="token-newline",
        ),
        pytest.param(
            _kubeconfig(user='token: "ab\\x07c"'),
            "users[name=u1].user.token: contains the control character U+0007",
            id="token-bell",
        ),
        pytest.param(
            _kubeconfig(server="https://admin:s3cret@127.0.0.1:6443"),
            "clusters[name=c1].cluster.server: must not contain credentials",
            id="credentials-in-url",
        ),
        pytest.param("\u00ff\u00fe binary", "cannot load:", id="not-a-kubeconfig"),
        pytest.param("apiVersion: v1\nkind: Config\n", "cannot load:", id="no-context"),
    ],
)
def test_unusable_kubeconfig_is_one_line_naming_file_and_field(
    tmp_path: Path, text: str, needle: str
) -> None:
    """Refused at load, before any request, never echoing a secret."""
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(KubeconfigError) as caught:
        load_configuration(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert needle in message
    assert "\n" not in message
    assert "s3cret" not in message
    assert "abc" not in message


def test_binary_kubeconfig_is_a_kubeconfig_error(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(bytes(range(128, 256)))
    with pytest.raises(KubeconfigError, match="not UTF-8 text"):
        load_configuration(str(path))


def test_good_kubeconfig_loads_with_namespace(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(_kubeconfig())
    configuration, namespace = load_configuration(str(path))
    assert configuration.host == "https://127.0.0.1:6443"
    assert namespace == "team"
