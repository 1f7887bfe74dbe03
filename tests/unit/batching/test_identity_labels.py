"""StatefulSet replicas batch while no term reads their identity labels (cache/identity_labels.py),
and place exactly as batching off does when a term that reads one appears mid-stream."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.app.local_binder import attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.cache.identity_labels import IdentityLabels
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import Scheduler
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
HOSTNAME = "kubernetes.io/hostname"
Raw = dict[str, Any]


def _nodes() -> list[Raw]:
    # Unequal sizes: LeastAllocated ranks the nodes, so a stale ranking would show.
    return [
        make_node(f"n{i}", cpu=str(4 + 4 * (i % 3)), memory="32Gi", labels={HOSTNAME: f"n{i}"})
        for i in range(8)
    ]


def _replica(index: int, *, app: str = "db", affinity: Raw | None = None) -> Raw:
    name = f"{app}-{index}"
    return make_pod(
        name,
        cpu="500m",
        memory="1Gi",
        labels={"app": app, POD_NAME: name, POD_INDEX: str(index)},
        affinity=affinity,
    )


def _term(values: list[str], *, key: str = POD_NAME) -> Raw:
    return {
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": values}]},
        "topologyKey": HOSTNAME,
    }


def _preferred_anti(values: list[str]) -> Raw:
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": _term(values)}
            ]
        }
    }


def _required_anti(values: list[str], *, key: str = POD_NAME) -> Raw:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term(values, key=key)]
        }
    }


def _signature(scheduler: Scheduler, raw: Raw) -> bytes | None:
    pod = pod_from_raw(raw)
    return scheduler.signers[pod.scheduler_name].sign(pod).signature


def test_replicas_share_a_signature_while_no_term_reads_their_identity() -> None:
    """Two replicas differ only in pod-name and pod-index: one signature, and a Deployment-like
    label they share still splits them from another app."""
    scheduler, _, _ = scheduler_for(_nodes())
    assert _signature(scheduler, _replica(0)) == _signature(scheduler, _replica(1))
    assert _signature(scheduler, _replica(0)) != _signature(scheduler, _replica(0, app="web"))


@pytest.mark.parametrize(
    ("affinity", "splits"),
    [
        pytest.param(_required_anti(["db-3"]), True, id="a required term on pod-name splits"),
        pytest.param(_preferred_anti(["db-3"]), True, id="a preferred term on pod-name splits"),
        pytest.param(_required_anti(["1"], key=POD_INDEX), True, id="a term on pod-index splits"),
        pytest.param(_required_anti(["db"], key="app"), False, id="a term on app does not"),
    ],
)
def test_a_queued_term_on_an_identity_label_splits_the_replicas(
    affinity: Raw, splits: bool
) -> None:
    """Once a queued pod's term names an identity key, the replicas sign apart (the key is
    read from then on); a term on a shared label leaves them together."""
    scheduler, _, _ = scheduler_for(_nodes())
    scheduler.enqueue(pod_from_raw(make_pod("reader", cpu="100m", affinity=affinity)))
    apart = _signature(scheduler, _replica(0)) != _signature(scheduler, _replica(1))
    assert apart is splits


def test_an_assigned_pods_term_makes_the_queued_replicas_sign_apart() -> None:
    """A pod bound by someone else whose term reads pod-name: the queued replicas are signed
    again before the next decision, so no batch state spans two of them."""
    scheduler, _, _ = scheduler_for(_nodes())
    for i in range(3):
        scheduler.enqueue(pod_from_raw(_replica(i)))
    assert len({info.signature for info in scheduler.queue.queued()}) == 1
    other = make_pod("other", cpu="100m", node_name="n1", affinity=_preferred_anti(["db-2"]))
    EventHandlers(scheduler).on_pod(pod_from_raw(other))
    assert scheduler.resign_identity() == 3
    assert len({info.signature for info in scheduler.queue.queued()}) == 3


def test_identity_keys_are_read_for_good() -> None:
    """The set only grows: a key once read stays signed, and generation moves once."""
    labels = IdentityLabels()
    reader = pod_from_raw(make_pod("reader", affinity=_required_anti(["db-0"])))
    assert labels.observe(reader) == {POD_NAME}
    assert labels.observe(reader) == frozenset()
    assert labels.generation == 1
    assert dict(labels.signed({"app": "db", POD_NAME: "db-0", POD_INDEX: "0"})) == {
        "app": "db",
        POD_NAME: "db-0",
    }


def _stream(mode: BatchingMode, *, resign: bool = True) -> tuple[dict[str, str | None], Scheduler]:
    """Replicas 0-11 queued; after the fourth is placed, in the middle of their run, two pods
    bound elsewhere come to prefer avoiding db-6's and db-8's hosts and a queued pod
    requires avoiding db-10's. Every attempt's node, in order."""
    scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=11)
    if not resign:
        scheduler.resign_identity = lambda infos=(): 0  # type: ignore[method-assign]
    for i in range(12):
        scheduler.enqueue(pod_from_raw(_replica(i)))
    placed: dict[str, str | None] = {}
    for pod, node in attempt_queued(scheduler):
        placed[pod.key] = node
        if len(placed) == 4:
            # The hosts a batch ranked first: the two biggest nodes.
            for host, avoided in (("n2", "db-6"), ("n5", "db-8")):
                raw = make_pod(f"avoid-{avoided}", cpu="100m", node_name=host)
                raw["spec"]["affinity"] = _preferred_anti([avoided])
                EventHandlers(scheduler).on_pod(pod_from_raw(raw))
            guard = make_pod("guard", cpu="100m", affinity=_required_anti(["db-10"]))
            scheduler.enqueue(pod_from_raw(guard))
    return placed | drain(scheduler), scheduler


def test_terms_on_pod_name_mid_stream_place_as_batching_off() -> None:
    """The differential: the same stream with batching off and on lands every pod on the same
    node; the replicas placed before the terms appeared were batched (hint path)."""
    placed_off, _ = _stream(BatchingMode.OFF)
    placed_on, on = _stream(BatchingMode.ALL)
    assert placed_on == placed_off
    assert None not in placed_on.values()
    assert on.counts().batched == 3  # db-1..db-3: before the terms, one signature


def test_the_differential_can_fail_without_the_resign() -> None:
    """Not vacuous: with the queued replicas left under their old signatures, the stale batch
    state sends a replica where batching off does not."""
    placed_off, _ = _stream(BatchingMode.OFF)
    placed_stale, _ = _stream(BatchingMode.ALL, resign=False)
    assert placed_stale != placed_off


def test_self_anti_affine_replicas_take_the_exact_path_as_batching_off() -> None:
    """The usual StatefulSet: one replica per host (required anti-affinity on ``app``). The
    replicas share an exact signature now, and land as batching off lands them."""
    raws = [_replica(i, affinity=_required_anti(["db"], key="app")) for i in range(8)]
    placed = []
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=5)
        for raw in raws:
            scheduler.enqueue(pod_from_raw(raw))
        placed.append((drain(scheduler), scheduler))
    (off, _), (on, batched) = placed
    assert on == off
    assert len(set(on.values())) == 8
    assert batched.counts().exact >= 6
