"""SimProcess: the emulator in its own process, started by the CLI, with a kubeconfig."""

from __future__ import annotations

import aiohttp
import yaml

from scheduler.sim import workload
from scheduler.sim.process import SimProcess


async def test_sim_process_serves_and_stops() -> None:
    """The child announces its URL, writes a kubeconfig, serves nodes, and exits on stop."""
    with SimProcess(["--nodes", "4"], token="t") as sim:
        config = yaml.safe_load(sim.kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == sim.url
        assert config["users"][0]["user"]["token"] == "t"
        pods = workload.make_pods(30)
        assert await workload.create_all(sim.url, pods, token="t") == 30
        headers = {"Authorization": "Bearer t"}
        async with (
            aiohttp.ClientSession(sim.url, headers=headers) as session,
            session.get("/sim/stats") as resp,
        ):
            stats = await resp.json()
        assert stats["objects"] == {
            "namespaces": 4,
            "nodes": 4,
            "pods": 30,
            "priorityclasses.scheduling.k8s.io": 2,  # the system classes, as kube has them
            "services": 1,  # default/kubernetes, as kube-apiserver creates it
        }
        proc = sim.proc
    assert proc is not None
    assert proc.returncode == 0
