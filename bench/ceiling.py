"""The bind ceiling: a bare client process that watches pods and binds each new pending one
to a pre-chosen node, with no decision at all (``python -m bench.e2e ceiling``).

What the fastest possible scheduler would achieve against the same API server on this
machine, creation included: the same watch, the same binds, the scheduler's bind concurrency
(:mod:`bench.e2e` runs it against the emulator, :mod:`bench.real` against kube-apiserver).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import ssl
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from bench.burst import BIND_CONCURRENCY, PODS_PATH

if TYPE_CHECKING:
    from scheduler.kube.client import Credentials


async def ceiling_main(kubeconfig: str, concurrency: int, nodes: int, port: int) -> None:
    """Watch pods and bind each new pending one round robin over ``node-0..`` with
    ``concurrency`` binds in flight (a scheduler with free decisions, but the same watch and
    the same binds). Serves 200 on ``127.0.0.1:port/readyz`` once its watch is open."""
    from scheduler.kube.client import create_client

    api = await create_client(kubeconfig)
    todo: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
    watching = asyncio.Event()
    try:
        listed = await api.request("GET", PODS_PATH, params={"limit": 1})
        rv = listed["metadata"]["resourceVersion"]

        async def watch_pending() -> None:
            creds = api.credentials()
            headers = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
            params = {"watch": "true", "resourceVersion": rv}
            connector = aiohttp.TCPConnector(ssl=_ssl_for(creds))
            async with (
                aiohttp.ClientSession(
                    creds.server, headers=headers, connector=connector
                ) as session,
                session.get(PODS_PATH, params=params) as resp,
            ):
                watching.set()
                async for line in resp.content:
                    event = json.loads(line)
                    pod = event["object"]
                    if event["type"] == "ADDED" and not pod["spec"].get("nodeName"):
                        meta = pod["metadata"]
                        todo.put_nowait((meta["namespace"], meta["name"], meta["uid"]))

        index = 0

        async def worker() -> None:
            nonlocal index
            while True:
                namespace, name, uid = await todo.get()
                node = f"node-{index % nodes}"
                index += 1
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": namespace, "uid": uid},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                }
                await api.request(
                    "POST",
                    f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
                    body=body,
                    decode=False,
                )

        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(watch_pending())]
            tasks += [tg.create_task(worker()) for _ in range(concurrency)]
            await watching.wait()
            app = web.Application()
            app.router.add_get("/readyz", _ready)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            await stop.wait()
            for task in tasks:
                task.cancel()
        await runner.cleanup()
    finally:
        await api.close()


async def _ready(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def _ssl_for(creds: Credentials) -> ssl.SSLContext | bool:
    """TLS for a watch beside the client (the real API server: our CA, maybe a client cert)."""
    if not creds.server.startswith("https"):
        return False
    context = ssl.create_default_context(cafile=creds.ca_path)
    if creds.cert_path:
        context.load_cert_chain(creds.cert_path, creds.key_path)
    if creds.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def main(argv: list[str]) -> int:
    """``python -m bench.e2e ceiling --kubeconfig F --nodes N --port P [--concurrency C]``."""
    p = argparse.ArgumentParser(prog="python -m bench.e2e ceiling")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--concurrency", type=int, default=BIND_CONCURRENCY)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args(argv)
    asyncio.run(ceiling_main(a.kubeconfig, a.concurrency, a.nodes, a.port))
    return 0
