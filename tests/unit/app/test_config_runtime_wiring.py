"""What the runtime takes from the configuration's clientConnection: the kubeconfig (unless
``--kubeconfig``) and the client-side rate limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.app import runtime
from scheduler.app.settings import SchedulerSettings
from scheduler.framework.config import load_config

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class _Stop(Exception):
    """Raised by the client factory once it has seen its arguments."""


@pytest.fixture
def client_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    calls: list[tuple[Any, dict[str, Any]]] = []

    async def create_client(kubeconfig: Any, **kwargs: Any) -> Any:
        calls.append((kubeconfig, kwargs))
        raise _Stop

    monkeypatch.setattr(runtime, "create_client", create_client)
    return calls


async def _start(settings: SchedulerSettings, doc: dict[str, Any]) -> None:
    with pytest.raises(_Stop):
        await runtime.Runtime(settings, load_config(doc), handle_signals=False).run()


async def test_client_connection_reaches_the_client(
    client_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    connection = {"kubeconfig": "/etc/kube/scheduler.conf", "qps": 20, "burst": 40}
    await _start(SchedulerSettings(), {**HEAD, "clientConnection": connection})
    [(kubeconfig, kwargs)] = client_calls
    assert kubeconfig == "/etc/kube/scheduler.conf"
    assert (kwargs["qps"], kwargs["burst"]) == (20.0, 40)


async def test_kubeconfig_flag_wins_and_no_qps_means_no_limit(
    client_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    settings = SchedulerSettings(kubeconfig=Path("/flag.kubeconfig"))
    await _start(settings, {**HEAD, "clientConnection": {"kubeconfig": "/file.kubeconfig"}})
    [(kubeconfig, kwargs)] = client_calls
    assert kubeconfig == "/flag.kubeconfig"
    assert kwargs["qps"] is None


async def test_no_kubeconfig_anywhere_is_the_default_search(
    client_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    await _start(SchedulerSettings(), {})
    [(kubeconfig, _)] = client_calls
    assert kubeconfig is None


async def test_the_connection_pool_holds_every_bind_in_flight(
    client_calls: list[tuple[Any, dict[str, Any]]],
) -> None:
    """A bind holds an HTTP/1.1 connection: the pool covers the binds and the rest."""
    settings = SchedulerSettings()
    await _start(settings, {})
    [(_, kwargs)] = client_calls
    assert settings.binder.concurrency == 64
    assert kwargs["pool_size"] == 64 + runtime.CONNECTIONS_BESIDE_BINDS
