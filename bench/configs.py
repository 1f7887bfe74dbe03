"""The KubeSchedulerConfiguration the side-by-side benchmarks give both schedulers
(:mod:`bench.real`, :mod:`bench.parity`): one document per kind, for ours or for
kube-scheduler (which also needs its client connection and no leader election)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

CONFIGS = ("default", "list")
"""``default``: kube's defaults (PodTopologySpread ``defaultingType: System``); ``list``:
``defaultingType: List`` without ``defaultConstraints``, what KEP-5598 tells admins to set."""


def scheduler_config(
    kind: str,
    *,
    scheduler_name: str,
    kube: bool,
    kubeconfig: Path | None = None,
    qps: int = 0,
    preemption: bool = True,
) -> dict[str, Any]:
    """The configuration of ``kind`` (:data:`CONFIGS`) with one profile, ``scheduler_name``;
    for kube-scheduler (``kube``) with ``kubeconfig`` and client ``qps`` (= burst).
    ``preemption=False`` disables DefaultPreemption (PostFilter)."""
    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    if not preemption:
        profile["plugins"] = {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}
    if kind == "list":
        args = {"defaultingType": "List"}
        profile["pluginConfig"] = [{"name": "PodTopologySpread", "args": args}]
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    if kube:
        config["leaderElection"] = {"leaderElect": False}
        config["clientConnection"] = {"kubeconfig": str(kubeconfig), "qps": qps, "burst": qps}
    return config
