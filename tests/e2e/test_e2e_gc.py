"""The runtime freezes what it holds once synced (docs/performance.md, "garbage
collector") and leaves the process's collector as it found it when it stops."""

from __future__ import annotations

import asyncio
import gc

from scheduler.app.runtime import Runtime
from scheduler.app.settings import SchedulerSettings
from scheduler.framework.config import default_config
from scheduler.sim.process import SimProcess


async def test_the_synced_state_is_frozen_and_unfrozen_at_stop() -> None:
    assert gc.get_freeze_count() == 0
    with SimProcess(["--nodes", "3"]) as sim:
        settings = SchedulerSettings(kubeconfig=sim.kubeconfig, metrics_addr="", secure_port=0)
        runtime = Runtime(settings, default_config(), handle_signals=False)
        task = asyncio.create_task(runtime.run())
        try:
            for _ in range(300):
                if gc.get_freeze_count() or task.done():
                    break
                await asyncio.sleep(0.1)
            frozen = gc.get_freeze_count()
            synced = runtime.synced is not None and runtime.synced.is_open()
        finally:
            runtime.stop()
            await asyncio.wait({task}, timeout=30)
    assert synced
    assert frozen > 1000  # the imported modules and the listed cluster at least
    assert gc.get_freeze_count() == 0
