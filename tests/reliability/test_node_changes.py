"""Nodes removed or tainted NoSchedule while a batch is walking them: no pod bound there after
the scheduler's cache saw the change, and the scheduler keeps going.

One-pod-per-node pods (3 CPU on 4-CPU nodes) are batched: after one full pass, each next pod
is hinted the next node of the ranked list (KEP-5598), so every empty node is in the batch
state. While the burst runs, empty nodes of that list are deleted or tainted, one every
40 ms. A hint for such a node must be refused (the node left the cache, or TaintToleration
fails its recheck) and the pod placed by a full pass elsewhere.

"After the cache saw it" is judged by time: the emulator stamps every bind and every node
change as it commits them (a store listener, on its own loop), and a bind to a changed node
more than ``MARGIN`` after the change is a violation. The margin covers the watch delivery
to the scheduler and a bind already on the wire; the figures record the largest lag seen.
"""

from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim import workload as simwork
from scheduler.sim.discovery import NODES, PODS
from tests.reliability import invariants
from tests.reliability.support import Figures, MakeSim, Workload, create_paced, settle, verify
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from scheduler.sim.store import Change

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(120)]

MARGIN = 0.25
"""Seconds after a node change within which a bind to it may still be one decided before."""
CHANGES = 16
"""Nodes changed mid-burst: half deleted, half tainted."""
NO_SCHEDULE = {"key": "maintenance", "value": "now", "effect": "NoSchedule"}


class Stamps:
    """Commit times of binds and node changes, recorded on the emulator's loop."""

    def __init__(self) -> None:
        self.binds: dict[str, tuple[float, str]] = {}
        self.changes: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, ch: Change) -> None:
        now = time.monotonic()
        obj = ch.record.obj
        if ch.storage == PODS.storage_key and ch.type != "DELETED":
            node = (obj.get("spec") or {}).get("nodeName")
            was = ((ch.prev.obj if ch.prev else {}).get("spec") or {}).get("nodeName")
            if node and not was:
                with self._lock:
                    self.binds[invariants.pod_key(obj)] = (now, node)
        elif ch.storage == NODES.storage_key:
            name = obj["metadata"]["name"]
            tainted = any(
                t.get("key") == "maintenance" for t in (obj.get("spec") or {}).get("taints") or []
            )
            if ch.type == "DELETED" or tainted:
                with self._lock:
                    self.changes.setdefault(name, now)


def test_nodes_deleted_or_tainted_mid_batch_get_no_new_pods(
    make_sim: MakeSim, tmp_path: Any, figures: Figures
) -> None:
    sim, api, kubeconfig = make_sim()
    stamps = Stamps()
    sim.run_sync(lambda: sim.store.listeners.append(stamps))
    nodes = simwork.make_nodes(60, prefix="w-", labels={"pool": "walk"})
    walkers = simwork.make_pods(
        40,
        prefix="walker-",
        scheduler_name=SCHEDULER,
        cpu="3",
        memory="1Gi",
        annotations=BATCHING,
        labels={"kind": "walker"},
    )
    too_big = simwork.make_pods(
        5, prefix="too-big-", scheduler_name=SCHEDULER, cpu="5", labels={"kind": "big"}
    )
    work = Workload(
        nodes=nodes,
        pods=walkers + too_big,
        must_bind={invariants.pod_key(p) for p in walkers},
        must_fail={invariants.pod_key(p) for p in too_big},
    )
    create_paced(api, nodes)
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    deleted: list[str] = []
    tainted: list[str] = []
    try:
        proc.wait_ready()
        started = time.monotonic()
        creator = threading.Thread(target=create_paced, args=(api, work.pods, 60.0), daemon=True)
        creator.start()
        rng = random.Random(5)
        time.sleep(0.15)  # the first full pass has ranked the nodes
        for i in range(CHANGES):
            used = {stamps.binds[k][1] for k in list(stamps.binds)}
            empty = sorted(
                n["metadata"]["name"]
                for n in nodes
                if n["metadata"]["name"] not in used | set(deleted) | set(tainted)
            )
            name = rng.choice(empty)
            if i % 2:
                api.delete_node(name)
                deleted.append(name)
            else:
                api.patch_node(name, {"spec": {"taints": [NO_SCHEDULE]}})
                tainted.append(name)
            time.sleep(0.04)
        creator.join(timeout=30)
        assert not creator.is_alive()
        ok, _, pods = settle(api, work, [proc], timeout=40)
        seconds = round(time.monotonic() - started, 1)
        assert proc.alive(), f"the scheduler died:\n{proc.stderr()[-3000:]}"
        report = verify(api, work, pods, deleted_nodes=deleted, unfenced_nodes=tainted)
        assert ok, "did not settle"

        late: list[str] = []
        lags: list[float] = []
        for key, (at, node) in stamps.binds.items():
            changed = stamps.changes.get(node)
            if changed is None or at <= changed:
                continue
            lags.append(at - changed)
            if at - changed > MARGIN:
                late.append(f"{key} bound to {node} {at - changed:.3f}s after the change")
        assert not late, late
        assert len(stamps.changes) == CHANGES
        # The ranked list really held the changed nodes: some hints were refused for them.
        refused = proc.metric("scheduler_batch_cache_flushed_total", reason="node_missing") + (
            proc.metric("batch_scheduler_batch_divergence_total", kind="hint_infeasible")
        )
        assert proc.metric("scheduler_batch_attempts_total", result="hint_used") >= 20
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_nodes") == 60 - CHANGES // 2, 5)
        figures.record(
            **report.figures(),
            nodes_deleted=len(deleted),
            nodes_tainted=len(tainted),
            binds_to_changed_nodes_after_change=len(lags),
            max_lag_s=round(max(lags, default=0.0), 3),
            hints_refused=int(refused),
            hints_used=int(proc.metric("scheduler_batch_attempts_total", result="hint_used")),
            settle_s=seconds,
        )
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
