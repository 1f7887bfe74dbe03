"""OpportunisticBatch through the real cycle: hints, flush reasons and rescoring."""

from __future__ import annotations

import pytest

from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.ports import BindResult
from scheduler.model.parse import pod_from_raw
from tests.batch_counts import attempts, flushes
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for


def _job(name: str, cpu: str = "3", **kw: object) -> dict[str, object]:
    return make_pod(name, cpu=cpu, memory="100Mi", **kw)  # type: ignore[arg-type]


def test_one_pod_per_node_uses_hints_after_one_full_pass() -> None:
    """Five 3-CPU pods on five 4-CPU nodes: one full pass, four hints, five distinct nodes."""
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(5)])
    for i in range(5):
        scheduler.enqueue(pod_from_raw(_job(f"p{i}")))
    placed = drain(scheduler)
    assert len(set(placed.values())) == 5
    assert None not in placed.values()
    assert scheduler.counts().full_passes == 1
    assert scheduler.counts().batched == 4
    assert scheduler.counts().batched == 4


def test_batching_off_runs_a_full_pass_per_pod() -> None:
    """With --batching off every pod gets a full pass and nothing is hinted."""
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(5)], mode=BatchingMode.OFF)
    for i in range(5):
        scheduler.enqueue(pod_from_raw(_job(f"p{i}")))
    drain(scheduler)
    assert scheduler.counts().full_passes == 5
    assert scheduler.counts().batched == 0
    assert scheduler.batches == {}


def test_annotated_mode_batches_only_annotated_pods() -> None:
    """In annotated mode only pods annotated true share a pass."""
    scheduler, _, _ = scheduler_for(
        [make_node(f"n{i}") for i in range(6)], mode=BatchingMode.ANNOTATED
    )
    for i in range(3):
        scheduler.enqueue(pod_from_raw(_job(f"plain{i}")))
    for i in range(3):
        scheduler.enqueue(pod_from_raw(_job(f"opted{i}", batching=True)))
    drain(scheduler)
    assert scheduler.counts().batched == 2
    assert scheduler.counts().full_passes == 4


def test_exhausted_list_is_no_state_then_unschedulable() -> None:
    """Two nodes, three one-per-node pods: the third finds the list empty, which kube treats
    as no state (a plain no_hint, no flush), and fits nowhere."""
    scheduler, _, reporter = scheduler_for([make_node("a"), make_node("b")])
    for i in range(3):
        scheduler.enqueue(pod_from_raw(_job(f"p{i}")))
    placed = drain(scheduler)
    assert flushes(scheduler) == {}
    assert attempts(scheduler) == {"no_hint": 2, "hint_used": 1}
    assert placed["default/p2"] is None
    assert reporter.unschedulable_messages["default/p2"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


def test_incompatible_signature_flushes() -> None:
    """A pod with other requests cannot use the state left by the previous pod."""
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)])
    scheduler.enqueue(pod_from_raw(_job("a", cpu="3")))
    scheduler.enqueue(pod_from_raw(_job("b", cpu="2")))
    drain(scheduler)
    assert flushes(scheduler).get("pod_incompatible") == 1
    assert scheduler.counts().full_passes == 2


def test_expired_state_is_not_used() -> None:
    """State older than maxBatchAge is thrown away (kube's 500 ms)."""
    clock = FakeClock()
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)], clock=clock)
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    clock.advance(0.6)
    scheduler.enqueue(pod_from_raw(_job("b")))
    drain(scheduler)
    assert flushes(scheduler).get("expired") == 1
    assert scheduler.counts().batched == 0


def test_failed_cycle_flushes_with_pod_skipped() -> None:
    """A pod whose PreFilter fails (conflicting name terms) in between: the next pod flushes
    with pod_skipped, as in kube, which records a cycle only when it places a pod."""
    name_affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["n0"]},
                            {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                        ]
                    }
                ]
            }
        }
    }
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)])
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    scheduler.enqueue(pod_from_raw(_job("lost", affinity=name_affinity)))
    drain(scheduler)
    scheduler.enqueue(pod_from_raw(_job("b")))
    drain(scheduler)
    assert flushes(scheduler) == {"pod_skipped": 1}


def test_missing_last_node_flushes() -> None:
    """The node chosen last was deleted: the state cannot be trusted."""
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)])
    scheduler.enqueue(pod_from_raw(_job("a")))
    placed = drain(scheduler)
    node = placed["default/a"]
    assert node is not None
    scheduler.cluster.remove_node(node)
    scheduler.enqueue(pod_from_raw(_job("b")))
    drain(scheduler)
    assert flushes(scheduler).get("node_missing") == 1


@pytest.mark.parametrize("holds_a_pod", [False, True], ids=["empty", "ghost"])
def test_deleted_next_hint_is_not_used(holds_a_pod: bool) -> None:
    """The next node of the ranked list was deleted: the hint is looked up in the cache, is
    not there (an empty deleted node would pass a recheck against the state's old NodeInfo and
    then fail the assume), and a full pass places the pod: kube's hint_not_used, no flush."""
    # Distinct sizes: no ties, so the top of the list is the next hint.
    scheduler, _, _ = scheduler_for([make_node(f"n{i}", cpu=str(4 + i)) for i in range(3)])
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    state = scheduler.batches["batch-scheduler"].state
    assert state is not None
    state.sort()  # as the next hint will (a state is sorted when a hint is asked)
    next_hint = state.nodes[state.order[-1]].name
    if holds_a_pod:  # the NodeInfo stays a ghost while a pod names it
        scheduler.cluster.add_pod(pod_from_raw(make_pod("x", cpu="100m", node_name=next_hint)))
    scheduler.cluster.remove_node(next_hint)
    scheduler.enqueue(pod_from_raw(_job("b")))
    placed = drain(scheduler)
    assert placed["default/b"] not in (None, next_hint, placed.get("default/a"))
    assert flushes(scheduler) == {}
    assert attempts(scheduler) == {"no_hint": 1, "hint_not_used": 1}
    assert scheduler.counts().divergences == 1  # counted as hint_infeasible
    assert scheduler.counts().full_passes == 2


def test_hint_that_fails_recheck_falls_back_to_full_pass() -> None:
    """A hinted node filled by someone else meanwhile is rechecked, refused, and not used."""
    # Distinct sizes: no ties, so the top of the list is the next hint.
    scheduler, _, _ = scheduler_for([make_node(f"n{i}", cpu=str(4 + i)) for i in range(3)])
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    state = scheduler.batches["batch-scheduler"].state
    assert state is not None
    state.sort()  # as the next hint will (a state is sorted when a hint is asked)
    next_hint = state.nodes[state.order[-1]].name
    scheduler.cluster.add_pod(pod_from_raw(make_pod("intruder", cpu="3", node_name=next_hint)))
    scheduler.enqueue(pod_from_raw(_job("b")))
    placed = drain(scheduler)
    assert placed["default/b"] not in (None, next_hint)
    assert scheduler.counts().divergences == 1  # counted as hint_infeasible
    assert scheduler.counts().full_passes == 2


def test_failed_bind_invalidates_state_and_requeues() -> None:
    """A bind error forgets the assumption, flushes batch state and backs the pod off."""
    scheduler, binder, _ = scheduler_for([make_node(f"n{i}") for i in range(3)], auto_bind=False)
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    request, done = binder.pending.pop()
    binder.finish(request, done, BindResult.ERROR, "boom")
    assert scheduler.cluster.get_pod(request.pod.uid) is None
    assert flushes(scheduler).get("bind_failed") == 1
    assert scheduler.queue.pending()["backoff"] == 1


def test_conflict_is_not_retried() -> None:
    """409 (bound elsewhere) forgets the assumption and drops the pod from the queue."""
    scheduler, binder, _ = scheduler_for([make_node("n0")], auto_bind=False)
    scheduler.enqueue(pod_from_raw(_job("a")))
    drain(scheduler)
    request, done = binder.pending.pop()
    binder.finish(request, done, BindResult.CONFLICT, 'pod a is already assigned to node "n9"')
    assert scheduler.cluster.get_pod(request.pod.uid) is None
    assert len(scheduler.queue) == 0
    assert scheduler.queue.in_flight == 0


def _many_per_node(*, fast: bool) -> tuple[dict[str, str | None], int, int]:
    """60 small pods on 6 nodes of distinct sizes, every hint verified by a full pass."""
    nodes = [make_node(f"n{i}", cpu=str(2 + i), memory=f"{4 + 3 * i}Gi") for i in range(6)]
    scheduler, _, _ = scheduler_for(nodes, fast_rescore=fast, verify_ratio=1.0)
    for i in range(60):
        scheduler.enqueue(pod_from_raw(make_pod(f"w{i:02}", cpu="100m", memory="500Mi")))
    placed = drain(scheduler)
    return placed, scheduler.counts().batched, scheduler.counts().divergences


@pytest.mark.parametrize(
    "fast", [pytest.param(True, id="fast-path"), pytest.param(False, id="full-renormalize")]
)
def test_rescored_hints_are_never_worse_than_a_full_pass(fast: bool) -> None:
    """Many pods per node: every hint scores as high as the best node of a fresh full pass."""
    placed, batched, divergences = _many_per_node(fast=fast)
    assert None not in placed.values()
    assert batched > 40
    assert divergences == 0
