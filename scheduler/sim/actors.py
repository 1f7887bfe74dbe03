"""Background actors beside the API: a kubelet-like runner and a rogue binder.

* :class:`Kubelet` marks bound pods Running after a delay, as a node agent would, so
  a workload's phase moves on and tools show something real.
* :class:`RogueBinder` plays another scheduler: it binds a seeded fraction of new
  pending pods itself, either after a short delay or at the moment our scheduler's
  bind request for that pod arrives, so the scheduler sees real 409 Conflicts.
  It picks a node the pod fits on (cpu, memory, pod count, nodeSelector, NoSchedule
  taints), so it does not overcommit nodes behind the scheduler's back.

Both subscribe to store changes and write through the store on the server's loop.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from scheduler.sim import binding, errors
from scheduler.sim.discovery import NODES, PODS
from scheduler.sim.store import ADDED, Change, Store, now_rfc3339

if TYPE_CHECKING:
    from scheduler.sim.faults import Faults

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}


def quantity(value: Any) -> float:
    """A Kubernetes quantity as a float (approximate is enough for the rogue's fit check)."""
    m = _QUANTITY.match(str(value).strip())
    if not m or m.group(2) not in _SUFFIX:
        return 0.0
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def _requests(pod: dict[str, Any]) -> dict[str, float]:
    total = {"cpu": 0.0, "memory": 0.0}
    for c in pod.get("spec", {}).get("containers") or []:
        req = (c.get("resources") or {}).get("requests") or {}
        for r in total:
            total[r] += quantity(req.get(r, 0))
    return total


class Kubelet:
    """Marks pods Running ``delay`` seconds after they are bound."""

    def __init__(self, store: Store, *, delay: float = 0.1) -> None:
        self.store = store
        self.delay = delay
        store.listeners.append(self._on_change)

    def _on_change(self, ch: Change) -> None:
        if ch.storage != PODS.storage_key or ch.type == "DELETED":
            return
        pod = ch.record.obj
        was = ch.prev.obj.get("spec", {}).get("nodeName") if ch.prev else None
        if pod.get("spec", {}).get("nodeName") and not was:
            loop = asyncio.get_running_loop()
            loop.call_later(self.delay, self._run, ch.key, pod["metadata"]["uid"])

    def _run(self, key: tuple[str, str], uid: str) -> None:
        rec = self.store.try_get(PODS, *key)
        if rec is None or rec.obj["metadata"]["uid"] != uid:
            return
        pod = rec.obj
        status = pod.get("status") or {}
        if status.get("phase") != "Pending":
            return
        now = now_rfc3339()
        conds = status.get("conditions")
        for t in ("Initialized", "Ready", "ContainersReady"):
            conds = binding.set_condition(
                conds,
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now},
            )
        new_status = {
            **status,
            "phase": "Running",
            "startTime": now,
            "conditions": conds,
            "hostIP": "10.0.0.1",
            "podIP": "10.244.0.1",
        }
        self.store.update(
            PODS, {**pod, "metadata": dict(pod["metadata"]), "status": new_status}, expect_rv=None
        )


class RogueBinder:
    """Binds a seeded fraction of new pending pods before the real scheduler can."""

    def __init__(self, store: Store, faults: Faults) -> None:
        self.store = store
        self.faults = faults
        self.targets: set[tuple[str, str]] = set()
        store.listeners.append(self._on_change)

    def _on_change(self, ch: Change) -> None:
        cfg = self.faults.config
        if ch.storage != PODS.storage_key or ch.type != ADDED or cfg.rogue_bind_fraction <= 0:
            return
        spec = ch.record.obj.get("spec", {})
        if spec.get("nodeName"):
            return
        if cfg.rogue_scheduler_name and spec.get("schedulerName") != cfg.rogue_scheduler_name:
            return
        if self.faults.rng.random() >= cfg.rogue_bind_fraction:
            return
        self.targets.add(ch.key)
        asyncio.get_running_loop().call_later(cfg.rogue_delay, self.intercept, *ch.key)

    def intercept(self, namespace: str, name: str) -> None:
        """Bind the pod now if it is a target (called before every real bind, and on timer)."""
        if (namespace, name) not in self.targets:
            return
        self.targets.discard((namespace, name))
        rec = self.store.try_get(PODS, namespace, name)
        if rec is None or rec.obj.get("spec", {}).get("nodeName"):
            return
        node = self._pick_node(rec.obj)
        if node is None:
            return
        try:
            binding.bind(self.store, namespace, name, node)
        except errors.ApiError:
            return
        self.faults.count("rogue_binds")

    def _pick_node(self, pod: dict[str, Any]) -> str | None:
        used: dict[str, dict[str, float]] = {}
        for rec in self.store.table(PODS).values():
            p = rec.obj
            node = p.get("spec", {}).get("nodeName")
            if not node or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                continue
            u = used.setdefault(node, {"cpu": 0.0, "memory": 0.0, "pods": 0.0})
            for r, q in _requests(p).items():
                u[r] += q
            u["pods"] += 1
        want = _requests(pod)
        selector = pod.get("spec", {}).get("nodeSelector") or {}
        tolerated = {t.get("key") for t in pod.get("spec", {}).get("tolerations") or []}
        fits: list[str] = []
        for rec in self.store.table(NODES).values():
            n = rec.obj
            name = n["metadata"]["name"]
            labels = n["metadata"].get("labels") or {}
            if n.get("spec", {}).get("unschedulable"):
                continue
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            if any(
                t.get("effect") in ("NoSchedule", "NoExecute") and t.get("key") not in tolerated
                for t in n.get("spec", {}).get("taints") or []
            ):
                continue
            alloc = n.get("status", {}).get("allocatable") or {}
            u = used.get(name, {"cpu": 0.0, "memory": 0.0, "pods": 0.0})
            if u["pods"] + 1 > quantity(alloc.get("pods", 110)):
                continue
            if any(u[r] + want[r] > quantity(alloc.get(r, 0)) for r in want if want[r] > 0):
                continue
            fits.append(name)
        return self.faults.rng.choice(sorted(fits)) if fits else None
