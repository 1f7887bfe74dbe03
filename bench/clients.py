"""Bind throughput of the candidate API clients against the emulator (not a test).

Run: ``.venv/bin/python -m bench.clients [pods] [concurrency] [repeats]``.
For each client a fresh ``SimProcess`` (own process, so its CPU is not ours) gets
``pods`` pending pods up front; the client then binds all of them with ``concurrency``
binds in flight and the binds/s are printed (median over repeats). Candidates:

- ``thin-aiohttp``: :class:`scheduler.kube.client.ApiClient` (what we ship);
- ``kubernetes.aio typed``: ``CoreV1Api.create_namespaced_pod_binding`` with ``V1Binding``;
- ``kubernetes.aio raw``: ``ApiClient.call_api`` with a dict body (no model round trip).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kubernetes.aio import client as aio_client
from kubernetes.aio import config as aio_config

from scheduler.kube import client as kube_client
from scheduler.sim import workload
from scheduler.sim.process import SimProcess

BindFn = Callable[[str, str, str], Awaitable[None]]


def _body(name: str, uid: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


async def _thin(kubeconfig: str) -> tuple[BindFn, Callable[[], Awaitable[None]]]:
    api = await kube_client.create_client(kubeconfig)

    async def bind(name: str, uid: str, node: str) -> None:
        await api.request(
            "POST", f"/api/v1/namespaces/default/pods/{name}/binding", body=_body(name, uid, node)
        )

    return bind, api.close


async def _aio(kubeconfig: str, typed: bool) -> tuple[BindFn, Callable[[], Awaitable[None]]]:
    cfg = aio_client.Configuration()
    # kubernetes.aio's config loader is unannotated although the package ships py.typed.
    await aio_config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, client_configuration=cfg, persist_config=False
    )
    cfg.connection_pool_maxsize = 64
    api = aio_client.ApiClient(cfg)
    core = aio_client.CoreV1Api(api)
    auth = await cfg.get_api_key_with_prefix("BearerToken")  # async in kubernetes.aio
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if auth:
        headers["authorization"] = auth

    async def typed_bind(name: str, uid: str, node: str) -> None:
        # The typed call itself cannot parse the Status a bind returns (pydantic rejects
        # V1Binding.target=None, as the sync client's old "target must not be None"), so
        # the documented workaround: the typed request without response deserialisation.
        resp = await core.create_namespaced_pod_binding_without_preload_content(
            name,
            "default",
            aio_client.V1Binding(
                metadata=aio_client.V1ObjectMeta(name=name, namespace="default", uid=uid),
                target=aio_client.V1ObjectReference(api_version="v1", kind="Node", name=node),
            ),
        )
        await resp.read()
        if resp.status >= 300:
            raise RuntimeError(resp.status)

    async def raw_bind(name: str, uid: str, node: str) -> None:
        resp = await api.call_api(
            "POST",
            f"{cfg.host}/api/v1/namespaces/default/pods/{name}/binding",
            header_params=dict(headers),
            body=_body(name, uid, node),
        )
        await resp.read()  # type: ignore[no-untyped-call]  # RESTResponse.read is unannotated
        if resp.status >= 300:
            raise RuntimeError(resp.status)

    return (typed_bind if typed else raw_bind), api.close


async def _run(
    make: Callable[[str], Awaitable[tuple[BindFn, Callable[[], Awaitable[None]]]]],
    pods: int,
    concurrency: int,
) -> float:
    with SimProcess(["--nodes", "10"], token="measure-token") as sim:
        await workload.create_all(
            sim.url, workload.make_pods(pods), token="measure-token", concurrency=16
        )
        lister = await kube_client.create_client(str(sim.kubeconfig))
        items = (await lister.request("GET", "/api/v1/namespaces/default/pods"))["items"]
        await lister.close()
        todo = [(p["metadata"]["name"], p["metadata"]["uid"]) for p in items]
        bind, close = await make(str(sim.kubeconfig))
        # warm the pool outside the timed section
        name, uid = todo.pop()
        await bind(name, uid, "node-0")
        start = time.perf_counter()
        done = 0

        async def worker(i: int) -> None:
            nonlocal done
            while todo:
                name, uid = todo.pop()
                await bind(name, uid, f"node-{i % 10}")
                done += 1

        async with asyncio.TaskGroup() as tg:
            for i in range(concurrency):
                tg.create_task(worker(i))
        elapsed = time.perf_counter() - start
        await close()
        return done / elapsed


async def main() -> None:
    pods = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    candidates: dict[
        str, Callable[[str], Awaitable[tuple[BindFn, Callable[[], Awaitable[None]]]]]
    ] = {
        "thin-aiohttp": _thin,
        "kubernetes.aio typed": lambda k: _aio(k, True),
        "kubernetes.aio raw": lambda k: _aio(k, False),
    }
    results: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):  # interleaved so drift affects every candidate alike
        for name, make in candidates.items():
            results[name].append(await _run(make, pods, concurrency))
    print(f"pods={pods} concurrency={concurrency} repeats={repeats}")
    for name, rates in results.items():
        print(
            f"{name:24s} median {statistics.median(rates):7.0f} binds/s  "
            f"(runs: {', '.join(f'{r:.0f}' for r in rates)})"
        )


if __name__ == "__main__":
    asyncio.run(main())
