"""``batch-scheduler explain``: why one pending pod of a snapshot fits where it fits, offline.

The cluster is loaded as ``simulate`` loads it (``app.cluster_snapshot``: the same cache,
profiles and Signer as ``run``), then one pod is diagnosed (``framework.explanation``): every
node's PreFilter/Filter verdict as kube's Status, and for the feasible nodes each Score
plugin's raw score, its NormalizeScore result, its weight and the weighted value, nodes by
total. kube-scheduler has no such command; the nearest is its plugin score log at V(10).

Read-only: no other pod is scheduled, nothing is assumed, and PostFilter (preemption) is not
run. The snapshot's bound pods are on their nodes; pending pods of our profiles are queued as
``run`` would queue them, so their ``status.nominatedNodeName`` counts in Filter as in a full
pass. Pending pods of other schedulers are left out, as ``simulate`` leaves them out.

Batching: the pod is signed by the profile's Signer under ``--batching``; unsignable, the
report names the refusing plugin (or pod-level rule). A pod that did not opt in is also
signed as if it had, so the answer says whether opting in would let it batch.

The report (``--output json``) is one object with these keys, all always present: ``pod``,
``profile``, ``num_nodes``, ``feasible``, ``best`` (nodes with the highest total),
``pre_filter`` (``code``, ``plugin``, ``reasons``, ``narrowed_by``), ``nodes`` (each:
``node``, ``feasible``, ``point``, ``plugin``, ``code``, ``reasons``, ``details`` (the
rejecting plugin's own account where it gives one: DynamicResources names the claim and
request a node cannot satisfy and why), ``total``, ``scores``
of ``plugin``, ``raw``, ``normalized``, ``weight``, ``weighted``), ``nominated_pods`` (node
→ the pods nominated there that Filter counted), ``fit_error``, ``batching`` (``mode``,
``signable``, ``path``: exact, hint or full, ``refused_by``, ``reason``, ``if_opted_in``),
``gated`` (kube's ``SchedulingGated`` reason and the gates, or null: a gated pod is never
attempted, and that is the answer; the verdicts say what a pass would find once the gates
are gone), ``binding_points`` (the profile's plugins at ``pre_enqueue``, ``reserve``,
``permit``, ``pre_bind`` and ``post_bind``: the points around the bind, which act on the
chosen node and are not run here; a note says so when there are any besides the in-tree
ones), ``group`` (a gang member's group cycle run on the snapshot, ``app.explain_group``;
null for a pod of no group or without GenericWorkload), ``omitted`` (nodes left out by
``--top N`` or ``--node NAME``, :func:`select`), ``notes``.

This module computes the report; ``app.explain_render`` prints it (table or JSON).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from scheduler.app import cluster_snapshot
from scheduler.app.core import build_scheduler
from scheduler.app.explain_group import explain_group
from scheduler.app.local_binder import LocalBinder
from scheduler.app.simulate import GATED_MESSAGE, GATED_REASON
from scheduler.app.snapshot_file import InputError, Snapshot, read_snapshot_file
from scheduler.batching.signature import (
    OPTED_OUT,
    VOLUMES,
    BatchingMode,
    Signature,
    Signer,
    is_exact,
)
from scheduler.clock import FakeClock
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework import explanation as ex
from scheduler.framework.status import CODE_LABELS, Code
from scheduler.metrics.registry import Metrics
from scheduler.model.pod import BATCHING_ANNOTATION
from scheduler.plugins import names

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.feature_gates import FeatureGates
    from scheduler.framework.profile import PluginFactory, Profile
    from scheduler.framework.status import Status
    from scheduler.model.pod import Pod

__all__ = [
    "ExplainError",
    "InputError",
    "explain",
    "read_cluster",
    "select",
]


class ExplainError(ValueError):
    """The pod cannot be explained (not in the snapshot, bound, another scheduler's)."""


class _EverySchedulerName(set[str]):
    """Keeps every scheduler's pending pods in the snapshot, so that a pod of another
    scheduler is told apart from a missing one (the snapshot reader drops such pods)."""

    def __contains__(self, name: object) -> bool:
        return True


class _Silent:
    """The Reporter of a scheduler that runs no cycle: there is nothing to report."""

    def scheduled(self, pod: Pod, node: str) -> None:
        return None

    def unschedulable(self, pod: Pod, message: str) -> None:
        return None

    def failed(self, pod: Pod, message: str) -> None:
        return None


def read_cluster(path: Path) -> Snapshot:
    """The snapshot in ``path`` with the pending pods of every scheduler; InputError (one
    line naming file, document, object and field) for bad YAML or a bad object."""
    return read_snapshot_file(path, _EverySchedulerName())


def explain(
    snapshot: Snapshot,
    config: SchedulerConfig,
    pod_key: str,
    *,
    mode: BatchingMode = BatchingMode.ANNOTATED,
    profile: str | None = None,
    registry: Mapping[str, PluginFactory] | None = None,
    gates: FeatureGates | None = None,
) -> dict[str, Any]:
    """The JSON-ready report for pending pod ``pod_key`` (``namespace/name``) under its
    schedulerName's profile, or ``profile``; ExplainError when it cannot be explained.
    ``gates`` None: kube's defaults (no gangs)."""
    pod = _find(snapshot, pod_key)
    profiles = [p.scheduler_name for p in config.profiles]
    name = profile or pod.scheduler_name
    if name not in profiles:
        raise ExplainError(_no_profile(pod, profile, profiles))
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=LocalBinder(),
        reporter=_Silent(),
        batching=BatchingSettings(mode=mode),
        metrics=Metrics(),  # a private registry: nothing is served
        seed=0,
        registry=registry,
        gates=gates,
    )
    ours = [p for p in snapshot.pending if p.scheduler_name in scheduler.profiles]
    cluster_snapshot.load(scheduler, dataclasses.replace(snapshot, pending=ours))
    result = ex.explain_pod(scheduler.profiles[name], pod)
    notes = _notes(result, pod, scheduler.profiles[name])
    notes += _binding_notes(scheduler.profiles[name])
    return {
        "pod": pod.key,
        "profile": name,
        "num_nodes": len(result.nodes),
        "feasible": len(result.feasible),
        "best": result.best,
        "pre_filter": {
            **_status(result.pre_filter),
            "narrowed_by": list(result.narrowed_by),
        },
        "nodes": [_node(verdict) for verdict in result.nodes],
        "nominated_pods": {node: list(keys) for node, keys in result.nominated_pods.items()},
        "fit_error": result.fit_error or None,
        "batching": _batching(scheduler.signers[name], pod),
        "gated": _gated(pod),
        "binding_points": _binding_points(scheduler.profiles[name]),
        "group": explain_group(snapshot, config, pod, mode=mode, registry=registry, gates=gates),
        "omitted": 0,
        "notes": notes,
    }


def _binding_points(profile: Profile) -> dict[str, list[str]]:
    """The plugins at each point around the bind, in the order they run."""
    binding = profile.binding
    return {
        "pre_enqueue": [p.name for p in binding.pre_enqueue_plugins],
        "reserve": [p.name for p in binding.reserve_plugins],
        "permit": [p.name for p in binding.permit_plugins],
        "pre_bind": [p.name for p in binding.pre_bind_plugins],
        "post_bind": [p.name for p in binding.post_bind_plugins],
    }


def _binding_notes(profile: Profile) -> list[str]:
    """Out-of-tree plugins past Filter and Score may still hold or refuse the pod."""
    binding = profile.binding
    plugins = [*binding.reserve_plugins, *binding.permit_plugins, *binding.pre_bind_plugins]
    extra = sorted({p.name for p in plugins} - {*names.IN_TREE, *names.GATED})
    if not extra:
        return []
    return [
        f"not run here: Reserve, Permit and PreBind of {', '.join(extra)}, which act on the "
        "chosen node once a pass has picked it (a Permit plugin may hold or reject the pod)"
    ]


def _gated(pod: Pod) -> str | None:
    """Why a gated pod is not attempted at all, as kube's PodScheduled condition says."""
    if not pod.scheduling_gates:
        return None
    return f"{GATED_REASON}: {GATED_MESSAGE} ({', '.join(pod.scheduling_gates)})"


def select(
    report: Mapping[str, Any], *, top: int | None = None, node: str | None = None
) -> dict[str, Any]:
    """The report with only the rows asked for: ``node``'s alone (ExplainError if the
    snapshot has no such node), or the ``top`` best-scored feasible nodes and up to ``top``
    rejected ones (:func:`_sample_rejected`); ``omitted`` counts the nodes left out. The
    counts, ``best`` and the FailedScheduling message still describe every node."""
    nodes: list[dict[str, Any]] = list(report["nodes"])
    if node is not None:
        kept = [verdict for verdict in nodes if verdict["node"] == node]
        if not kept:
            raise ExplainError(
                f"--node: the snapshot has no node named {node!r} ({len(nodes)} nodes)"
            )
    elif top is not None:
        # The report lists the feasible nodes by total (highest first), then the rest.
        feasible = [verdict for verdict in nodes if verdict["feasible"]][:top]
        rejected = _sample_rejected([verdict for verdict in nodes if not verdict["feasible"]], top)
        chosen = {id(verdict) for verdict in (*feasible, *rejected)}
        kept = [verdict for verdict in nodes if id(verdict) in chosen]
    else:
        return dict(report)
    return {**report, "nodes": kept, "omitted": len(nodes) - len(kept)}


def _sample_rejected(rejected: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Up to ``count`` rejected nodes, one per distinct rejection (plugin, code, reasons)
    before a second of any: in a large cluster, an example of every reason the fit error
    counts. In the report's order (by node name)."""
    firsts: dict[tuple[object, ...], dict[str, Any]] = {}
    for verdict in rejected:
        key = (verdict["point"], verdict["plugin"], verdict["code"], tuple(verdict["reasons"]))
        firsts.setdefault(key, verdict)
    chosen = list(firsts.values())[:count]
    taken = {id(verdict) for verdict in chosen}
    chosen += [verdict for verdict in rejected if id(verdict) not in taken][: count - len(chosen)]
    return chosen


def _find(snapshot: Snapshot, key: str) -> Pod:
    namespace, _, name = key.partition("/")
    if not namespace or not name or "/" in name:
        raise ExplainError(f"pod: expected namespace/name, got {key!r}")
    for pod in snapshot.pending:
        if pod.key == key:
            return pod
    for pod in snapshot.running:
        if pod.key == key:
            raise ExplainError(
                f"pod {key} is already bound to node {pod.node_name}: "
                "explain diagnoses pending pods"
            )
    raise ExplainError(
        f"pod {key} is not in the snapshot (or it is Succeeded/Failed): "
        "explain diagnoses pending pods"
    )


def _no_profile(pod: Pod, asked: str | None, profiles: list[str]) -> str:
    served = ", ".join(profiles)
    if asked is not None:
        return f"--profile: no profile is named {asked!r} (profiles: {served})"
    return (
        f"pod {pod.key} has schedulerName {pod.scheduler_name!r}, which no profile serves "
        f"(profiles: {served}); to explain it under one, pass --profile NAME"
    )


def _status(status: Status) -> dict[str, Any]:
    return {
        "code": CODE_LABELS[status.code],
        "plugin": status.plugin or None,
        "reasons": list(status.reasons),
    }


def _node(verdict: ex.NodeVerdict) -> dict[str, Any]:
    return {
        "node": verdict.node,
        "feasible": verdict.feasible,
        "point": verdict.point or None,
        **_status(verdict.status),
        "details": list(verdict.details),
        "total": verdict.total,
        "scores": [
            {
                "plugin": score.plugin,
                "raw": score.raw,
                "normalized": score.normalized,
                "weight": score.weight,
                "weighted": score.weighted,
            }
            for score in verdict.scores
        ],
    }


def _batching(signer: Signer, pod: Pod) -> dict[str, Any]:
    """The Signer's answer under the mode; a pod that did not opt in, signed as opted in."""
    signed = signer.sign(pod)
    report: dict[str, Any] = {
        "mode": str(signer.mode),
        "signable": signed.signature is not None,
        "path": _path(signed.signature),
        "refused_by": signed.refused_by or None,
        "reason": _refusal(signed.refused_by, signer) if signed.signature is None else None,
        "if_opted_in": None,
    }
    if signed.refused_by == OPTED_OUT:
        opted = dataclasses.replace(
            pod, annotations={**pod.annotations, BATCHING_ANNOTATION: "true"}
        )
        again = Signer(signer.profile, BatchingMode.ANNOTATED).sign(opted)
        report["if_opted_in"] = {
            "signable": again.signature is not None,
            "path": _path(again.signature),
            "refused_by": again.refused_by or None,
            "reason": _refusal(again.refused_by, signer) if again.signature is None else None,
        }
    return report


def _path(signature: Signature | None) -> str:
    """How the pod's cycles find a node after its group's first: ``exact`` (the exact
    batch: spread and affinity pods, the full pass's node), ``hint`` (kube's batching), or
    ``full`` (a full pass every time)."""
    if signature is None:
        return "full"
    return "exact" if is_exact(signature) else "hint"


def _refusal(refused_by: str, signer: Signer) -> str:
    """Why a pod has no signature, in a sentence."""
    if refused_by == OPTED_OUT:
        if signer.mode is BatchingMode.OFF:
            return "--batching off: no pod is batched"
        if signer.mode is BatchingMode.ANNOTATED:
            return f'the pod is not annotated {BATCHING_ANNOTATION}: "true"'
        return f'the pod is annotated {BATCHING_ANNOTATION}: "false"'
    if refused_by == "NominatedNode":
        return "the pod has a nominated node: it is never batched (KEP-5598)"
    if refused_by == "ResourceClaims":
        return "the pod uses DRA resource claims"
    if refused_by == VOLUMES:
        return "a PersistentVolumeClaim of the pod is not bound yet (or no VolumeBinding)"
    if refused_by in signer.disabled_by:
        return f"plugin {refused_by} cannot sign any pod: batching is off for the profile"
    return f"plugin {refused_by} cannot sign this pod"


def _notes(result: ex.Explanation, pod: Pod, profile: Profile) -> list[str]:
    """What a full pass does differently from this report, and what was not run."""
    notes: list[str] = []
    if pod.scheduler_name != result.profile:
        notes.append(
            f"explained under profile {result.profile}; the pod's schedulerName is "
            f"{pod.scheduler_name}"
        )
    if pod.deleting:
        notes.append("the pod is being deleted: it is not attempted")
    for node, keys in sorted(result.nominated_pods.items()):
        notes.append(
            f"Filter on {node} counted the pods nominated there as running, as a full pass "
            f"does: {', '.join(keys)}"
        )
    if result.skipped_filters:
        names = ", ".join(result.skipped_filters)
        notes.append(f"Filter not run (PreFilter returned Skip): {names}")
    if result.skipped_scores:
        names = ", ".join(result.skipped_scores)
        notes.append(f"Score not run (PreScore returned Skip): {names}")
    if any(v.status.code is Code.ERROR for v in result.nodes):
        notes.append("a plugin returned Error: a full pass ends there and retries with backoff")
    if result.score_error is not None:
        plugin = result.score_error.plugin or "-"
        notes.append(f"scoring failed ({plugin}): {result.score_error.message()}")
    feasible = len(result.feasible)
    if result.nominated_node:
        notes.append(
            f"the pod is nominated to {result.nominated_node}, which passes Filter: a full "
            "pass takes it first, without scoring (kube's evaluateNominatedNode)"
        )
    elif feasible == 1:
        notes.append("one feasible node: a full pass takes it without scoring")
    if feasible > result.feasible_to_find:
        notes.append(
            f"a full pass stops filtering after {result.feasible_to_find} feasible nodes "
            "(percentageOfNodesToScore), from a rotating start: it scores a subset of these"
        )
    if len(result.best) > 1:
        notes.append(
            f"{len(result.best)} nodes share the highest total: a full pass picks one at random"
        )
    post_filter = ", ".join(p.name for p in profile.post_filter_plugins)
    if feasible == 0 and result.pre_filter.code is not Code.ERROR and post_filter:
        notes.append(f"PostFilter ({post_filter}) is not run by explain; simulate runs it")
    return notes
