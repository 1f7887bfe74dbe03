"""LocalBinder and attempt_queued: binds end in memory, confirmed in the cache as the watch
would; held binds end when the test says, with the result it says."""

from __future__ import annotations

import pytest

from scheduler.app.local_binder import LocalBinder, LocalVolumeBinder, attempt_queued
from scheduler.cycle.ports import BindResult
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_volumes import pv_from_raw, pvc_from_raw
from scheduler.plugins.volume_binding import VOLUME_BINDER, PodVolumes
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for
from tests.volume_builders import make_pv, make_pvc


def test_auto_binds_are_confirmed_at_once_and_attempts_yield_each_pod() -> None:
    scheduler, binder, _ = scheduler_for([make_node("n0", cpu="2")])
    queued = [pod_from_raw(make_pod(n, cpu=c)) for n, c in (("a", "1"), ("b", "1"), ("big", "8"))]
    for pod in queued:
        scheduler.enqueue(pod)
    attempts = [(pod.key, node) for pod, node in attempt_queued(scheduler)]
    assert attempts == [("default/a", "n0"), ("default/b", "n0"), ("default/big", None)]
    assert binder.pending == []
    assert [scheduler.cluster.is_assumed(pod.uid) for pod in queued] == [False, False, False]
    assert scheduler.cluster.get_pod(queued[2].uid) is None


def test_held_binds_wait_and_end_with_the_result_given() -> None:
    scheduler, binder, _ = scheduler_for([make_node("n0")], auto_bind=False)
    for name in ("ok", "fails"):
        scheduler.enqueue(pod_from_raw(make_pod(name)))
    assert [node for _, node in attempt_queued(scheduler)] == ["n0", "n0"]
    (ok, ok_done), (fails, fails_done) = binder.pending
    assert scheduler.cluster.is_assumed(ok.pod.uid)
    binder.finish(ok, ok_done, BindResult.BOUND)
    binder.finish(fails, fails_done, BindResult.ERROR, "boom")
    assert not scheduler.cluster.is_assumed(ok.pod.uid)
    assert scheduler.cluster.get_pod(ok.pod.uid) is not None
    assert scheduler.cluster.get_pod(fails.pod.uid) is None
    assert scheduler.queue.pending()["backoff"] == 1


def test_the_local_volume_binder_completes_a_plan_as_the_pv_controller_would() -> None:
    """Setting the scheduler lends its profiles the in-memory volume binder, which
    VolumeBinding's PreBind writes through: the plan is bound both ways at once."""
    scheduler, _, _ = scheduler_for([make_node("n0")])
    port = scheduler.profiles["batch-scheduler"].service(VOLUME_BINDER)
    assert isinstance(port, LocalVolumeBinder)
    volumes = scheduler.cluster.volumes
    volumes.set_pv(pv_from_raw(make_pv("pv-kept")))
    volumes.set_pvc(pvc_from_raw(make_pvc("data-kept")))
    pv, pvc = volumes.api_pv("pv-kept"), volumes.api_pvc("default", "data-kept")
    assert pv is not None
    assert pvc is not None
    pod = pod_from_raw(make_pod("kept"))
    assert port.bind_pod_volumes(pod, "n0", PodVolumes(((pv, pvc),), ()), timeout=1.0).is_success
    kept = volumes.api_pvc("default", "data-kept")
    assert kept is not None
    assert (kept.volume_name, kept.fully_bound) == ("pv-kept", True)


def test_a_binder_without_its_scheduler_says_so() -> None:
    scheduler, held, _ = scheduler_for([make_node("n0")], auto_bind=False)
    scheduler.enqueue(pod_from_raw(make_pod("a")))
    list(attempt_queued(scheduler))
    request, done = held.pending[0]
    with pytest.raises(RuntimeError, match="scheduler is not set"):
        LocalBinder().finish(request, done, BindResult.BOUND)
