"""Pods the exact batch serves are signed with only the labels some known term reads
(cache/identity_labels.py, ``NarrowedForExact``): kube's scheduler_perf gives every pod a
``signature`` label of its own, which no term reads, and its spread pods then share one
exact signature; pods kube's batch would serve keep kube's signature (every label)."""

from __future__ import annotations

from typing import Any

from scheduler.app.local_binder import attempt_queued
from scheduler.batching.signature import BatchingMode, is_exact
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult
from scheduler.cycle.schedule_one import Scheduler
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
OWN = "signature"
Raw = dict[str, Any]


def _nodes() -> list[Raw]:
    # Unequal sizes, three zones: the resource scorers and the spread both rank the nodes.
    return [
        make_node(
            f"n{i}",
            cpu=str(4 + 4 * (i % 3)),
            memory="32Gi",
            labels={ZONE: f"z{i % 3}", HOSTNAME: f"n{i}"},
        )
        for i in range(9)
    ]


def _spread(index: int) -> Raw:
    """kube's pod-with-topology-spreading.yaml, with the label scheduler_perf adds."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ]
    return make_pod(
        f"spread-{index}",
        cpu="500m",
        memory="1Gi",
        labels={"color": "blue", OWN: f"signature-label-{index}"},
        topology_spread=spread,
    )


def _plain(index: int) -> Raw:
    return make_pod(f"plain-{index}", cpu="500m", labels={OWN: f"signature-label-{index}"})


def _signature(scheduler: Scheduler, raw: Raw) -> bytes | None:
    pod = pod_from_raw(raw)
    return scheduler.signers[pod.scheduler_name].sign(pod).signature


def _avoid(value: str) -> Raw:
    """Preferred anti-affinity to the pod whose own label is ``value``."""
    term = {"labelSelector": {"matchLabels": {OWN: value}}, "topologyKey": HOSTNAME}
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": term}
            ]
        }
    }


def test_spread_pods_with_labels_of_their_own_share_an_exact_signature() -> None:
    """Exact pods differing in an unread label sign alike; kube's batch still tells plain
    pods apart by it, as kube's signature does."""
    scheduler, _, _ = scheduler_for(_nodes())
    one, two = _signature(scheduler, _spread(0)), _signature(scheduler, _spread(1))
    assert one is not None
    assert is_exact(one)
    assert one == two
    plain = _signature(scheduler, _plain(0))
    assert plain is not None
    assert not is_exact(plain)
    assert plain != _signature(scheduler, _plain(1))


def test_a_term_on_the_label_splits_the_exact_signature() -> None:
    """Once a queued pod's term names the label, spread pods that differ in it sign apart."""
    scheduler, _, _ = scheduler_for(_nodes())
    scheduler.enqueue(pod_from_raw(make_pod("reader", cpu="100m", affinity=_avoid("x"))))
    assert _signature(scheduler, _spread(0)) != _signature(scheduler, _spread(1))


def test_spread_pods_with_labels_of_their_own_take_the_exact_path_as_batching_off() -> None:
    """The differential: every pod on the node batching off gives it, all but the first
    two (the full pass, then the state's build) from the exact batch."""
    raws = [_spread(i) for i in range(24)]
    placed = []
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=3)
        for raw in raws:
            scheduler.enqueue(pod_from_raw(raw))
        placed.append((drain(scheduler), scheduler))
    (off, _), (on, batched) = placed
    assert on == off
    assert None not in on.values()
    assert batched.counts().exact == 23


def _stream(mode: BatchingMode, *, resign: bool = True) -> tuple[dict[str, str | None], Scheduler]:
    """Spread pods 0-17 queued; after the fourth is placed, pods bound elsewhere come to
    prefer avoiding spread-6 and spread-9 on the nodes batching off gives them (the label is
    read from then on). Every attempt's node, in order."""
    scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=11)
    if not resign:
        scheduler.resign_identity = lambda infos=(): 0  # type: ignore[method-assign]
    for i in range(18):
        scheduler.enqueue(pod_from_raw(_spread(i)))
    placed: dict[str, str | None] = {}
    for pod, node in attempt_queued(scheduler):
        placed[pod.key] = node
        if len(placed) == 4:
            for host, avoided in (("n5", "signature-label-6"), ("n2", "signature-label-9")):
                raw = make_pod(f"avoid-{avoided}", cpu="100m", node_name=host)
                raw["spec"]["affinity"] = _avoid(avoided)
                EventHandlers(scheduler).on_pod(pod_from_raw(raw))
    return placed | drain(scheduler), scheduler


def test_a_term_on_the_label_mid_stream_places_as_batching_off() -> None:
    """Terms that read the label arrive in the middle: the queued pods are signed again and
    every pod lands where batching off lands it."""
    placed_off, _ = _stream(BatchingMode.OFF)
    placed_on, on = _stream(BatchingMode.ALL)
    assert placed_on == placed_off
    assert None not in placed_on.values()
    # Exact: spread-2..4, before the terms; after them every pod signs apart (full passes).
    assert on.counts().exact == 3


def test_the_mid_stream_differential_can_fail_without_the_resign() -> None:
    """Not vacuous: left under their old signature, the pods are placed from a state built
    for a pod no term avoids, and spread-6 lands on the node it should have avoided."""
    placed_off, _ = _stream(BatchingMode.OFF)
    placed_stale, _ = _stream(BatchingMode.ALL, resign=False)
    assert placed_stale != placed_off


def _canary_stream(mode: BatchingMode) -> tuple[dict[str, str | None], Scheduler]:
    """Spread pods, the first two with ``canary: "true"`` and the rest without (one exact
    signature while no term reads ``canary``: the state is built from a canary). Then a pod
    bound elsewhere, in zone z0, requires that no pod without ``canary`` share its zone."""
    scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=5)
    raws = [_spread(i) for i in range(9)]
    for raw in raws[:2]:
        raw["metadata"]["labels"]["canary"] = "true"
    for raw in raws[:2]:
        scheduler.enqueue(pod_from_raw(raw))
    placed = drain(scheduler)
    term = {
        "labelSelector": {"matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]},
        "topologyKey": ZONE,
    }
    guard = make_pod("guard", cpu="100m", node_name="n0")  # n0 is in zone z0
    guard["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    EventHandlers(scheduler).on_pod(pod_from_raw(guard))
    for raw in raws[2:]:
        scheduler.enqueue(pod_from_raw(raw))
    return placed | drain(scheduler), scheduler


def test_a_term_on_a_label_only_some_pods_of_a_signature_carry_drops_the_state() -> None:
    """The pods without the label keep their signature when it comes to be read, but the
    state was built from a pod with it: it is dropped, so no pod without ``canary`` lands in
    the guard's zone, and every pod lands where batching off puts it."""
    placed_off, _ = _canary_stream(BatchingMode.OFF)
    placed_on, _ = _canary_stream(BatchingMode.ALL)
    assert placed_on == placed_off
    zone_of = {f"n{i}": f"z{i % 3}" for i in range(9)}
    for i in range(2, 9):
        node = placed_on[f"default/spread-{i}"]
        assert node is None or zone_of[node] != "z0"


def test_a_pod_out_of_the_queue_when_its_label_comes_to_be_read_is_signed_again() -> None:
    """spread-0's bind is in flight when a term comes to read its own label, so the queue's
    re-sign cannot reach it; its bind fails and it comes back: it is signed again (its own
    label now in its exact signature) before it is decided again."""
    clock = FakeClock()
    scheduler, binder, _ = scheduler_for(_nodes(), auto_bind=False, clock=clock)
    scheduler.enqueue(pod_from_raw(_spread(0)))
    list(attempt_queued(scheduler))
    ((request, done),) = binder.pending
    info = request.info
    narrowed = info.signature
    reader = make_pod("reader", cpu="100m", node_name="n1", affinity=_avoid("signature-label-0"))
    EventHandlers(scheduler).on_pod(pod_from_raw(reader))
    scheduler.enqueue(pod_from_raw(_spread(1)))
    list(attempt_queued(scheduler))  # spread-1's cycle signs the queue again, not spread-0
    assert info.signature == narrowed
    binder.finish(request, done, BindResult.ERROR, "connection refused")
    clock.advance(60)
    scheduler.queue.flush()  # its backoff is over
    list(attempt_queued(scheduler))
    assert info.signature != narrowed
    assert info.signature == _signature(scheduler, _spread(0))


def test_a_pod_that_missed_a_re_sign_is_signed_again_after_a_later_one() -> None:
    """As above, but a second term, on a key spread-0 does not carry, comes before spread-0
    is decided again: the re-sign that follows still signs spread-0 again (it missed the
    first one), not only the queued pods that carry the second key."""
    clock = FakeClock()
    scheduler, binder, _ = scheduler_for(_nodes(), auto_bind=False, clock=clock)
    scheduler.enqueue(pod_from_raw(_spread(0)))
    list(attempt_queued(scheduler))
    ((request, done),) = binder.pending
    info = request.info
    narrowed = info.signature
    reader = make_pod("reader", cpu="100m", node_name="n1", affinity=_avoid("signature-label-0"))
    EventHandlers(scheduler).on_pod(pod_from_raw(reader))
    scheduler.enqueue(pod_from_raw(_spread(1)))
    list(attempt_queued(scheduler))  # the first re-sign, spread-0 out of the queue
    binder.finish(request, done, BindResult.ERROR, "connection refused")
    term = {"labelSelector": {"matchLabels": {"unrelated": "x"}}, "topologyKey": HOSTNAME}
    other = make_pod("other", cpu="100m", node_name="n2")
    other["spec"]["affinity"] = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term}
            ]
        }
    }
    EventHandlers(scheduler).on_pod(pod_from_raw(other))
    clock.advance(60)
    scheduler.queue.flush()
    list(attempt_queued(scheduler))
    assert info.signature != narrowed
    assert info.signature == _signature(scheduler, _spread(0))
